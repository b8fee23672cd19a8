#include "cli/schema_command.h"

#include <CLI/CLI.hpp>

#include "common/exit_codes.h"
#include "schemas/schema_validator.h"

namespace accel::cli {

int RunSchemaCommand(std::ostream& out) {
  out << schemas::JobSchemaText();
  return kExitOk;
}

void RegisterSchemaCommand(CLI::App& app, AppContext& context) {
  CLI::App* sub = app.add_subcommand(
      "schema", "Print the JSON Schema of job files (for editors: yaml-language-server)");
  sub->callback([&context] { context.exit_code = RunSchemaCommand(*context.out); });
}

}  // namespace accel::cli
