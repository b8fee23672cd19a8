#ifndef ACCEL_IR_PLAN_WRITER_H_
#define ACCEL_IR_PLAN_WRITER_H_

#include <string>

#include "ir/plan.pb.h"

namespace accel::ir {

// Serializations of a plan. All are deterministic for the same plan (the IR has no maps).

// Canonical proto3 JSON with the .proto field names (snake_case), two-space indented.
std::string PlanToJson(const Plan& plan);

// Protobuf text format, the golden-file format.
std::string PlanToTextproto(const Plan& plan);

// Binary wire format (`--format binpb`), serialized deterministically.
std::string PlanToBinary(const Plan& plan);

// Limits for the terminal summary.
struct SummaryOptions {
  int max_groups_shown = 4;       // groups listed per process-group set before "… N more"
  int max_ranks_in_group = 8;     // ranks listed per group before abridging to "a, b, …, z"
};

// The readable summary `accel plan` prints: job, model and parameter counts, batch arithmetic,
// topology, mesh, process groups (abridged when large), stages, schedule, sharding and buckets,
// the per-rank memory table, resolved values with reasons, warnings and notes.
std::string PlanSummary(const Plan& plan, const SummaryOptions& options = {});

}  // namespace accel::ir

#endif  // ACCEL_IR_PLAN_WRITER_H_
