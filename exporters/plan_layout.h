// The facts of a plan every writer reads, in the units of the plan (ranks, sequences, steps).
#ifndef ACCEL_EXPORTERS_PLAN_LAYOUT_H_
#define ACCEL_EXPORTERS_PLAN_LAYOUT_H_

#include <cstdint>
#include <string>

#include "ir/plan.pb.h"

namespace accel::exporters {

// The mesh degrees (1 for an axis the mesh lacks), the expert-parallel degree and the world.
struct PlanLayout {
  int64_t dp_replicate = 1;
  int64_t dp_shard = 1;
  int64_t cp = 1;
  int64_t tp = 1;
  int64_t pp = 1;
  int64_t ep = 1;  // Model.moe.expert_parallel; 1 for a dense model
  int64_t nodes = 1;
  int64_t devices_per_node = 1;
  int64_t world = 1;
  bool cpu = false;

  int64_t dp() const { return dp_replicate * dp_shard; }
};

// The layout of a plan: its Mesh axes by name, Model.moe.expert_parallel and its Topology.
PlanLayout ReadLayout(const ir::Plan& plan);

// "fp32", "bf16" or "fp16" (accel's spellings).
const char* DtypeName(ir::Dtype dtype);

// The shortest decimal that reads back as `value`, written as Python's repr writes floats:
// "0.0003", "1e-08", "10000.0", "1.5e+16".
std::string ShortFloat(double value);

}  // namespace accel::exporters

#endif  // ACCEL_EXPORTERS_PLAN_LAYOUT_H_
