// `accel run` after the plan is accepted: who runs on this node, the run directory, and the
// workers' supervision with the restart policy. Torch-free; the cli compiles and checks the plan.
#ifndef ACCEL_LAUNCHER_RUN_JOB_H_
#define ACCEL_LAUNCHER_RUN_JOB_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "launcher/plan_support.h"
#include "launcher/worker_env.h"

namespace accel::exec {

// The job planned for another number of nodes (an elastic restart), with its summary text.
struct ReplannedJob {
  ir::Plan plan;
  std::string summary;
};

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
  // Elastic restarts (--min-nodes) of a multi-node job started by hand; 0: off. Before each
  // restart the launchers of the nodes still running meet in checkpoint.dir
  // (launcher/elastic_rendezvous.h); once every node of the previous attempt is back, or
  // rejoin_timeout_seconds after this one arrived with at least min_nodes present, those nodes go
  // on, re-planned by `replan` when fewer than before, and resume from the newest checkpoint.
  int min_nodes = 0;
  double rejoin_timeout_seconds = 60;
  // The job planned for `nodes` nodes (required with min_nodes). Errors: a message for the user.
  std::function<absl::StatusOr<ReplannedJob>(int nodes, int restart)> replan;
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
// rank<R>.attempt<K>.log, and records each restart in RUN_DIR/restarts.jsonl and, at the end,
// in summary.json (launcher/restart_record.h). With min_nodes, a restart may go on with fewer
// nodes: the new plan replaces plan.binpb and plan.txt (the previous ones are kept as
// plan.attempt<K>.binpb and .txt), node ranks are renumbered in launch order and the first
// remaining node becomes the master. launch_unix_ns: when `accel run` started (workers report start-up).
// Returns a common/exit_codes.h code: kExitOk when every worker finished; kExitInvalid when the
// checkpoint directory is unusable, holds another run's checkpoints this run would mix with, or
// holds a checkpoint that cannot resume under plan (issues through report_issues); kExitUsage for
// a bad launch layout or environment (message on err; min_nodes under SLURM); kExitRuntime when the run directory cannot
// be created or written, a directory is locked by another run ("DIR is in use by accel run pid N
// on host H"), workers cannot start, a worker failed past the restarts (its report on err), or
// the run was interrupted (SIGINT/SIGTERM, forwarded to the workers), or fewer than min_nodes
// nodes rejoined.
int RunJob(const ir::Plan& plan, const std::string& summary, const RunOptions& options,
           const EnvLookup& env, int64_t launch_unix_ns, std::ostream& out, std::ostream& err);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_RUN_JOB_H_
