#ifndef ACCEL_CLI_RUN_COMMAND_H_
#define ACCEL_CLI_RUN_COMMAND_H_

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace accel::cli {

// `accel run SPEC [--set k=v]... [--run-dir DIR] [--node-rank K --master-addr HOST
// [--master-port P]] [--threads-per-worker N] [--grace-period S] [--max-restarts N] [--no-slurm]`.
struct RunCommandOptions {
  std::string spec;
  std::vector<std::string> overrides;
  // Where plan.binpb, plan.txt, metrics.jsonl and rank<R>.log go; "" means runs/<job name>
  // under the working directory.
  std::string run_dir;
  // This node's index for a multi-node job started by hand; nullopt otherwise.
  std::optional<int> node_rank;
  // Host and port of the c10d TCPStore (global rank 0's node). Defaults: env MASTER_ADDR /
  // MASTER_PORT; single node: 127.0.0.1 and a free port; SLURM: see exec::ResolveLaunchLayout.
  std::string master_addr;
  std::optional<int> master_port;
  // Intra-op threads per worker; 0 means the usable CPUs divided by the local workers (at
  // least 1).
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

// Compiles the spec into a plan (diagnostics like `accel plan`), refuses what the executor cannot
// run and missing/empty data (located E0601/E0001 errors), prints the plan summary, writes
// plan.binpb and plan.txt (the summary) into the run directory, and launches and supervises one
// `accel worker` process per local rank (exec::ProcessSupervisor). Rank 0's output is echoed to
// `out`; every rank's output is in RUN_DIR/rank<R>.log. Returns 0 when every worker finished,
// 1 for an invalid spec or plan or a refused plan, 2 for a bad command line or launch layout
// (missing --node-rank/--master-addr, inconsistent SLURM variables), 4 (kExitRuntime) when a
// worker failed (its rank, exit status or signal and last 20 log lines go to `err`) and
// max_restarts restarts did not finish the run (each restart is announced on `err`, and the
// failed attempt's logs are kept as rank<R>.attempt<K>.log), the run was interrupted (SIGINT/SIGTERM, forwarded to the workers), or the run directory could not be
// written.
int RunRunCommand(const RunCommandOptions& options, std::ostream& out, std::ostream& err);

// Registers `run` on the app (a CommandRegistrar).
void RegisterRunCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_RUN_COMMAND_H_
