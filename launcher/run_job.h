// `accel run` after the plan is accepted: who runs on this node, the run directory, and the
// workers' supervision with the restart policy. Torch-free; the cli compiles and checks the plan.
#ifndef ACCEL_LAUNCHER_RUN_JOB_H_
#define ACCEL_LAUNCHER_RUN_JOB_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "ir/plan.pb.h"
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
};

// Runs plan's workers on this node: resolves the launch layout (flags, then MASTER_ADDR /
// MASTER_PORT and SLURM_* from env), writes plan.binpb and plan.txt (summary) into the run
// directory, starts one `WORKER worker --plan RUN_DIR/plan.binpb` per local rank and supervises
// them (ProcessSupervisor), echoing the first local rank's output to out. After a worker failure
// it restarts all local workers up to max_restarts times, keeping each failed attempt's logs as
// rank<R>.attempt<K>.log. launch_unix_ns: when `accel run` started (workers report start-up).
// Returns a common/exit_codes.h code: kExitOk when every worker finished; kExitUsage for a bad
// launch layout or environment (message on err); kExitRuntime when the run directory cannot be
// written, workers cannot start, a worker failed past the restarts (its report on err), or the
// run was interrupted (SIGINT/SIGTERM, forwarded to the workers).
int RunJob(const ir::Plan& plan, const std::string& summary, const RunOptions& options,
           const EnvLookup& env, int64_t launch_unix_ns, std::ostream& out, std::ostream& err);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_RUN_JOB_H_
