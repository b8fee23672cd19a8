#include "ir/plan_access.h"

namespace accel::ir {

std::string_view AxisName(Axis axis) {
  switch (axis) {
    case Axis::kPp: return "pp";
    case Axis::kDpReplicate: return "dp_replicate";
    case Axis::kDpShard: return "dp_shard";
    case Axis::kCp: return "cp";
    case Axis::kTp: return "tp";
  }
  return "";
}

int64_t AxisSize(const Plan& plan, Axis axis) {
  const std::string_view name = AxisName(axis);
  for (const MeshAxis& a : plan.mesh().axes()) {
    if (a.name() == name) return a.size();
  }
  return 1;
}

const ProcessGroupSet* FindGroupSet(const Plan& plan, std::string_view name) {
  for (const ProcessGroupSet& set : plan.process_groups()) {
    if (set.name() == name) return &set;
  }
  return nullptr;
}

std::vector<int> GroupOf(const Plan& plan, std::string_view name, int rank) {
  const ProcessGroupSet* set = FindGroupSet(plan, name);
  if (set == nullptr) return {};
  for (const RankGroup& group : set->groups()) {
    for (int32_t r : group.ranks()) {
      if (r == rank) return std::vector<int>(group.ranks().begin(), group.ranks().end());
    }
  }
  return {};
}

}  // namespace accel::ir
