// Gradient synchronization and parameter sharding of data parallelism, one implementation per
// sharding stage (ZeRO, Rajbhandari et al. 2020; FSDP, Zhao et al. 2023), driven by the plan's
// shard units and buckets (ShardLayout) — never re-derived. plan.proto's Sharding message states
// what each stage MUST do; this is that, over the executor's communicators.
#ifndef ACCEL_EXECUTOR_TRAIN_GRAD_SYNC_H_
#define ACCEL_EXECUTOR_TRAIN_GRAD_SYNC_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/communicator.h"
#include "executor/models/unit_hooks.h"
#include "executor/train/replicated_grads.h"
#include "executor/train/shard_layout.h"

namespace accel::exec {

// What the last synchronized backward did, for metrics and overlap checks.
struct GradSyncStats {
  // Buckets reduced (all-reduce or reduce-scatter), summed over the step's micro-steps.
  int64_t buckets = 0;
  // Of those, launched from a gradient hook, i.e. while backward still ran.
  int64_t launched_during_backward = 0;
  // Seconds from the start of the last micro-step's backward to its first launch and to its end.
  double first_launch_seconds = 0;
  double backward_seconds = 0;
  // Seconds spent waiting for outstanding collectives (all micro-steps): in backward, before a
  // new bucket buffer while two are live, and after backward ended.
  double wait_seconds = 0;
  // Most reduce-bucket buffers live at once in one micro-step (at most two: see
  // BucketedGradSync), the largest over the step's micro-steps.
  int64_t max_live_buckets = 0;
  // Stage 3: unit all-gathers issued (forward, backward and prefetch), summed over micro-steps.
  int64_t unit_gathers = 0;
};

// The data-parallel process groups of one rank; a null member means that axis has size 1.
struct DataParallelGroups {
  std::shared_ptr<Communicator> dp;            // dp_replicate × dp_shard: all-reduce, loss
  std::shared_ptr<Communicator> dp_shard;      // reduce-scatter and all-gather (stages 1–3)
  std::shared_ptr<Communicator> dp_replicate;  // hybrid: all-reduce of the reduced shards
  // Mixture of experts with expert parallelism: "ep_dp", the ranks of a dp_shard group that hold
  // the same routed experts, over which those are reduced and sharded (ShardLayout::
  // expert_degree); and "ep", over which the owners' sums of squares of routed experts' whole
  // gradients are added at stage 0. Null without expert parallelism (routed experts then follow
  // dp and dp_shard).
  std::shared_ptr<Communicator> ep_dp;
  std::shared_ptr<Communicator> ep;
  // Not data parallel: the tensor-parallel group, over which GradNormSquared adds the squares of
  // tp-split parameters (ParamSlot::tp_split).
  std::shared_ptr<Communicator> tp;
  // Not data parallel either: the groups the trainer sums tp-replicated parameters' gradients
  // over once per step, after the data-parallel reduction (executor/train/replicated_grads.h).
  ReplicatedGradGroups replicated;
};

// Dtypes of the synchronization.
struct GradSyncOptions {
  // Dtype of bucket buffers and of the collectives on them (Precision.reduce_dtype).
  at::ScalarType reduce_dtype = at::kFloat;
  // True when the model ties its output head to the token embedding, which the embeddings unit
  // holds: stage 3 then keeps that unit gathered from its forward until its backward.
  bool tied_embeddings = false;
  // Sharding.offload "optimizer" or "all" (ZeRO-Offload, Ren et al. 2021): the fp32 tensors the
  // optimizer updates (OptimizerParams: master copies or owned ranges) and their gradients live
  // in host memory, pinned when the parameters are on CUDA, and the optimizer steps there;
  // reduced gradients are copied to the host and updated values back before they are published.
  // Stage 3 holds parameters only as those host ranges, so "all" needs nothing more; parameters
  // kept whole (persistent) stay on the device. On a CPU device the copies stay in the same
  // memory but take the same path.
  bool offload_optimizer = false;
};

// One rank's side of data parallelism for one model replica. Call order per optimizer step:
// BeginMicroStep / forward / backward / EndMicroStep for each micro-step, then GradNormSquared,
// the optimizer's step on OptimizerParams(), then AfterOptimizerStep.
class GradSync {
 public:
  virtual ~GradSync() = default;

  // The fp32 tensors the optimizer updates, one per module parameter (layout order): the
  // parameter itself (stage 0, fp32), a master copy (16-bit parameters), or the 1-D flat range
  // this rank owns (stages 1–3, ParamSlot::owned_begin/end). Their grad() holds the averaged
  // gradient after the last micro-step's EndMicroStep.
  virtual const std::vector<at::Tensor>& OptimizerParams() const = 0;

  // Arms the hooks for one micro-step; last marks the last micro-step of the optimizer step.
  virtual void BeginMicroStep(bool last) = 0;

  // After backward: launches what the hooks did not, waits for every collective and fills the
  // optimizer gradients (last micro-step; stages 2–3 accumulate every micro-step).
  // Errors: those of the communicators (timeouts, peer failures), Internal for LibTorch errors.
  virtual absl::Status EndMicroStep() = 0;

  // Σ g² over every element of the averaged gradient of this pipeline stage, in fp64, identical
  // on every rank of the stage (the owners' partial sums are all-reduced over dp_shard;
  // tp-split parameters' over tp). A tied copy (ParamSlot::tied_to) is left out: its original
  // on the first stage counts it. The caller adds the stages' sums over pp.
  virtual absl::StatusOr<double> GradNormSquared() = 0;

  // After the optimizer updated OptimizerParams(): makes the module's parameters match (master
  // copy cast back; stages 1–2 all-gather each unit; stage 3 keeps shards until the next use).
  virtual absl::Status AfterOptimizerStep() = 0;

  // Stage 3: gathers every unit whole so the module can run without hooks (sampling); the next
  // training forward frees them again. No-op for other stages.
  virtual absl::Status GatherAll() = 0;

  // Hooks the model must call (stage 3), else nullptr.
  virtual UnitHooks* unit_hooks() = 0;

  // The layout this synchronization runs.
  virtual const ShardLayout& layout() const = 0;

  // Statistics of the last optimizer step.
  virtual const GradSyncStats& stats() const = 0;
};

// Builds the implementation of layout.stage for `params` (the module's parameters in
// named_parameters() order, matching layout.params). groups must hold dp when its size is > 1
// and dp_shard when layout.degree > 1. Registers gradient hooks on the parameters (they stay
// registered but inert after the GradSync is destroyed). Stage 3 frees the parameters it does
// not own. Errors: InvalidArgument for a layout/parameter mismatch or missing group.
absl::StatusOr<std::unique_ptr<GradSync>> MakeGradSync(std::vector<at::Tensor> params,
                                                       ShardLayout layout,
                                                       DataParallelGroups groups,
                                                       GradSyncOptions options = {});

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_GRAD_SYNC_H_
