// Gradients of parameters that several tensor-parallel ranks hold whole but compute from
// different data, summed over those ranks once per optimizer step:
// - sequence parallelism's tp-replicated parameters (norms, row-parallel biases, learned
//   positions: ParamSlot::tp_split false) see only their rank's sequence shard, so each rank
//   holds a partial gradient (Korthikanti et al. 2022 §4.2.2);
// - parameters whose outputs meet tp-partial sums (ParamSlot::tp_partial_grad: the MoE router
//   and shared-expert gate) get from each rank only its part;
// - a key/value head held by R ranks (ParamSlot::tp_replicas, ir::Parameter.tp_replicas) gets
//   from each only the part of that rank's query heads.
// As Megatron-LM's finalize_model_grads (_allreduce_non_tensor_model_parallel_grads) does, the
// sum runs after the data-parallel reduction, on the reduced gradients, as one coalesced
// all-reduce per group: sums over tp and over dp commute, so one collective per step replaces
// one per parameter and micro-step.
#ifndef ACCEL_EXECUTOR_TRAIN_REPLICATED_GRADS_H_
#define ACCEL_EXECUTOR_TRAIN_REPLICATED_GRADS_H_

#include <ATen/core/Tensor.h>

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "executor/communicator.h"
#include "executor/train/shard_layout.h"

namespace accel::exec {

// The groups of the sums; a null group means nothing is summed over it.
struct ReplicatedGradGroups {
  // The tp group under sequence parallelism (ir::Mesh.sequence_parallel), else null.
  std::shared_ptr<Communicator> sequence;
  // The plan's "tp_kv" group (ir::Model.kv_head_replicas > 1), else null.
  std::shared_ptr<Communicator> kv;
  // The tp group without sequence parallelism: parameters with a tp-partial gradient
  // (ParamSlot::tp_partial_grad, the MoE router) are summed over it; null otherwise (with
  // sequence parallelism `sequence` sums them with every other replicated parameter).
  std::shared_ptr<Communicator> partial;
  // The plan's "cp" group (context parallelism), else null: every gradient is averaged over it,
  // each cp rank's loss being the mean over its own chunks of the same sequences (plan.proto
  // Sharding), in place, one all-reduce per optimizer tensor, so that no buffer of the
  // gradients' size is made.
  std::shared_ptr<Communicator> context;
};

// Checks that every parameter held by R > 1 tp ranks has a kv group of R ranks. Errors:
// InvalidArgument "parameter NAME is replicated on R tensor-parallel ranks, but the tp_kv group
// has N".
absl::Status CheckReplicatedGradGroups(const ShardLayout& layout, const ReplicatedGradGroups& groups);

// Adds, over each group, the gradients (fp32, possibly in host memory) of optimizer_params — the
// optimizer's tensors in layout.params order (GradSync::OptimizerParams: whole parameters or the
// flat ranges this rank owns, which are the same ranges on every rank of a tp group) — of the
// parameters summed over that group: one all-reduce per non-null group and step, of their
// concatenation, on `device` (where the communicators run). An undefined gradient is zero. The
// transient: that concatenation, once more on the device when it is not the gradients' memory.
// Errors: the communicator's; Internal for LibTorch failures.
absl::Status SumReplicatedGradients(const ShardLayout& layout, const std::vector<at::Tensor>& optimizer_params,
                                    const ReplicatedGradGroups& groups, const at::Device& device);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_REPLICATED_GRADS_H_
