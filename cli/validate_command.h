#ifndef ACCEL_CLI_VALIDATE_COMMAND_H_
#define ACCEL_CLI_VALIDATE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace accel::cli {

// `accel validate FILE... [--set k=v]... [--format text|json|github] [--quiet] [--werror]`.
struct ValidateOptions {
  std::vector<std::string> files;
  std::vector<std::string> overrides;  // applied to every file
  std::string format = "text";         // text | json | github
  bool quiet = false;                  // print errors only (no warnings, notes or summary)
  bool werror = false;                 // warnings are errors: a file with any is invalid
};

// The accepted --format values, in help order.
const std::vector<std::string>& ValidateFormats();

// Loads and checks every file (loader, JSON Schema, then each post-load check on specs that
// loaded). Text diagnostics and, when anything was reported, a summary line go to `err` (a
// clean run prints nothing; standalone notes are never printed); json and github output goes to
// `out` (one JSON array, or one workflow command per diagnostic, for all files together).
// Returns 0 when every file is valid, 1 when any has an error; warnings change it only with
// `werror`, which reports them as errors (keeping their W codes).
int RunValidateCommand(const ValidateOptions& options, const std::vector<PostLoadCheck>& checks,
                       std::ostream& out, std::ostream& err);

// Registers `validate` on the app (a CommandRegistrar).
void RegisterValidateCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_VALIDATE_COMMAND_H_
