#ifndef ACCEL_CLI_IMPORT_COMMAND_H_
#define ACCEL_CLI_IMPORT_COMMAND_H_

#include <ostream>
#include <string>

#include "cli/app.h"

namespace accel::cli {

// `accel import FILE [--model config.json] [--data PATH] [--from FORMAT] [--launch-dir DIR]
//  [-o job.yaml]`.
struct ImportCommandOptions {
  std::string file;         // an Accelerate YAML, DeepSpeed JSON or torchtitan TOML config
  std::string model;        // Hugging Face config.json for model.config ("" = placeholder)
  std::string data;         // training data for data.train.path ("" = placeholder)
  std::string output;       // the spec to write; "" or "-" = standard output
  std::string from;         // "accelerate" | "deepspeed" | "torchtitan" | "megatron"; "" detects the format
  std::string launch_dir;   // where the source tool runs; its config's relative paths start there
};

// The accepted --from values, in help order.
const std::vector<std::string>& ImportFormats();

// Imports the file (importers::ImportConfigFile), writes the spec, then checks it like
// `accel validate` (loader, schema and `checks`). Diagnostics of the import (located in FILE)
// and of the check (located in the written spec) go to `err` as text, followed by a summary
// line "accel import: FILE (TOOL) -> OUT: N warnings"; the spec goes to `out` when no output
// file is named. Returns kExitOk when the spec was written and validates (warnings allowed),
// kExitInvalid when the import was refused or the written spec has errors, kExitRuntime when
// the output cannot be written.
int RunImportCommand(const ImportCommandOptions& options, const std::vector<PostLoadCheck>& checks,
                     std::ostream& out, std::ostream& err);

// Registers `import` on the app (a CommandRegistrar).
void RegisterImportCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_IMPORT_COMMAND_H_
