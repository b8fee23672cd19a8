#include "cli/app.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <string>

#include "common/exit_codes.h"
#include "common/spellcheck.h"

namespace accel::cli {
namespace {

// CLI11 reports a mistyped subcommand as an unexpected positional argument; catch it first so
// the user gets "did you mean".
bool ReportUnknownCommand(const CLI::App& app, int argc, const char* const* argv,
                          std::ostream& err) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.empty() || arg[0] == '-') continue;
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
    }
    for (const std::string& name : names) {
      if (name == arg) return false;
    }
    err << "error: unknown command '" << arg << "'";
    if (std::optional<std::string> match = ClosestMatch(arg, names)) {
      err << "; did you mean '" << *match << "'?";
    }
    err << "\nRun 'accel --help' for the list of commands.\n";
    return true;
  }
  return false;
}

}  // namespace

int RunApp(int argc, const char* const* argv, const std::vector<CommandRegistrar>& commands,
           AppContext& context) {
  std::ostream& out = *context.out;
  std::ostream& err = *context.err;
  CLI::App app("accel: compile a declarative training job into an execution plan and run it",
               "accel");
  app.set_version_flag("--version", std::string("accel ") + kVersion, "Print the version and exit");
  app.require_subcommand(1);
  for (CommandRegistrar registrar : commands) registrar(app, context);
  if (ReportUnknownCommand(app, argc, argv, err)) return kExitUsage;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitUsage;
  } catch (const std::exception& e) {
    err << "internal error: " << e.what() << "\n";
    return kExitInternal;
  }
  return context.exit_code;
}

}  // namespace accel::cli
