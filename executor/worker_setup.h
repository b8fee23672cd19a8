// The setup phase of `accel worker` (RunWorker, executor/worker.h): the checks that the plan fits
// this process and this executor, then the pieces of one rank built from the plan: its process
// groups, its tensor-parallel group, its model and its data-parallel share of the data.
#ifndef ACCEL_EXECUTOR_WORKER_SETUP_H_
#define ACCEL_EXECUTOR_WORKER_SETUP_H_

#include <c10/core/Device.h>

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "data/window_dataset.h"
#include "executor/comm_timer.h"
#include "executor/communicator.h"
#include "executor/models/causal_lm.h"
#include "executor/models/model_config.h"
#include "executor/models/tensor_parallel.h"
#include "executor/process_groups.h"
#include "executor/worker.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// That env is the process the plan places at env.rank: the plan's ir_version is this executor's,
// its world size is env.world_size (topology and ranks alike) and its placement of env.rank
// names env.node_rank and env.local_rank. Checked before anyone opens a socket. Errors:
// InvalidArgument naming both values.
absl::Status CheckPlanMatchesEnv(const ir::Plan& plan, const WorkerEnv& env);

// A worker started by hand must not silently run something else: the plan must verify
// (ir::VerifyPlan) and be within what this executor runs (ExecutorSupportIssues; the launcher
// refused the same with located diagnostics). Errors: InvalidArgument joining the problems.
absl::Status CheckPlanRunnable(const ir::Plan& plan);

// The rank's communicators. Destroyed in reverse member order: the groups before the world
// before the rendezvous that created them.
struct WorkerGroups {
  std::unique_ptr<Rendezvous> rendezvous;
  std::shared_ptr<Communicator> world;
  ProcessGroups groups;
};

// Rendezvous at env.master_addr:env.master_port (global rank 0 hosts the store), bounded by
// CollectiveTimeout; the world group (NCCL when the plan's job.backend says so, else Gloo), a
// check that every rank holds the same plan, and every process-group set of the plan. Errors:
// Unavailable/DeadlineExceeded from the rendezvous, PermissionDenied when the store belongs to
// another job (env.job_token), those of CheckSamePlanOnEveryRank; InvalidArgument when the
// plan's dp groups do not have batch.data_parallel_size ranks.
absl::StatusOr<WorkerGroups> JoinGroups(const ir::Plan& plan, const WorkerEnv& env,
                                        const WorkerOptions& options, const c10::Device& device);

// The model's tensor-parallel group and the plan's "tp_kv" group (null without replicated
// key/value heads), both wrapped to add their collectives' time to `timer` (null, and nothing
// wrapped, without tensor parallelism) for metrics.jsonl and the summary.
struct TimedTensorParallel {
  TensorParallel tp;
  std::shared_ptr<Communicator> tp_kv;
  std::shared_ptr<CollectiveTimer> timer;
};

// The plan's "tp" group (with mesh.sequence_parallel) and "tp_kv" group of this rank, timed.
TimedTensorParallel TimeTensorParallel(const ir::Plan& plan, const ProcessGroups& groups);

// Rank `rank`'s pipeline stage of the model of `config`, initialized from training.seed
// identically on every rank, moved to `device` in precision.param_dtype (fp32 when unset).
// Hugging Face weights (model.init_from) are read later, by the trainer, which knows the ranges
// this rank owns. ep: the plan's "ep" group (null without expert parallelism). Errors: those
// of BuildCausalLm.
absl::StatusOr<std::shared_ptr<CausalLm>> BuildRankModel(const ir::Plan& plan, int rank,
                                                         const ModelConfig& config,
                                                         const TensorParallel& tp,
                                                         const c10::Device& device,
                                                         std::shared_ptr<Communicator> ep = nullptr);

// The plan's data as windows of batch.seq_len tokens, this rank's data-parallel share (by its
// "dp" group), shuffled per data.shuffle with training.seed; token_count: the tokens read.
struct RankData {
  size_t token_count = 0;
  std::unique_ptr<WindowDataset> dataset;
};

// Reads plan.data (text bytes, text through the plan's tokenizer, or a token file) into this
// rank's RankData. Errors: those of LoadPlanTokens (NotFound, InvalidArgument) and
// WindowDataset::Create.
absl::StatusOr<RankData> LoadRankData(const ir::Plan& plan, const ProcessGroups& groups);

// The rank's setup line: rank, node and local rank, backend, device and threads, the model and
// its parameter count, the data and its windows.
void LogRankSetup(const ir::Plan& plan, const WorkerEnv& env, const Communicator& world,
                  const c10::Device& device, const RankData& data);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_WORKER_SETUP_H_
