// A job file compiled the way every subcommand that needs a plan does: loaded with its --set
// overrides, then, when it loaded, planned.
#ifndef ACCEL_CLI_COMPILE_JOB_H_
#define ACCEL_CLI_COMPILE_JOB_H_

#include <optional>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "planner/planner.h"
#include "spec/job_spec.h"

namespace accel::cli {

// The loaded spec and its plan. `planned` is default (ok false) when the spec did not load.
struct CompiledJob {
  std::optional<spec::JobSpec> job;
  planner::PlanResult planned;

  bool ok() const { return job.has_value() && planned.ok; }
};

// Loads `path` with `overrides` (spec::LoadJobSpec) and plans it with `options`
// (planner::BuildPlan). Every diagnostic goes to `sink`; `sources` keeps the texts they point
// into, for rendering. Callers decide how to report and which checks follow.
CompiledJob CompileJob(const std::string& path, const std::vector<std::string>& overrides,
                       const planner::PlanOptions& options, DiagnosticSink& sink,
                       SourceManager& sources);

}  // namespace accel::cli

#endif  // ACCEL_CLI_COMPILE_JOB_H_
