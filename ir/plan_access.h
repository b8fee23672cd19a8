// Typed, name-based access to the parts of an accel.ir.Plan that code would otherwise look up by
// position: mesh axes and process-group sets. Torch-free (planner and executor both use it).
#ifndef ACCEL_IR_PLAN_ACCESS_H_
#define ACCEL_IR_PLAN_ACCESS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/plan.pb.h"

namespace accel::ir {

// The five mesh axes, outermost to innermost (the order of Mesh.axes).
enum class Axis { kPp, kDpReplicate, kDpShard, kCp, kTp };

// The axis' name in the plan: "pp", "dp_replicate", "dp_shard", "cp", "tp".
std::string_view AxisName(Axis axis);

// Size of `axis` in plan.mesh(), found by name; 1 when the mesh lacks it (a partial plan).
int64_t AxisSize(const Plan& plan, Axis axis);

// The process-group set called `name` ("world", "dp", "dp_shard", "tp", ...), or nullptr.
const ProcessGroupSet* FindGroupSet(const Plan& plan, std::string_view name);

// The ranks of the group of set `name` that contains global rank `rank`, ascending; empty when
// the plan has no such set or the rank is in none of its groups.
std::vector<int> GroupOf(const Plan& plan, std::string_view name, int rank);

}  // namespace accel::ir

#endif  // ACCEL_IR_PLAN_ACCESS_H_
