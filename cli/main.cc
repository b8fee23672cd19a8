// The `accel` command. Each subcommand lives in its own cli/<name>_command.cc and is added
// here with one registrar in kCommands.
#include <exception>
#include <iostream>

#include "cli/app.h"
#include "cli/estimate_memory_command.h"
#include "cli/plan_command.h"
#ifdef ACCEL_HAVE_EXECUTOR
#include "cli/run_command.h"
#include "cli/worker_command.h"
#endif
#include "cli/schema_command.h"
#include "cli/validate_command.h"
#include "common/exit_codes.h"
#include "planner/planner.h"

int main(int argc, char** argv) {
  const std::vector<accel::cli::CommandRegistrar> kCommands = {
      accel::cli::RegisterValidateCommand,
      accel::cli::RegisterSchemaCommand,
      accel::cli::RegisterPlanCommand,
#ifdef ACCEL_HAVE_EXECUTOR
      accel::cli::RegisterRunCommand,
      accel::cli::RegisterWorkerCommand,
#endif
      accel::cli::RegisterEstimateMemoryCommand,
  };
  accel::cli::AppContext context;
  context.out = &std::cout;
  context.err = &std::cerr;
  // `validate` also runs the planner's checks, so layouts that cannot work fail in CI.
  context.post_load_checks.push_back(accel::planner::CheckSpec);
  try {
    return accel::cli::RunApp(argc, argv, kCommands, context);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return accel::kExitInternal;
  }
}
