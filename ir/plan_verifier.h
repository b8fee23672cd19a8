#ifndef ACCEL_IR_PLAN_VERIFIER_H_
#define ACCEL_IR_PLAN_VERIFIER_H_

#include <string>
#include <vector>

#include "ir/plan.pb.h"

namespace accel::ir {

// Checks the structural invariants of a plan, on whatever parts of it are filled (so it can run
// after every planner pass): the mesh product equals the world size; rank placements are
// consistent with the mesh strides and topology; every rank is in exactly one group of every
// process-group set, and each group varies exactly the set's axes; pipeline stages cover all
// layers in order without gaps or overlaps; shard units and buckets cover every parameter
// exactly once with per-parameter shard counts ceil(local / degree); every stage's schedule runs each microbatch's forward before its backward, and
// the schedules are deadlock-free (simulated: every send meets its matching receive); recompute
// FULL or SELECTIVE lists one module per layer, NONE none, each module once; every enum field
// the executor reads holds a known value, UNSPECIFIED only where plan.proto allows it.
// Safe on any plan, including one read from an untrusted file (`accel worker --plan`): counts
// that overflow, references out of range and sizes that do not fit the plan's own op lists are
// violations, never undefined behaviour or an unbounded allocation; the group check runs only
// when the mesh and the rank placements are consistent.
// Returns one human-readable violation per line; empty means the plan is well-formed.
// A violation is a bug in the planner, never a user error.
std::vector<std::string> VerifyPlan(const Plan& plan);

}  // namespace accel::ir

#endif  // ACCEL_IR_PLAN_VERIFIER_H_
