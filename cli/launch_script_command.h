#ifndef ACCEL_CLI_LAUNCH_SCRIPT_COMMAND_H_
#define ACCEL_CLI_LAUNCH_SCRIPT_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace accel::cli {

// `accel launch-script JOB --emit slurm|kubernetes [--image IMAGE] [--accel CMD] [-o FILE]`.
struct LaunchScriptOptions {
  std::string spec;
  std::vector<std::string> overrides;  // --set, as for `accel plan`
  std::string emit;                    // "slurm" | "kubernetes"
  std::string image;                   // kubernetes: the container image
  std::string accel = "accel";         // the accel command on the cluster
  std::string output;                  // "" or "-": standard output
};

// Plans the job (a job that does not plan prints its diagnostics and writes nothing) and writes
// cli/launch_script.h's SlurmScript or KubernetesManifest. Returns kExitOk; kExitInvalid for a job
// that does not plan; kExitUsage for a bad --emit or a missing --image; kExitRuntime when -o
// cannot be written.
int RunLaunchScriptCommand(const LaunchScriptOptions& options, std::ostream& out, std::ostream& err);

// Registers `launch-script` on the app (a CommandRegistrar).
void RegisterLaunchScriptCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_LAUNCH_SCRIPT_COMMAND_H_
