// `accel-executor`: the LibTorch half of the CLI. `accel run ...` and `accel worker ...` exec it
// with the same arguments; it also answers every other subcommand, so it can be run directly.
#include <exception>
#include <iostream>

#include "cli/app.h"
#include "cli/calibrate_command.h"
#include "cli/estimate_memory_command.h"
#include "cli/plan_command.h"
#include "cli/run_command.h"
#include "cli/schema_command.h"
#include "cli/validate_command.h"
#include "cli/worker_command.h"
#include "common/exit_codes.h"
#include "planner/planner.h"

int main(int argc, char** argv) {
  accel::cli::ReexecCalibrateWithPassiveOpenMp(argc, argv, std::cerr);
  const std::vector<accel::cli::CommandRegistrar> kCommands = {
      accel::cli::RegisterValidateCommand, accel::cli::RegisterSchemaCommand,
      accel::cli::RegisterPlanCommand,     accel::cli::RegisterRunCommand,
      accel::cli::RegisterWorkerCommand,   accel::cli::RegisterEstimateMemoryCommand,
      accel::cli::RegisterCalibrateCommand,
  };
  accel::cli::AppContext context;
  context.out = &std::cout;
  context.err = &std::cerr;
  context.post_load_checks.push_back(accel::planner::CheckSpec);
  try {
    return accel::cli::RunApp(argc, argv, kCommands, context);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return accel::kExitInternal;
  }
}
