// `accel run`'s checks before any worker starts (launcher/plan_support.h), reported as located
// diagnostics (job.yaml:L:C) at the spec fields they name.
#ifndef ACCEL_CLI_PRE_LAUNCH_CHECKS_H_
#define ACCEL_CLI_PRE_LAUNCH_CHECKS_H_

#include <functional>
#include <ostream>
#include <vector>

#include "common/diagnostics.h"
#include "ir/plan.pb.h"
#include "launcher/executor_support.h"
#include "launcher/plan_support.h"
#include "spec/job_spec.h"

namespace accel::cli {

// Adds one error per issue at the value of its field in spec (or at its nearest located ancestor:
// spec::JobSpec::Locate). An issue's note goes at note_field's value unless that was defaulted;
// its advice is advice_if_from_model_config when note_field came from model.config ("{file}"
// replaced by that config.json's path), else advice_otherwise.
void ReportPlanIssues(const std::vector<exec::PlanIssue>& issues, const spec::JobSpec& spec,
                      DiagnosticSink& sink);

// exec::CheckBeforeLaunch, reported by ReportPlanIssues.
void CheckBeforeLaunch(const ir::Plan& plan, const spec::JobSpec& spec,
                       const exec::ExecutorCapabilities& capabilities, DiagnosticSink& sink);

// An exec::RunOptions::report_issues for `accel run`: renders the launcher's issues located in
// spec (ReportPlanIssues) to err. spec, sources and err must outlive it.
std::function<void(const std::vector<exec::PlanIssue>&)> LocatedIssueReporter(
    const spec::JobSpec& spec, const SourceManager& sources, std::ostream& err);

}  // namespace accel::cli

#endif  // ACCEL_CLI_PRE_LAUNCH_CHECKS_H_
