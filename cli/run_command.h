#ifndef ACCEL_CLI_RUN_COMMAND_H_
#define ACCEL_CLI_RUN_COMMAND_H_

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "launcher/run_job.h"

namespace accel::cli {

// `accel run SPEC [--set k=v]... [--run-dir DIR] [--node-rank K --master-addr HOST
// [--master-port P]] [--threads-per-worker N] [--grace-period S] [--max-restarts N [--min-nodes M
// [--rejoin-timeout S]]] [--no-slurm]`.
struct RunCommandOptions {
  std::string spec;
  std::vector<std::string> overrides;
  exec::RunOptions launch;
};

// Compiles the spec into a plan (diagnostics like `accel plan`), refuses what the executor cannot
// run and missing or empty data (located errors: cli/pre_launch_checks.h), prints the plan summary
// and runs the job (exec::RunJob: launch layout, run directory, supervision and restarts).
// Returns exec::RunJob's exit code, or kExitInvalid (1) for an invalid spec or plan or a refused
// plan or a job that cannot be planned for every number of nodes from --min-nodes up (the
// planner's errors, after "error: --min-nodes M: the job cannot go on with N nodes: "), and
// kExitUsage (2) for --max-restarts with checkpoint.resume: never, and for --min-nodes on a
// single-node job, above cluster.nodes or without --max-restarts.
int RunRunCommand(const RunCommandOptions& options, std::ostream& out, std::ostream& err);

// Registers `run` on the app (a CommandRegistrar).
void RegisterRunCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_RUN_COMMAND_H_
