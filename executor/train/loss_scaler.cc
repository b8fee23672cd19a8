#include "executor/train/loss_scaler.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace accel::exec {

absl::Status LossScaler::Validate(const LossScalerOptions& o) {
  auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  if (!positive(o.initial_scale)) {
    return absl::InvalidArgumentError(
        absl::StrCat("loss scaling: initial_scale must be finite and > 0, got ", o.initial_scale));
  }
  if (!positive(o.growth_factor) || o.growth_factor < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("loss scaling: growth_factor must be >= 1, got ", o.growth_factor));
  }
  if (!positive(o.backoff_factor) || o.backoff_factor >= 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("loss scaling: backoff_factor must be in (0, 1), got ", o.backoff_factor));
  }
  if (o.growth_interval < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("loss scaling: growth_interval must be >= 1, got ", o.growth_interval));
  }
  return absl::OkStatus();
}

bool LossScaler::Update(bool found_inf) {
  if (options_.kind == LossScaling::kNone) return true;
  if (options_.kind == LossScaling::kStatic) return !found_inf;
  if (found_inf) {
    scale_ *= options_.backoff_factor;
    growth_tracker_ = 0;
    return false;
  }
  if (++growth_tracker_ == options_.growth_interval) {
    // GradScaler keeps the old scale when the grown one would overflow to inf.
    const double grown = scale_ * options_.growth_factor;
    if (std::isfinite(grown)) scale_ = grown;
    growth_tracker_ = 0;
  }
  return true;
}

absl::Status LossScaler::Restore(double scale, int64_t growth_tracker) {
  if (!std::isfinite(scale) || scale <= 0 || growth_tracker < 0) {
    return absl::InvalidArgumentError(absl::StrCat("loss scaler state (scale ", scale,
                                                   ", growth tracker ", growth_tracker,
                                                   ") is invalid"));
  }
  scale_ = scale;
  growth_tracker_ = growth_tracker;
  return absl::OkStatus();
}

}  // namespace accel::exec
