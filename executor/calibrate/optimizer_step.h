// `accel calibrate`'s measurement of the optimizer step
// (accel.ir.DeviceProfile.adamw_seconds_per_parameter). On the CPU the executor steps
// torch::optim::AdamW, about ten kernels per tensor, each a pass over parameter-sized fp32 tensors;
// on the 2-core build VM that took about 3.3 ns per parameter against the 1.7 ns that AdamW's 28 B
// per parameter (DeepSpeed's and Megatron's count of its reads and writes) take at the measured
// copy bandwidth. Plain types only; LibTorch stays in the .cc.
#ifndef ACCEL_EXECUTOR_CALIBRATE_OPTIMIZER_STEP_H_
#define ACCEL_EXECUTOR_CALIBRATE_OPTIMIZER_STEP_H_

#include <cstdint>

#include "absl/status/statusor.h"

namespace accel::exec {

// Seconds per parameter of one torch::optim::AdamW step as the executor's trainer configures it
// (betas 0.9 / 0.95, eps 1e-8, weight decay 0.1), on one thread, over `parameters` fp32
// parameters (≥ 262,144, rounded down to whole 256 × 1024 tensors, the shape of a block's MLP
// weight in the benchmark's model) with random gradients and states: the median of 5 timed steps
// after 2 warm-up steps (the first creates the states), over the parameters. Errors:
// InvalidArgument for fewer parameters; Internal for a LibTorch failure.
absl::StatusOr<double> MeasureAdamWSecondsPerParameter(int64_t parameters);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_OPTIMIZER_STEP_H_
