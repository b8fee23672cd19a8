#include "cli/plan_command.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "absl/status/status.h"
#include "cli/plan_search.h"
#include "cli/resume_from.h"
#include "cli/compile_job.h"
#include "common/diagnostics.h"
#include "common/durable_file.h"
#include "common/exit_codes.h"
#include "common/file_identity.h"
#include "common/no_follow.h"
#include "common/terminal_text.h"
#include "common/spellcheck.h"
#include "html/plan_page.h"
#include "ir/graph_export.h"
#include "ir/pipeline_csv.h"
#include "ir/plan_writer.h"
#include "planner/planner.h"

namespace accel::cli {

const std::vector<std::string>& PlanFormats() {
  static const std::vector<std::string> kFormats = {"text", "json", "textproto", "binpb",
                                                    "dot",  "svg",  "png",  "pipeline-csv",
                                                    "html"};
  return kFormats;
}

// The search options' usage errors ("" when there is none).
std::string SearchUsageError(const PlanCommandOptions& options) {
  if (!options.search) {
    if (!options.emit_spec.empty()) return "--emit-spec needs --search";
    if (options.top_given) return "--top needs --search";
    if (options.emit_rank_given) return "--emit-rank needs --search";
    if (options.forecast) return "--forecast needs --search";
    if (!options.resume_from.empty() && (options.format != "text" || !options.dump_after.empty())) {
      return "--resume-from prints a report: --format and --dump-after cannot be used with it";
    }
    return "";
  }
  if (!options.resume_from.empty()) {
    return "--resume-from checks the spec's own layout: --search cannot be used with it";
  }
  if (options.top < 1) return "--top must be at least 1, got " + std::to_string(options.top);
  if (options.emit_rank_given && options.emit_spec.empty()) return "--emit-rank needs --emit-spec";
  if (options.emit_rank < 1) {
    return "--emit-rank must be at least 1, got " + std::to_string(options.emit_rank);
  }
  if (options.format != "text" && options.format != "html") {
    return "--search prints a table (text, or html with the winner's plan): --format " +
           options.format + " cannot be used with it";
  }
  if (!options.dump_after.empty()) return "--search plans every candidate: --dump-after cannot be used with it";
  return "";
}

int RunPlanCommand(const PlanCommandOptions& options, std::ostream& out, std::ostream& err) {
  if (std::string usage = SearchUsageError(options); !usage.empty()) {
    err << "error: " << usage << "\n";
    return kExitUsage;
  }
  // `accel plan job.yaml -o job.yaml` would replace the spec with its plan.
  for (const auto& [flag, path] : {std::pair<const char*, const std::string&>{"-o", options.output},
                                   {"--emit-spec", options.emit_spec}}) {
    if (!path.empty() && path != "-" && WouldOverwriteInput(options.spec, path)) {
      err << "error: " << flag << " " << path << " is the job spec being planned ("
          << options.spec << "): refusing to overwrite it\n";
      return kExitUsage;
    }
  }
  if (options.search) {
    return RunPlanSearch(options.spec, options.overrides, options.top, options.output,
                         options.emit_spec, options.emit_rank, options.forecast,
                         options.format == "html", out, err);
  }
  const auto& formats = PlanFormats();
  if (std::find(formats.begin(), formats.end(), options.format) == formats.end()) {
    err << "error: unknown format '" << options.format << "'";
    if (auto hint = ClosestMatch(options.format, formats)) err << "; did you mean '" << *hint << "'?";
    err << "\n";
    return kExitUsage;
  }
  if (!options.dump_after.empty() && !planner::IsPassName(options.dump_after)) {
    err << "error: unknown pass '" << options.dump_after << "'";
    if (auto hint = ClosestMatch(options.dump_after, planner::PassNames())) {
      err << "; did you mean '" << *hint << "'?";
    }
    err << "\n";
    return kExitUsage;
  }
  const bool to_stdout = options.output.empty() || options.output == "-";
  const bool binary = options.format == "binpb" || options.format == "png";
  if (binary && to_stdout && isatty(STDOUT_FILENO)) {
    err << "error: --format " << options.format
        << " writes binary data; use -o FILE or redirect standard output\n";
    return kExitUsage;
  }

  DiagnosticSink sink;
  SourceManager sources;
  planner::PlanOptions plan_options;
  plan_options.dump_after = options.dump_after;
  CompiledJob compiled = CompileJob(options.spec, options.overrides, plan_options, sink, sources);
  const std::optional<spec::JobSpec>& job = compiled.job;
  planner::PlanResult& result = compiled.planned;
  if (options.werror) sink.PromoteWarningsToErrors();
  // Notes are part of the plan (its summary and plan.notes); errors and warnings go to stderr.
  std::vector<Diagnostic> shown;
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.severity != Severity::kNote || sink.HasErrors()) shown.push_back(d);
  }
  if (!shown.empty()) err << RenderText(shown, sources);
  if (!job || sink.HasErrors()) {
    if (job && !result.ok) err << "planning stopped in pass " << result.last_pass << "\n";
    if (job && result.ok) err << "no plan written: warnings are errors (--werror)\n";
    return kExitInvalid;
  }

  if (!options.resume_from.empty()) {
    return RunResumeFrom(result.plan, *job, sources, options.resume_from, out, err);
  }
  std::string data;
  const std::string& f = options.format;
  // The summary quotes the spec's paths and names: a terminal must not act on what they hold.
  if (f == "text") data = EscapeTerminalControlsKeepingLines(ir::PlanSummary(result.plan));
  else if (f == "json") data = ir::PlanToJson(result.plan);
  else if (f == "textproto") data = ir::PlanToTextproto(result.plan);
  else if (f == "binpb") data = ir::PlanToBinary(result.plan);
  else if (f == "dot") data = ir::PlanToDot(result.plan);
  else if (f == "pipeline-csv") data = ir::PipelineToCsv(result.plan.pipeline());
  else if (f == "html") {
    absl::StatusOr<std::string> page = html::PlanToHtml(result.plan);
    if (!page.ok()) {  // a build without the charting library
      err << "error: " << page.status().message() << "\n";
      return kExitUsage;
    }
    data = *std::move(page);
  } else {
    absl::StatusOr<std::string> rendered = ir::RenderDot(ir::PlanToDot(result.plan), f);
    if (absl::IsUnimplemented(rendered.status())) {  // a build without Graphviz
      err << "error: " << rendered.status().message() << "\n";
      return kExitUsage;
    }
    if (!rendered.ok()) {
      err << "internal error: " << rendered.status().message() << "\n";
      return kExitInternal;
    }
    data = *std::move(rendered);
  }

  return WriteCommandOutput(options.output, data, out, err);
}

int WriteCommandOutput(const std::string& path, const std::string& data, std::ostream& out,
                       std::ostream& err) {
  if (path.empty() || path == "-") {
    out << data;
    out.flush();
    return kExitOk;
  }
  if (absl::Status written = WriteFileAtomically(path, data); !written.ok()) {
    err << "error: " << written.message() << "\n";
    return kExitRuntime;
  }
  return kExitOk;
}

void RegisterPlanCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<PlanCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan", "Compile a job spec into its execution plan and show it: mesh, process groups, "
              "pipeline stages, per-rank memory, every auto value with its reason");
  sub->add_option("spec", options->spec, "Job spec file (YAML)")->required();
  sub->add_option("--set", options->overrides,
                  "Override a key, e.g. --set parallel.tensor=2 (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--format", options->format,
                  "Output format: text, json, textproto, binpb, dot, svg, png, pipeline-csv (the "
                  "stages' op lists as torch.distributed.pipelining's schedule CSV), html (one "
                  "self-contained interactive page; with --search: the ranking and the winner's "
                  "plan)")
      ->capture_default_str();
  sub->add_option("-o,--output", options->output, "Write to FILE instead of standard output");
  sub->add_option("--dump-after", options->dump_after,
                  "Stop after this planner pass and print the partial plan (validate-spec, "
                  "resolve-auto, build-mesh, assign-stages, build-shard-groups, "
                  "schedule-pipeline, estimate-memory, estimate-step-time)");
  sub->add_flag("--werror", options->werror,
                "Treat warnings as errors: they print as error[W...], no plan is written, "
                "exit 1");
  sub->add_flag("--search", options->search,
                "Search the cluster's layouts (data/tensor/pipeline degrees, sharding stage, micro "
                "batch, recompute, pipeline schedule), plan each, and print the fastest that fit");
  CLI::Option* top = sub->add_option("--top", options->top,
                                     "With --search: rows of the table (default 10)");
  sub->add_option("--emit-spec", options->emit_spec,
                  "With --search: write the winning layout as a job spec to FILE");
  CLI::Option* emit_rank = sub->add_option(
      "--emit-rank", options->emit_rank,
      "With --emit-spec: write the layout ranked K instead of the winner (default 1)");
  sub->add_flag("--forecast", options->forecast,
                "With --search: also rank layouts the executor does not run yet (context "
                "parallel), as forecasts");
  sub->add_option("--resume-from", options->resume_from,
                  "Instead of the plan, say whether checkpoint CKPT (a step directory or a "
                  "checkpoint directory) resumes under this layout: same model, what is "
                  "resharded, what is carried over and what is lost");
  sub->callback([options, top, emit_rank, &context] {
    options->top_given = top->count() > 0;
    options->emit_rank_given = emit_rank->count() > 0;
    context.exit_code = RunPlanCommand(*options, *context.out, *context.err);
  });
}

}  // namespace accel::cli
