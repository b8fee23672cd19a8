// `accel run` after the plan is accepted: who runs on this node, the run directory, and the
// workers' supervision with the restart policy. Torch-free; the cli compiles and checks the plan.
#ifndef ACCEL_LAUNCHER_RUN_JOB_H_
#define ACCEL_LAUNCHER_RUN_JOB_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "ir/plan.pb.h"
#include "launcher/plan_support.h"
#include "launcher/worker_env.h"

namespace accel::exec {

// How to launch (the flags of `accel run`).
struct RunOptions {
  // Where plan.binpb, plan.txt, metrics.jsonl and rank<R>.log go; "" means runs/<job name>
  // under the working directory.
  std::string run_dir;
  // This node's index for a multi-node job started by hand; nullopt otherwise.
  std::optional<int> node_rank;
  // Host and port of the c10d TCPStore (global rank 0's node). Defaults: env MASTER_ADDR /
  // MASTER_PORT; single node: 127.0.0.1 and a free port; SLURM: see ResolveLaunchLayout.
  std::string master_addr;
  std::optional<int> master_port;
  // Intra-op threads per worker; 0 means the usable CPUs divided by the local workers (≥ 1).
  int threads_per_worker = 0;
  // Seconds workers get to stop after SIGTERM before SIGKILL.
  double grace_period_seconds = 5.0;
  // Ignore SLURM_* variables (e.g. `accel run` inside an sbatch script without srun).
  bool no_slurm = false;
  // The worker binary; "" means this executable (/proc/self/exe). Tests set it.
  std::string worker_executable;
  // After a worker fails (not after SIGINT/SIGTERM), start all local workers again, at most this
  // many times; each attempt resumes from the newest intact checkpoint (checkpoint.resume auto).
  int max_restarts = 0;
  // Reports the pre-launch errors and warnings about spec fields (checkpoint.dir, the checkpoint
  // resume would continue); the cli locates them in the job file (cli/pre_launch_checks.h). Unset,
  // each prints as "error[CODE]: FIELD: MESSAGE" (warning[CODE] for warnings).
  std::function<void(const std::vector<PlanIssue>& issues)> report_issues;
};

// Runs plan's workers on this node: resolves the launch layout (flags, then MASTER_ADDR /
// MASTER_PORT and SLURM_* from env); before any work checks and creates the run directory and the
// checkpoint directory (launcher/output_dirs.h), locks both for the job's lifetime on the node of
// rank 0 (launcher/dir_lock.h), and decides what resume continues (launcher/checkpoint_dir_check.h,
// launcher/resume_check.h), which sets the run id the workers record (ACCEL_RUN_ID: the resumed
// checkpoint's, or a new one); then writes plan.binpb and plan.txt (summary) into the run
// directory, starts one `WORKER worker --plan RUN_DIR/plan.binpb` per local rank and supervises
// them (ProcessSupervisor), echoing the first local rank's output to out. After a worker failure
// it restarts all local workers up to max_restarts times, keeping each failed attempt's logs as
// rank<R>.attempt<K>.log. launch_unix_ns: when `accel run` started (workers report start-up).
// Returns a common/exit_codes.h code: kExitOk when every worker finished; kExitInvalid when the
// checkpoint directory is unusable, holds another run's checkpoints this run would mix with, or
// holds a checkpoint that cannot resume under plan (issues through report_issues); kExitUsage for
// a bad launch layout or environment (message on err); kExitRuntime when the run directory cannot
// be created or written, a directory is locked by another run ("DIR is in use by accel run pid N
// on host H"), workers cannot start, a worker failed past the restarts (its report on err), or
// the run was interrupted (SIGINT/SIGTERM, forwarded to the workers).
int RunJob(const ir::Plan& plan, const std::string& summary, const RunOptions& options,
           const EnvLookup& env, int64_t launch_unix_ns, std::ostream& out, std::ostream& err);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_RUN_JOB_H_
