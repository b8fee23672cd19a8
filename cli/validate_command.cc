#include "cli/validate_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include "common/diagnostics.h"
#include "common/exit_codes.h"
#include "spec/loader.h"

namespace accel::cli {

const std::vector<std::string>& ValidateFormats() {
  static const std::vector<std::string> kFormats = {"text", "json", "github"};
  return kFormats;
}

int RunValidateCommand(const ValidateOptions& options, const std::vector<PostLoadCheck>& checks,
                       std::ostream& out, std::ostream& err) {
  SourceManager sources;
  std::vector<Diagnostic> shown;
  int invalid_files = 0, errors = 0, warnings = 0;
  spec::LoadOptions load_options;
  load_options.overrides = options.overrides;
  for (const std::string& file : options.files) {
    DiagnosticSink sink;
    std::optional<spec::JobSpec> job = spec::LoadJobSpec(file, load_options, sink, sources);
    if (job) {
      for (const PostLoadCheck& check : checks) check(*job, sink);
    }
    if (options.werror) sink.PromoteWarningsToErrors();
    if (sink.HasErrors()) ++invalid_files;
    errors += sink.error_count();
    warnings += sink.warning_count();
    for (const Diagnostic& d : sink.diagnostics()) {
      if (options.quiet && d.severity != Severity::kError) continue;
      // Standalone notes (e.g. the planner's vocabulary padding) describe the plan, not a
      // problem: `accel plan` shows them; a valid spec validates silently.
      if (d.severity == Severity::kNote) continue;
      shown.push_back(d);
    }
  }
  if (options.format == "json") {
    out << RenderJson(shown);
  } else if (options.format == "github") {
    out << RenderGithub(shown);
  } else {
    err << RenderText(shown, sources);
  }
  // Like a compiler, a clean run prints nothing; the tally appears when there is something.
  if (!options.quiet && (errors > 0 || warnings > 0)) {
    size_t total = options.files.size();
    err << "checked " << total << (total == 1 ? " file" : " files") << ": "
        << total - invalid_files << " valid, " << invalid_files << " invalid (" << errors
        << (errors == 1 ? " error, " : " errors, ") << warnings
        << (warnings == 1 ? " warning)" : " warnings)") << "\n";
  }
  return invalid_files > 0 ? kExitInvalid : kExitOk;
}

void RegisterValidateCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* sub = app.add_subcommand(
      "validate", "Check job spec files: YAML, keys, types, ranges, the JSON Schema and the "
                  "planner's spec checks");
  sub->add_option("files", options->files, "Job spec files (YAML)")->required()->expected(-1);
  sub->add_option("--set", options->overrides,
                  "Override a key, e.g. --set parallel.tensor=2 (repeatable; applied to every "
                  "file)")
      ->allow_extra_args(false);
  sub->add_option("--format", options->format, "Output format")
      ->check(CLI::IsMember(ValidateFormats()))
      ->capture_default_str();
  sub->add_flag("-q,--quiet", options->quiet, "Print errors only");
  sub->add_flag("--werror", options->werror,
                "Treat warnings as errors: they print as error[W...] and make the file invalid "
                "(exit 1)");
  sub->callback([options, &context] {
    context.exit_code =
        RunValidateCommand(*options, context.post_load_checks, *context.out, *context.err);
  });
}

}  // namespace accel::cli
