#include "cli/compile_job.h"

#include "spec/loader.h"

namespace accel::cli {

CompiledJob CompileJob(const std::string& path, const std::vector<std::string>& overrides,
                       const planner::PlanOptions& options, DiagnosticSink& sink,
                       SourceManager& sources) {
  CompiledJob out;
  spec::LoadOptions load;
  load.overrides = overrides;
  out.job = spec::LoadJobSpec(path, load, sink, sources);
  if (out.job) out.planned = planner::BuildPlan(*out.job, options, sink);
  return out;
}

}  // namespace accel::cli
