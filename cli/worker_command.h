#ifndef ACCEL_CLI_WORKER_COMMAND_H_
#define ACCEL_CLI_WORKER_COMMAND_H_

#include <ostream>
#include <string>

#include "cli/app.h"

namespace accel::cli {

// `accel worker --plan FILE`: one rank of a job, started by `accel run` (hidden from --help).
struct WorkerCommandOptions {
  // The binary plan (plan.binpb) the launcher wrote.
  std::string plan;
};

// Reads the plan and the torchrun-style environment (launcher/worker_env.h), installs
// SIGTERM/SIGINT handlers that make training stop at the next step boundary, and runs
// exec::RunWorker. The test hooks ACCEL_TEST_CRASH_AT_STEP/ACCEL_TEST_CRASH_RANK are honoured
// (exec::ReadWorkerTestHooks). Errors go to `err` as "error: rank R: MESSAGE".
// Returns 0 when training finished, 128 + 15 (as a shell reports SIGTERM) when it stopped early
// on a signal, 2 for a bad environment, 4 (kExitRuntime) for any failure while running; after a
// failure it waits 1 s before exiting so that the launcher sees the rank that failed first (a
// peer's crash makes every other rank's collectives fail too).
int RunWorkerCommand(const WorkerCommandOptions& options, std::ostream& out, std::ostream& err);

// Registers the hidden `worker` subcommand on the app (a CommandRegistrar).
void RegisterWorkerCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_WORKER_COMMAND_H_
