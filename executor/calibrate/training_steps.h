// Timing training steps of the executor's causal LM for `accel calibrate`'s step measurements
// (worker scaling, the tensor- and data-parallel reference steps). Included only by calibrate's .cc files.
#ifndef ACCEL_EXECUTOR_CALIBRATE_TRAINING_STEPS_H_
#define ACCEL_EXECUTOR_CALIBRATE_TRAINING_STEPS_H_

#include <torch/torch.h>

#include <vector>

#include "executor/models/causal_lm.h"
#include "executor/train/trainer.h"

namespace accel::exec {

// Seconds of each of `steps` training steps of `model` on `tokens` [b, s + 1] (inputs the first
// s, targets the last s): zero_grad, forward, the causal LM loss (vocabulary-parallel under
// tensor parallelism), backward and `sgd.step()`. Throws what LibTorch throws.
std::vector<double> TimeTrainingSteps(CausalLm& model, torch::optim::SGD& sgd,
                                      const torch::Tensor& tokens, int steps);

// Seconds of each of `steps` whole Trainer::Step calls on the one micro-batch `tokens`
// [b, s + 1]. Throws std::runtime_error with a step's error.
std::vector<double> TimeTrainerSteps(Trainer& trainer, const torch::Tensor& tokens, int steps);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_TRAINING_STEPS_H_
