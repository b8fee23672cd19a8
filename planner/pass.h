#ifndef ACCEL_PLANNER_PASS_H_
#define ACCEL_PLANNER_PASS_H_

#include <memory>
#include <string_view>
#include <vector>

#include "planner/plan_context.h"

namespace accel::planner {

// One step of lowering a spec to a plan. A pass has a stable kebab-case name (used by
// --dump-after and in diagnostics), reads the spec and earlier passes' output, writes only its
// own part of the plan, and reports user errors through the context.
class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string_view name() const = 0;
  virtual void Run(PlanContext& context) = 0;
};

// The passes in pipeline order: validate-spec, resolve-auto, build-mesh, assign-stages,
// build-shard-groups, schedule-pipeline, estimate-memory, estimate-step-time.
std::vector<std::unique_ptr<Pass>> DefaultPasses();

std::unique_ptr<Pass> MakeValidateSpecPass();
std::unique_ptr<Pass> MakeResolveAutoPass();
std::unique_ptr<Pass> MakeBuildMeshPass();
std::unique_ptr<Pass> MakeAssignStagesPass();
std::unique_ptr<Pass> MakeBuildShardGroupsPass();
std::unique_ptr<Pass> MakeSchedulePipelinePass();
std::unique_ptr<Pass> MakeEstimateMemoryPass();
std::unique_ptr<Pass> MakeEstimateStepTimePass();

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_PASS_H_
