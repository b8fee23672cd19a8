// The `accel` command. Each subcommand lives in its own cli/<name>_command.cc and is added
// here with one registrar in kCommands. `run` and `worker` are forwarded to accel-executor.
#include <unistd.h>

#include <cstring>
#include <exception>
#include <iostream>

#include "cli/app.h"
#include "cli/estimate_memory_command.h"
#include "cli/plan_command.h"
#include "cli/report_command.h"
#include "cli/executor_forward.h"
#include "cli/export_command.h"
#include "cli/export_config_command.h"
#include "cli/import_command.h"
#include "cli/launch_script_command.h"
#include "cli/schema_command.h"
#include "cli/standard_output.h"
#include "cli/tokenize_command.h"
#include "cli/validate_command.h"
#include "common/exit_codes.h"
#include "planner/planner.h"

namespace {

// A subcommand's exit code, unless standard output could not be written: then exit 4 with the
// reason, since a plan or a JSON report that was lost is a failure whatever the verdict.
int WithOutputChecked(int exit_code, accel::cli::FdOutput& out) {
  const int error = out.Finish();
  if (error == 0 || exit_code == accel::kExitInternal) return exit_code;
  std::cerr << "error: cannot write standard output: " << std::strerror(error) << "\n";
  return accel::kExitRuntime;
}

}  // namespace

int main(int argc, char** argv) {
  accel::cli::ReserveStandardDescriptors();
  const std::vector<accel::cli::CommandRegistrar> kCommands = {
      accel::cli::RegisterValidateCommand,
      accel::cli::RegisterSchemaCommand,
      accel::cli::RegisterPlanCommand,
      accel::cli::RegisterReportCommand,
      accel::cli::RegisterRunForwarder,
      accel::cli::RegisterEstimateMemoryCommand,
      accel::cli::RegisterExportCommand,
      accel::cli::RegisterExportConfigCommand,
      accel::cli::RegisterImportCommand,
      accel::cli::RegisterLaunchScriptCommand,
      accel::cli::RegisterTokenizeCommand,
  };
  accel::cli::AppContext context;
  accel::cli::FdOutput out(STDOUT_FILENO);
  context.out = &out;
  context.err = &std::cerr;
  // `validate` also runs the planner's checks, so layouts that cannot work fail in CI.
  context.post_load_checks.push_back(accel::planner::CheckSpec);
  // `run` and `worker` are served by accel-executor, the only binary that loads LibTorch.
  int forwarded_exit = 0;
  if (accel::cli::ForwardToExecutor(argc, argv, context, &forwarded_exit)) return forwarded_exit;
  try {
    return WithOutputChecked(accel::cli::RunApp(argc, argv, kCommands, context), out);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return accel::kExitInternal;
  }
}
