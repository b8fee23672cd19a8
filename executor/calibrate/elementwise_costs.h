// `accel calibrate`'s measurement of the elementwise ops the step-time model times per element
// (planner/elementwise_ops.h names them and says what an element is). LibTorch stays in the .cc.
#ifndef ACCEL_EXECUTOR_CALIBRATE_ELEMENTWISE_COSTS_H_
#define ACCEL_EXECUTOR_CALIBRATE_ELEMENTWISE_COSTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accel::exec {

// One op's measured cost (accel.ir.ElementwiseCost): op as planner::ElementwiseOpName names it,
// dtype the compute dtype ("fp32" | "bf16"), seconds per element (what an element is for the op:
// planner/elementwise_ops.h), forward and backward.
struct ElementwiseOpCost {
  std::string op;
  std::string dtype;
  double forward_seconds_per_element = 0;
  double backward_seconds_per_element = 0;
};

// Seconds per element, forward and backward, of every op planner/elementwise_ops.h names, in
// planner::ElementwiseOp order, for compute dtype `dtype` ("fp32" | "bf16"), on one CPU thread,
// run as the executor runs them: fp32 parameters, activations in `dtype` (the residual stream,
// which the norms and the residual add read, in fp32), under the
// executor's autocast for bf16 (executor/train/autocast.h), on about 2^20 elements (4096 × 256
// rows for the norms, the MLP activations and the adds, 16 × 256 × 256 scores, 1024 × 1024
// logits, 8 × 8 × 512 × 32 rotated query values). Each figure is the median of 5 timed runs
// after one warm-up, over the elements. Errors: InvalidArgument for another dtype;
// Unimplemented when this LibTorch cannot run an op in that dtype on the CPU.
absl::StatusOr<std::vector<ElementwiseOpCost>> MeasureElementwiseCosts(
    const std::string& dtype);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_ELEMENTWISE_COSTS_H_
