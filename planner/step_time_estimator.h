#ifndef ACCEL_PLANNER_STEP_TIME_ESTIMATOR_H_
#define ACCEL_PLANNER_STEP_TIME_ESTIMATOR_H_

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "planner/shard_layout.h"

// The step-time estimate of a plan (ir::StepTimeEstimate): per-stage compute
// (planner/step_compute.h), per-group communication with its overlap
// (planner/step_communication.h) and the pipeline bubble of the plan's schedule.
namespace accel::planner {

// Estimates one optimizer step of `plan` (complete through estimate-memory) on `profile`:
//   stage time = compute + exposed communication; the slowest stage sets the step;
//   bubble = (1 − h) · f / (1 − f) · stage time, f = Pipeline.bubble_fraction (the bubble's
//   share of the step for GPipe and 1F1B, (p − 1)/(m + p − 1); Narayanan et al. 2021 §2.2), 0
//   without pipelining, h = BubbleHiddenOnSharedCores; step = stage time + bubble;
//   tokens/s = Batch.tokens_per_step / step;
//   MFU = 3 · forward FLOPs of the global batch at tp = 1 (no recompute) /
//         (step · world_size · matmul peak of the compute dtype per worker) (Chowdhery et al.
//         2022, appendix B; the peak before matmul_efficiency).
// Errors: InvalidArgument for dtype or recompute names the planner never writes.
absl::StatusOr<ir::StepTimeEstimate> EstimateStepTime(const ir::Plan& plan,
                                                      const ir::DeviceProfile& profile);

// The share of the pipeline bubble that time-shared cores hide, in [0, 1]. A CPU node whose W
// workers outnumber its K shared cores (DeviceProfile.shared_cores_per_node; each worker's
// compute is already stretched by its share of them, planner/step_compute.h WorkerShare) keeps
// its cores busy while one stage's ranks idle in the bubble as long as its other workers can
// take them: min(1, (W − W_s) / K) of it is hidden, W_s the ranks of one stage on the node.
// Ranks are numbered pp-major (the mesh's outermost axis), so a node holds min(W, world / pp)
// ranks of each stage it has. 0 with per-device figures, W ≤ K (a worker cannot use more than
// its own cores) or no pipeline. Counting the whole bubble on shared cores overestimates such
// steps (bench/RESULTS.md, step time).
double BubbleHiddenOnSharedCores(const ir::Plan& plan, const ir::DeviceProfile& profile);

// EstimateStepTime written into `out` (e.g. plan.mutable_step_time(), built in place on the
// plan's arena), with the shard units' and buckets' per-stage totals given
// (planner/shard_layout.h): the planner's summary mode has no units or buckets in the plan.
// `explain` false leaves the communication terms' formulas and descriptions and the profile copy
// empty (the numbers are the same; the layout search reads only them).
// The plan-only form reads the totals with ShardTotalsFromPlan and explains. `out` must not be
// part of `plan` other than plan.step_time, which is not read.
absl::Status EstimateStepTimeInto(const ir::Plan& plan, const ir::DeviceProfile& profile,
                                  const ShardTotals& shards, bool explain,
                                  ir::StepTimeEstimate& out);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_STEP_TIME_ESTIMATOR_H_
