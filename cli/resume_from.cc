#include "cli/resume_from.h"

#include <vector>

#include "absl/status/statusor.h"
#include "cli/pre_launch_checks.h"
#include "common/exit_codes.h"
#include "launcher/resume_check.h"

namespace accel::cli {

int RunResumeFrom(const ir::Plan& plan, const spec::JobSpec& spec, const SourceManager& sources,
                  const std::string& checkpoint, std::ostream& out, std::ostream& err) {
  absl::StatusOr<exec::ResumeReport> report = exec::CheckResume(plan, checkpoint);
  if (!report.ok()) {
    err << "error: cannot resume from " << checkpoint << ": " << report.status().message() << "\n";
    return kExitInvalid;
  }
  std::vector<exec::PlanIssue> issues = report->errors;
  issues.insert(issues.end(), report->warnings.begin(), report->warnings.end());
  DiagnosticSink sink;
  ReportPlanIssues(issues, spec, sink);
  if (!sink.diagnostics().empty()) err << RenderText(sink.diagnostics(), sources);
  out << exec::ResumeReportText(*report);
  return report->errors.empty() ? kExitOk : kExitInvalid;
}

}  // namespace accel::cli
