// One rank of `accel run`: builds the process groups, the model, the data and the Trainer from
// the plan and runs the training loop with checkpoints and metrics. The body of
// `accel worker --plan FILE`. This header is torch-free (LibTorch stays in the .cc files).
#ifndef ACCEL_EXECUTOR_WORKER_H_
#define ACCEL_EXECUTOR_WORKER_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "launcher/plan_support.h"
#include "launcher/worker_env.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// How a worker runs, beyond the plan and its rank.
struct WorkerOptions {
  // Set (e.g. by a SIGTERM/SIGINT handler) to stop at the next step boundary. All ranks agree on
  // the step: the flag is combined over the world group after every step. Null: never stops early.
  const std::atomic<bool>* stop = nullptr;
  // Bound on every collective (RendezvousOptions::timeout) when the plan has none
  // (topology.collective_timeout_seconds 0, plans older than the field); the plan's value wins.
  // A dead or hung peer surfaces as an error after at most this long instead of a hang.
  std::chrono::milliseconds collective_timeout{std::chrono::minutes(5)};
  // Test hook (ACCEL_TEST_CRASH_AT_STEP / ACCEL_TEST_CRASH_RANK): rank crash_rank kills itself
  // with SIGKILL right after completing optimizer step crash_at_step (1-based count of updates).
  // -1: disabled.
  int64_t crash_at_step = -1;
  int crash_rank = -1;
  // Test hook (ACCEL_TEST_CRASH_IN_CHECKPOINT): rank crash_rank kills itself with SIGKILL while
  // the sharded checkpoint of this step is being written (its own shard file written, the
  // checkpoint not yet published). Single-file checkpoints (stage 0, fp32) ignore it.
  int64_t crash_in_checkpoint_step = -1;
};

// Reads the test hook variables ACCEL_TEST_CRASH_AT_STEP=N, ACCEL_TEST_CRASH_IN_CHECKPOINT=N and
// ACCEL_TEST_CRASH_RANK=R (default rank 0) into options. They act on the first attempt only: a
// worker restarted by `accel run --max-restarts` (ACCEL_RESTART_COUNT > 0) ignores them. For the
// launcher's fault tests only: a production job never sets them. Errors: InvalidArgument for
// values that are not integers.
absl::Status ReadWorkerTestHooks(const EnvLookup& lookup, WorkerOptions& options);

// The outcome of a worker that returned without error.
struct WorkerResult {
  // Optimizer steps completed (including those restored from a checkpoint).
  int64_t steps_done = 0;
  // True when it stopped early because options.stop was set (on any rank).
  bool stopped = false;
};

// Runs rank env.rank of plan to completion (or to a requested stop):
// 1. sets env.num_threads intra-op threads; checks env against plan (world size, placement),
//    that the plan verifies (ir::VerifyPlan) and that this executor runs it
//    (ExecutorSupportIssues);
// 2. rendezvous at env.master_addr:env.master_port (global rank 0 hosts the c10d TCPStore; a
//    store of another job, by env.job_token, is refused), bounded by CollectiveTimeout; the
//    world group and every process-group set of the plan, by name (Gloo on CPU, NCCL on CUDA);
// 3. builds plan.model (identically initialized from training.seed on every rank), reads
//    plan.data (text bytes or token file) into this rank's data-parallel shard;
// 4. resumes from the newest valid checkpoint under the checkpoint directory when
//    checkpoint.resume is "auto" (plan.checkpoint.dir, or env.run_dir/checkpoints when empty);
// 5. trains plan.batch.steps updates of grad_accum_steps micro-batches each; rank 0 prints a
//    progress line every training.log_every_steps updates, appends one JSON object per update to
//    env.run_dir/metrics.jsonl (step, loss, lr, grad_norm, tokens, step_seconds,
//    tokens_per_second, since_launch_seconds, unix_time), writes checkpoints every checkpoint.every_steps
//    updates and at the end (also when stopped early; sharded state is written by every rank of
//    the first replica, see Trainer::ShardedCheckpoint), and prints training.sample_tokens sampled
//    tokens at the end, decoded with the plan's tokenizer file (or shown as bytes).
// Errors: InvalidArgument for a plan this worker cannot run or that does not match env;
// Unavailable/DeadlineExceeded from the rendezvous or collectives (a peer died or hung);
// PermissionDenied when the store belongs to another job;
// NotFound/InvalidArgument from the data; Internal for LibTorch failures and I/O errors.
absl::StatusOr<WorkerResult> RunWorker(const ir::Plan& plan, const WorkerEnv& env,
                                       const WorkerOptions& options = {});

// The bound on every collective: plan.topology().collective_timeout_seconds
// when > 0, otherwise options.collective_timeout.
std::chrono::milliseconds CollectiveTimeout(const ir::Plan& plan, const WorkerOptions& options);

// True when this build's LibTorch has CUDA and at least one device is visible.
bool ExecutorHasCuda();

// What this build of the executor can run (plan_support.h): CUDA when LibTorch has it and a
// device is visible; SDPA when LibTorch is 2.0 or later.
ExecutorCapabilities ExecutorCapabilitiesOfThisBuild();

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_WORKER_H_
