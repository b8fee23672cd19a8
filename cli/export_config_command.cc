#include "cli/export_config_command.h"

#include <CLI/CLI.hpp>

#include <memory>

#include "cli/compile_job.h"
#include "cli/plan_command.h"
#include "common/exit_codes.h"
#include "common/file_identity.h"
#include "common/spellcheck.h"
#include "exporters/exporter.h"

namespace accel::cli {

int RunExportConfigCommand(const ExportConfigOptions& options, std::ostream& out, std::ostream& err) {
  const std::optional<exporters::TargetFormat> target = exporters::ParseTargetName(options.to);
  if (!target) {
    err << "error: unknown --to '" << options.to << "'";
    if (auto hint = ClosestMatch(options.to, exporters::TargetNames())) err << "; did you mean '" << *hint << "'?";
    err << " (deepspeed, accelerate, torchtitan, megatron)\n";
    return kExitUsage;
  }
  const bool to_stdout = options.output.empty() || options.output == "-";
  if (!to_stdout && WouldOverwriteInput(options.spec, options.output)) {
    err << "error: -o " << options.output << " is the job spec being exported (" << options.spec
        << "): refusing to overwrite it\n";
    return kExitUsage;
  }
  DiagnosticSink sink;
  SourceManager sources;
  CompiledJob compiled = CompileJob(options.spec, options.overrides, planner::PlanOptions{}, sink, sources);
  std::vector<Diagnostic> shown;
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.severity != Severity::kNote) shown.push_back(d);
  }
  if (!shown.empty()) err << RenderText(shown, sources);
  if (!compiled.ok() || sink.HasErrors()) {
    if (compiled.job && !compiled.planned.ok) err << "planning stopped in pass " << compiled.planned.last_pass << "\n";
    err << "accel export-config: " << options.spec << " not exported\n";
    return kExitInvalid;
  }
  exporters::ExportResult result = exporters::ExportConfig(*compiled.job, compiled.planned.plan, *target);
  if (int code = WriteCommandOutput(options.output, result.text, out, err); code != kExitOk) return code;
  err << "accel export-config: " << options.spec << " -> " << (to_stdout ? "<stdout>" : options.output)
      << " (" << options.to << ")\n"
      << result.report.Render("");
  return kExitOk;
}

void RegisterExportConfigCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<ExportConfigOptions>();
  CLI::App* sub = app.add_subcommand(
      "export-config", "Plan a job spec and write it as a DeepSpeed, Accelerate, torchtitan or "
                       "Megatron-LM config, with a report of what maps exactly, approximately or not at all");
  sub->add_option("spec", options->spec, "Job spec file (YAML)")->required();
  sub->add_option("--to", options->to, "Target: deepspeed, accelerate, torchtitan or megatron")->required();
  sub->add_option("--set", options->overrides, "Override a key, e.g. --set parallel.tensor=2 (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("-o,--output", options->output, "Write to FILE instead of standard output");
  sub->callback([options, &context] {
    context.exit_code = RunExportConfigCommand(*options, *context.out, *context.err);
  });
}

}  // namespace accel::cli
