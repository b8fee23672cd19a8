// Test helper: a job file's text through the real loader and planner, as `accel run` compiles it.
#ifndef ACCEL_TESTS_EXECUTOR_PLAN_FROM_YAML_H_
#define ACCEL_TESTS_EXECUTOR_PLAN_FROM_YAML_H_

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "ir/plan.pb.h"
#include "planner/planner.h"
#include "spec/loader.h"

namespace accel::exec::testing {

// Loads `yaml` (as "job.yaml") with --set `overrides` and plans it; a load or plan error fails the
// calling test with the rendered diagnostics.
inline ir::Plan PlanFromYaml(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  DiagnosticSink sink;
  SourceManager sources;
  spec::LoadOptions load;
  load.overrides = overrides;
  auto job = spec::LoadJobSpecFromString(yaml, "job.yaml", load, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job.has_value());
  planner::PlanResult planned = planner::BuildPlan(*job, {}, sink);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(planned.ok);
  return planned.plan;
}

}  // namespace accel::exec::testing

#endif  // ACCEL_TESTS_EXECUTOR_PLAN_FROM_YAML_H_
