#ifndef ACCEL_CLI_SCHEMA_COMMAND_H_
#define ACCEL_CLI_SCHEMA_COMMAND_H_

#include <ostream>

#include "cli/app.h"

namespace accel::cli {

// `accel schema`: prints the job JSON Schema (draft-07) embedded in the binary to `out`, for
// editors and other tools. Returns 0.
int RunSchemaCommand(std::ostream& out);

// Registers `schema` on the app (a CommandRegistrar).
void RegisterSchemaCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_SCHEMA_COMMAND_H_
