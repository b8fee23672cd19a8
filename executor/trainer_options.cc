#include "executor/trainer_options.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "ir/enum_names.h"

namespace accel::exec {
namespace {

// Optimizer kind, its hyperparameters and gradient clipping.
absl::Status SetOptimizer(const ir::Training& t, TrainerOptions& options) {
  if (t.optimizer().kind() == ir::OPTIMIZER_KIND_ADAMW) {
    options.optimizer = OptimizerKind::kAdamW;
  } else if (t.optimizer().kind() == ir::OPTIMIZER_KIND_SGD) {
    options.optimizer = OptimizerKind::kSgd;
    options.momentum = t.optimizer().momentum();
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("training.optimizer.kind is ", std::string(ir::Name(t.optimizer().kind())),
                     ": expected adamw or sgd"));
  }
  options.beta1 = t.optimizer().beta1();
  options.beta2 = t.optimizer().beta2();
  options.adam_eps = t.optimizer().eps();
  options.weight_decay = t.optimizer().weight_decay();
  options.grad_clip_norm = t.grad_clip_norm();
  return absl::OkStatus();
}

absl::Status SetSchedule(const ir::Training& t, TrainerOptions& options) {
  const ir::LrSchedule& lr = t.lr_schedule();
  options.schedule.peak_lr = t.optimizer().lr();
  options.schedule.warmup_steps = lr.warmup_steps();
  options.schedule.total_steps = std::max<int64_t>(1, lr.total_steps());
  options.schedule.min_lr_ratio = lr.min_lr_ratio();
  options.schedule.cosine = lr.kind() == ir::LR_SCHEDULE_KIND_COSINE;
  options.schedule.linear = lr.kind() == ir::LR_SCHEDULE_KIND_LINEAR;
  if (!options.schedule.cosine && !options.schedule.linear &&
      lr.kind() != ir::LR_SCHEDULE_KIND_CONSTANT) {
    return absl::InvalidArgumentError(
        absl::StrCat("training.lr_schedule.kind is ", std::string(ir::Name(lr.kind())),
                     ": expected constant, linear or cosine"));
  }
  return absl::OkStatus();
}

// Compute precision and loss scaling.
absl::Status SetPrecision(const ir::Precision& precision, TrainerOptions& options) {
  const ir::Dtype compute = precision.compute_dtype();
  if (compute == ir::DTYPE_BF16) {
    options.precision = ComputePrecision::kBf16;
  } else if (compute == ir::DTYPE_FP16) {
    options.precision = ComputePrecision::kFp16;
  } else if (compute == ir::DTYPE_UNSPECIFIED || compute == ir::DTYPE_FP32) {
    options.precision = ComputePrecision::kFp32;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "precision.compute is ", std::string(ir::Name(compute)), ": expected fp32, bf16 or fp16"));
  }
  const ir::LossScaling scaling = precision.loss_scaling();
  if (scaling == ir::LOSS_SCALING_DYNAMIC || scaling == ir::LOSS_SCALING_STATIC) {
    options.loss_scaling.kind =
        scaling == ir::LOSS_SCALING_DYNAMIC ? LossScaling::kDynamic : LossScaling::kStatic;
    options.loss_scaling.initial_scale = precision.initial_loss_scale();
    options.loss_scaling.growth_interval = precision.loss_scale_growth_interval();
  } else if (scaling != ir::LOSS_SCALING_UNSPECIFIED && scaling != ir::LOSS_SCALING_NONE) {
    return absl::InvalidArgumentError(absl::StrCat("precision.loss_scaling is ",
                                                   std::string(ir::Name(scaling)),
                                                   ": expected none, dynamic or static"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainerOptions> TrainerOptionsFromPlan(const ir::Plan& plan) {
  TrainerOptions options;
  // The order of the checks is the order of the messages: optimizer, schedule, precision.
  ACCEL_RETURN_IF_ERROR(SetOptimizer(plan.training(), options));
  ACCEL_RETURN_IF_ERROR(SetSchedule(plan.training(), options));
  ACCEL_RETURN_IF_ERROR(SetPrecision(plan.precision(), options));
  return options;
}

}  // namespace accel::exec
