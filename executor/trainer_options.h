// The Trainer's options (executor/train/trainer.h TrainerOptions) from a plan's training and
// precision sections: the translation `accel worker` makes before it builds the Trainer.
#ifndef ACCEL_EXECUTOR_TRAINER_OPTIONS_H_
#define ACCEL_EXECUTOR_TRAINER_OPTIONS_H_

#include "absl/status/statusor.h"
#include "executor/train/trainer.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// The options of plan.training (optimizer kind adamw or sgd with its momentum, lr, betas, eps,
// weight decay, grad_clip_norm; the lr schedule constant, linear or cosine with warmup_steps,
// total_steps at least 1 and min_lr_ratio) and plan.precision (compute dtype fp32 when
// unspecified, bf16 or fp16; loss scaling none, dynamic or static with its initial scale and
// growth interval). Errors: InvalidArgument naming the field and the accepted values, e.g.
// "training.optimizer.kind is X: expected adamw or sgd", "training.lr_schedule.kind is X:
// expected constant, linear or cosine", "precision.compute is X: expected fp32, bf16 or fp16",
// "precision.loss_scaling is X: expected none, dynamic or static".
absl::StatusOr<TrainerOptions> TrainerOptionsFromPlan(const ir::Plan& plan);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAINER_OPTIONS_H_
