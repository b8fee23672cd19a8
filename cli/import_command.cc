#include "cli/import_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include "cli/plan_command.h"
#include "common/exit_codes.h"
#include "common/file_identity.h"
#include "importers/importer.h"
#include "spec/loader.h"

namespace accel::cli {
namespace {

bool ToStdout(const ImportCommandOptions& options) {
  return options.output.empty() || options.output == "-";
}

// Loads the written spec and runs the post-load checks, as `accel validate` would.
void CheckWritten(const std::string& text, const std::string& file,
                  const std::vector<PostLoadCheck>& checks, DiagnosticSink& sink,
                  SourceManager& sources) {
  std::optional<spec::JobSpec> job =
      spec::LoadJobSpecFromString(text, file, spec::LoadOptions{}, sink, sources);
  if (!job) return;
  for (const PostLoadCheck& check : checks) check(*job, sink);
}

}  // namespace

const std::vector<std::string>& ImportFormats() {
  static const std::vector<std::string> kFormats = {"accelerate", "deepspeed", "torchtitan", "megatron"};
  return kFormats;
}

int RunImportCommand(const ImportCommandOptions& options, const std::vector<PostLoadCheck>& checks,
                     std::ostream& out, std::ostream& err) {
  importers::ImportOptions import;
  import.model_config = options.model;
  import.data_path = options.data;
  import.launch_dir = options.launch_dir;
  import.output_path = ToStdout(options) ? "" : options.output;
  if (!options.from.empty()) import.format = importers::ParseFormatName(options.from);
  // The spec would replace the config it came from: refused before anything is read.
  if (!ToStdout(options) && WouldOverwriteInput(options.file, options.output)) {
    err << "accel import: -o " << options.output << " is the file being imported ("
        << options.file << "): refusing to overwrite it\n";
    return kExitUsage;
  }
  DiagnosticSink sink;
  SourceManager sources;
  importers::ImportResult result = importers::ImportConfigFile(options.file, import, sink, sources);
  err << RenderText(sink.diagnostics(), sources);
  const std::string tool(importers::ToolName(result.format));
  if (!result.spec_yaml) {
    err << "accel import: " << options.file << " (" << tool << ") not imported: "
        << sink.error_count() << (sink.error_count() == 1 ? " error" : " errors") << "\n";
    return kExitInvalid;
  }
  const std::string written = ToStdout(options) ? "<stdout>" : options.output;
  // Atomic, and a write error (a full disk, /dev/full) is exit 4 with the reason.
  if (int written_code = WriteCommandOutput(options.output, *result.spec_yaml, out, err);
      written_code != kExitOk) {
    return written_code;
  }
  DiagnosticSink check;
  CheckWritten(*result.spec_yaml, ToStdout(options) ? "imported.yaml" : options.output, checks,
               check, sources);
  std::vector<Diagnostic> shown;
  for (const Diagnostic& d : check.diagnostics()) {
    if (d.severity != Severity::kNote) shown.push_back(d);
  }
  err << RenderText(shown, sources);
  err << "accel import: " << options.file << " (" << tool << ") -> " << written << ": "
      << sink.warning_count() << (sink.warning_count() == 1 ? " warning" : " warnings");
  if (check.HasErrors()) {
    err << "; the spec does not validate (" << check.error_count()
        << (check.error_count() == 1 ? " error" : " errors") << ")\n";
    return kExitInvalid;
  }
  err << "\n";
  return kExitOk;
}

void RegisterImportCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<ImportCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "import", "Turn an Accelerate YAML, DeepSpeed JSON or torchtitan TOML config into a job "
                "spec whose comments name the source keys");
  sub->add_option("file", options->file, "The config to import")->required();
  sub->add_option("--model", options->model,
                  "Hugging Face config.json for model.config (default: torchtitan's "
                  "model.hf_assets_path/config.json when it exists)");
  sub->add_option("--data", options->data, "Training data path for data.train.path");
  sub->add_option("--launch-dir", options->launch_dir,
                  "Directory the source tool runs from, where paths in its config start (torchtitan's "
                  "hf_assets_path; default: the current directory)");
  sub->add_option("-o,--output", options->output, "Spec file to write (default: standard output)");
  sub->add_option("--from", options->from, "Source format (default: detected)")
      ->check(CLI::IsMember(ImportFormats()));
  sub->callback([options, &context] {
    context.exit_code =
        RunImportCommand(*options, context.post_load_checks, *context.out, *context.err);
  });
}

}  // namespace accel::cli
