#include "cli/launch_script_command.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <sstream>

#include "cli/launch_script.h"
#include "cli/plan_command.h"
#include "cli/compile_job.h"
#include "common/diagnostics.h"
#include "common/exit_codes.h"
#include "planner/planner.h"

namespace accel::cli {

int RunLaunchScriptCommand(const LaunchScriptOptions& options, std::ostream& out, std::ostream& err) {
  if (options.emit != "slurm" && options.emit != "kubernetes") {
    err << "error: --emit must be slurm or kubernetes, got '" << options.emit << "'\n";
    return kExitUsage;
  }
  DiagnosticSink sink;
  SourceManager sources;
  const CompiledJob compiled = CompileJob(options.spec, options.overrides, {}, sink, sources);
  const planner::PlanResult& planned = compiled.planned;
  if (sink.HasErrors() || !compiled.ok()) {
    err << RenderText(sink.diagnostics(), sources);
    return kExitInvalid;
  }
  LaunchScriptInputs in;
  in.spec_path = options.spec;
  std::ifstream file(options.spec, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  in.spec_text = text.str();
  in.image = options.image;
  in.accel = options.accel;
  std::string data;
  if (options.emit == "slurm") {
    data = SlurmScript(planned.plan, in);
  } else {
    absl::StatusOr<std::string> manifest = KubernetesManifest(planned.plan, in);
    if (!manifest.ok()) {
      err << "error: " << manifest.status().message() << "\n";
      return kExitUsage;
    }
    data = *std::move(manifest);
  }
  return WriteCommandOutput(options.output, data, out, err);
}

void RegisterLaunchScriptCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<LaunchScriptOptions>();
  CLI::App* sub = app.add_subcommand(
      "launch-script", "Write a SLURM batch script or a Kubernetes PyTorchJob manifest that runs "
                       "the job on the cluster its plan describes");
  sub->add_option("spec", options->spec, "Job spec file (YAML)")->required();
  sub->add_option("--emit", options->emit, "slurm or kubernetes")->required();
  sub->add_option("--set", options->overrides, "Override a key, as for `accel plan` (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--image", options->image,
                  "Container image holding accel and the job's data (kubernetes)");
  sub->add_option("--accel", options->accel, "The accel command on the cluster")
      ->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write to FILE instead of standard output");
  sub->callback([options, &context] {
    context.exit_code = RunLaunchScriptCommand(*options, *context.out, *context.err);
  });
}

}  // namespace accel::cli
