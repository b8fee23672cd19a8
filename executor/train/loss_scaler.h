// Loss scaling for fp16 training (Micikevicius et al. 2018, "Mixed Precision Training", §3.2):
// the loss is multiplied by a scale S before backward so small gradients survive fp16's range
// (smallest subnormal 2^-24), and the gradients are divided by S before the optimizer step.
// A step whose gradients overflowed (inf or NaN anywhere) is skipped.
//
// The dynamic policy is PyTorch's GradScaler (torch/amp/grad_scaler.py, _amp_update_scale_):
// on overflow the scale is multiplied by backoff_factor and the count of clean steps resets; after
// growth_interval consecutive clean steps it is multiplied by growth_factor. The static policy
// keeps the scale and still skips overflowing steps (DeepSpeed's static loss scale). Torch-free.
#ifndef ACCEL_EXECUTOR_TRAIN_LOSS_SCALER_H_
#define ACCEL_EXECUTOR_TRAIN_LOSS_SCALER_H_

#include <cstdint>

#include "absl/status/status.h"

namespace accel::exec {

enum class LossScaling { kNone, kStatic, kDynamic };

struct LossScalerOptions {
  LossScaling kind = LossScaling::kNone;
  // The scale of the first step (static: of every step). GradScaler's default 2^16. A power of
  // two keeps scaling and unscaling exact in floating point.
  double initial_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  // Clean steps before the scale grows (GradScaler's default 2000).
  int64_t growth_interval = 2000;
};

class LossScaler {
 public:
  // Errors (from Validate): InvalidArgument naming the option, e.g. "loss scaling: initial_scale
  // must be finite and > 0, got 0".
  explicit LossScaler(const LossScalerOptions& options) : options_(options), scale_(options.initial_scale) {}
  static absl::Status Validate(const LossScalerOptions& options);

  // The factor to multiply the loss by: 1 without loss scaling.
  double scale() const { return options_.kind == LossScaling::kNone ? 1.0 : scale_; }
  bool enabled() const { return options_.kind != LossScaling::kNone; }

  // Called once per optimizer step with whether any gradient is non-finite (found_inf, identical
  // on every rank). Returns whether the optimizer may step: false when the step must be skipped
  // (found_inf with loss scaling on). Updates the scale for the next step as described above.
  bool Update(bool found_inf);

  // Consecutive clean steps since the last change of the scale (dynamic policy).
  int64_t growth_tracker() const { return growth_tracker_; }

  // Restores the state Update left (from a checkpoint). Errors: InvalidArgument for a scale that
  // is not finite and > 0 or a negative tracker.
  absl::Status Restore(double scale, int64_t growth_tracker);

 private:
  LossScalerOptions options_;
  double scale_;
  int64_t growth_tracker_ = 0;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_LOSS_SCALER_H_
