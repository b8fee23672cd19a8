#ifndef ACCEL_CLI_APP_H_
#define ACCEL_CLI_APP_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "spec/job_spec.h"

namespace CLI {
class App;
}  // namespace CLI

namespace accel::cli {

// The version `accel --version` prints after "accel ".
inline constexpr const char* kVersion = "0.1.0";

// A check run on every spec that loaded without errors (by `validate`, and by any command that
// wants the same verdict). It adds its findings to the sink; errors make the spec invalid,
// warnings do not. The planner registers its spec-level checks here.
using PostLoadCheck = std::function<void(const spec::JobSpec& spec, DiagnosticSink& sink)>;

// State shared by the app and its subcommands.
struct AppContext {
  std::vector<PostLoadCheck> post_load_checks;
  std::ostream* out = nullptr;  // standard output (plans, JSON diagnostics, the schema)
  std::ostream* err = nullptr;  // standard error (text diagnostics, usage errors)
  int exit_code = 0;            // set by the subcommand that ran (common/exit_codes.h)
};

// Adds one subcommand to `app`: declares its options (bound to state the registrar owns, e.g.
// a shared_ptr captured by the callback) and sets a callback that runs it and stores its exit
// code in `context.exit_code`. One registrar per subcommand; main.cc lists them.
using CommandRegistrar = void (*)(CLI::App& app, AppContext& context);

// Builds the `accel` app from `commands`, parses `argv`, and runs the chosen subcommand.
// Returns the process exit code: the subcommand's, 0 for --help/--version, 2 (kExitUsage) for
// a bad command line (an unknown subcommand gets "did you mean"), 3 (kExitInternal) when an
// exception escapes a subcommand.
int RunApp(int argc, const char* const* argv, const std::vector<CommandRegistrar>& commands,
           AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_APP_H_
