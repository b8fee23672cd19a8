#include "executor/train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "absl/strings/str_cat.h"

namespace accel::exec {

absl::Status ValidateLrSchedule(const LrSchedule& s) {
  if (!(s.peak_lr > 0)) return absl::InvalidArgumentError(absl::StrCat("lr must be > 0, got ", s.peak_lr));
  if (s.warmup_steps < 0) return absl::InvalidArgumentError("warmup_steps must be >= 0");
  if (s.total_steps < 1) return absl::InvalidArgumentError("total_steps must be >= 1");
  if (!(s.min_lr_ratio >= 0 && s.min_lr_ratio <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("min_lr_ratio must be in [0, 1], got ", s.min_lr_ratio));
  }
  return absl::OkStatus();
}

double LearningRateAt(const LrSchedule& s, int64_t step) {
  if (step < s.warmup_steps) {
    return s.peak_lr * static_cast<double>(step + 1) / static_cast<double>(s.warmup_steps);
  }
  if (!s.cosine && !s.linear) return s.peak_lr;
  const double span = static_cast<double>(std::max<int64_t>(1, s.total_steps - s.warmup_steps));
  const double p = std::clamp(static_cast<double>(step - s.warmup_steps) / span, 0.0, 1.0);
  const double floor = s.peak_lr * s.min_lr_ratio;
  if (!s.cosine) return s.peak_lr - (s.peak_lr - floor) * p;
  return floor + (s.peak_lr - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * p));
}

}  // namespace accel::exec
