#include "executor/checkpoint/plan_metadata.h"

#include <algorithm>

#include "checkpoint/hf_config.h"
#include "checkpoint/tp_layout.h"
#include "common/status_macros.h"
#include "executor/models/model_config.h"
#include "ir/plan_access.h"

namespace accel::exec {

absl::StatusOr<std::string> ConfigJsonFor(const ir::Plan& plan) {
  // The same checks the executor's model builder makes (an architecture it implements).
  ACCEL_RETURN_IF_ERROR(ModelConfigFromPlan(plan.model()).status());
  return HuggingFaceConfigJson(plan.model(), plan.precision().param_dtype());
}

std::string TpLayoutJsonFor(const ir::Plan& plan) {
  TpLayoutRecord record;
  record.degree = ir::AxisSize(plan, ir::Axis::kTp);
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) {
      if (p.tp_dim() >= 0) {
        record.parameters[p.name()] = {p.tp_dim(), std::max(1, p.tp_parts()), std::max(1, p.tp_replicas())};
      }
    }
  }
  return TpLayoutJson(record);
}

}  // namespace accel::exec
