// The Trainer of one rank of `accel worker`, built over the plan's sharding of its pipeline
// stage: the parameter layout, the data-parallel and tensor-parallel groups, gradient sync
// options and, with pipeline stages, the schedule.
#ifndef ACCEL_EXECUTOR_PLAN_TRAINER_H_
#define ACCEL_EXECUTOR_PLAN_TRAINER_H_

#include <memory>

#include "absl/status/statusor.h"
#include "executor/communicator.h"
#include "executor/models/causal_lm.h"
#include "executor/models/tensor_parallel.h"
#include "executor/process_groups.h"
#include "executor/train/trainer.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// The plan's context parallelism (ir::Mesh.context_parallel) over `group`, the rank's "cp" group
// (null, or of size 1: none). The model's attention and the trainer's averaging over cp follow it
// (CausalLm::set_context_parallel, ReplicatedGradGroups::context). Errors: InvalidArgument when
// the plan lays out chunks for another number of ranks than the group has.
absl::StatusOr<ContextParallel> ContextParallelFromPlan(const ir::Plan& plan, std::shared_ptr<Communicator> group);

// The Trainer of rank `rank` for `model` (built for the rank's stage) with `options`
// (TrainerOptionsFromPlan): recompute modules from training.recompute_modules, the ShardLayout
// of plan.sharding for the rank's stage and dp_shard rank, reduce dtype from
// precision.reduce_dtype (fp32 when unset), tied embeddings synced as one unless pipelined,
// optimizer offload from sharding.offload, and the pipeline context when there are stages. tp:
// the model's (timed) tp group; tp_kv: the plan's "tp_kv" group (timed), null without replicated
// key/value heads. Errors: InvalidArgument when the model's tensor-parallel layers split a
// parameter otherwise than the plan says (ir::Parameter.tp_dim, tp_parts, tp_replicas: the plan
// is the contract the checkpoints and estimates use), and those of ShardLayout::FromPlan,
// Trainer::Create and the pipeline setup.
absl::StatusOr<std::unique_ptr<Trainer>> CreateTrainer(const ir::Plan& plan,
                                                       const std::shared_ptr<CausalLm>& model,
                                                       const TrainerOptions& options,
                                                       const ProcessGroups& groups, int rank,
                                                       const TensorParallel& tp,
                                                       std::shared_ptr<Communicator> tp_kv);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_PLAN_TRAINER_H_
