#include "cli/pre_launch_checks.h"

#include <string>

#include "absl/strings/str_replace.h"

namespace accel::cli {
namespace {

void ReportIssue(const exec::PlanIssue& issue, const spec::JobSpec& spec, DiagnosticSink& sink) {
  const spec::FieldSource source = spec.Locate(issue.field);
  const std::string file = source.file.empty() ? spec.file : source.file;
  const SourceLocation at = source.value.known() ? source.value : source.key;
  Diagnostic& d = issue.warning ? sink.Warning(issue.code, file, at, issue.field, issue.message)
                                : sink.Error(issue.code, file, at, issue.field, issue.message);
  if (issue.note_field.empty()) return;
  const spec::FieldSource noted = spec.Locate(issue.note_field);
  if (noted.origin != spec::Origin::kDefault) d.Note(noted.file, noted.value, issue.note);
  if (noted.origin == spec::Origin::kModelConfig) {
    d.Note(absl::StrReplaceAll(issue.advice_if_from_model_config, {{"{file}", noted.file}}));
  } else if (!issue.advice_otherwise.empty()) {
    d.Note(issue.advice_otherwise);
  }
}

}  // namespace

void ReportPlanIssues(const std::vector<exec::PlanIssue>& issues, const spec::JobSpec& spec,
                      DiagnosticSink& sink) {
  for (const exec::PlanIssue& issue : issues) ReportIssue(issue, spec, sink);
}

std::function<void(const std::vector<exec::PlanIssue>&)> LocatedIssueReporter(
    const spec::JobSpec& spec, const SourceManager& sources, std::ostream& err) {
  return [&spec, &sources, &err](const std::vector<exec::PlanIssue>& issues) {
    DiagnosticSink sink;
    ReportPlanIssues(issues, spec, sink);
    err << RenderText(sink.diagnostics(), sources);
  };
}

void CheckBeforeLaunch(const ir::Plan& plan, const spec::JobSpec& spec,
                       const exec::ExecutorCapabilities& capabilities, DiagnosticSink& sink) {
  ReportPlanIssues(exec::CheckBeforeLaunch(plan, capabilities), spec, sink);
}

}  // namespace accel::cli
