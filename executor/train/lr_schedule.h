// Learning-rate schedule: linear warmup, then cosine decay to a floor (Loshchilov & Hutter 2017,
// SGDR without restarts; the GPT-3/nanoGPT schedule). Torch-free.
#ifndef ACCEL_EXECUTOR_TRAIN_LR_SCHEDULE_H_
#define ACCEL_EXECUTOR_TRAIN_LR_SCHEDULE_H_

#include <cstdint>

#include "absl/status/status.h"

namespace accel::exec {

// Shape of the schedule. Steps count optimizer updates (not micro-batches).
struct LrSchedule {
  // Peak learning rate, reached at the end of warmup.
  double peak_lr = 1e-3;
  // Updates of linear warmup: update s < warmup_steps uses peak_lr * (s + 1) / warmup_steps.
  int64_t warmup_steps = 0;
  // Total updates of the run; the cosine reaches its floor at update total_steps (and stays there).
  // With cosine false the rate stays at peak_lr after warmup.
  int64_t total_steps = 1;
  // Floor as a fraction of peak_lr, in [0, 1].
  double min_lr_ratio = 0.1;
  // Whether to decay after warmup along a cosine.
  bool cosine = true;
  // With cosine false: decay linearly to the floor (Megatron-LM's "linear" decay style).
  bool linear = false;
};

// Checks the ranges documented on LrSchedule. Errors: InvalidArgument naming the field.
absl::Status ValidateLrSchedule(const LrSchedule& schedule);

// Learning rate of update step (0-based). After warmup, with
// p = clamp((step - warmup) / max(1, total - warmup), 0, 1):
//   cosine: lr = min + (peak - min) * (1 + cos(pi * p)) / 2, min = peak * min_lr_ratio;
//   linear: lr = peak - (peak - min) * p; neither: lr = peak.
double LearningRateAt(const LrSchedule& schedule, int64_t step);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_LR_SCHEDULE_H_
