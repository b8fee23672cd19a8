#ifndef ACCEL_CLI_EXPORT_CONFIG_COMMAND_H_
#define ACCEL_CLI_EXPORT_CONFIG_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace accel::cli {

// `accel export-config JOB --to deepspeed|accelerate|torchtitan|megatron [--set k=v]... [-o FILE]`.
struct ExportConfigOptions {
  std::string spec;
  std::vector<std::string> overrides;
  std::string to;      // a exporters::TargetNames() spelling
  std::string output;  // "" or "-": standard output; else written atomically
};

// Compiles the job as `accel plan` does (cli/compile_job.h) and writes it as the target's config
// (exporters/exporter.h). The export report (exact / approximated / not expressible) goes to
// `err` for every target; the YAML and bash outputs also end with it as comments.
// Returns 0 written; 1 the job does not load or plan (its diagnostics on `err`); 2 usage: an
// unknown --to ("error: unknown --to 'X'; did you mean 'Y'? (deepspeed, accelerate, torchtitan,
// megatron)"), or -o naming the job file; 4 the output cannot be written.
int RunExportConfigCommand(const ExportConfigOptions& options, std::ostream& out, std::ostream& err);

// Registers `export-config` on the app (a CommandRegistrar).
void RegisterExportConfigCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_EXPORT_CONFIG_COMMAND_H_
