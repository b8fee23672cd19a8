#ifndef ACCEL_PLANNER_STEP_TIME_DIFF_H_
#define ACCEL_PLANNER_STEP_TIME_DIFF_H_

#include <string>

#include "ir/plan.pb.h"

// Why one step-time estimate is slower than another: the term of
// step = compute + exposed communication + bubble (ir::StepTimeEstimate) that differs most.
namespace accel::planner {

// The term of `slower` that exceeds the same term of `faster` by the most seconds. Terms:
// "compute" (compute_seconds of the slowest stage without its host optimizer step), "host
// optimizer step" (that stage's StageComputeTime.host_seconds: sharding offload), "exposed
// <group> communication" for each process-group set (Σ CommunicationTime.exposed_seconds of
// that group; "host_link" for offload copies), "pipeline bubble" (bubble_seconds).
struct StepTimeDifference {
  std::string term;
  double seconds = 0;  // slower's term − faster's term; ≤ 0 when no term is larger
  // The two step_seconds are equal (within 1e-9 relative): `term` is larger, but other terms
  // are smaller by as much (e.g. the same buckets all-reduced over dp_replicate instead of dp).
  bool same_step = false;
};

StepTimeDifference LargestDifference(const ir::StepTimeEstimate& slower,
                                     const ir::StepTimeEstimate& faster);

// "exposed tp communication +12.3 ms" (the difference in ms, or s above 10 s);
// "no term larger (tie)" when seconds ≤ 0; "tie (exposed dp_replicate communication +31.0 ms,
// offset by others)" for the same step time.
std::string DifferenceText(const StepTimeDifference& difference);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_STEP_TIME_DIFF_H_
