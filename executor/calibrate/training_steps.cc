#include "executor/calibrate/training_steps.h"

#include <stdexcept>
#include <string>

#include "executor/calibrate/timing.h"
#include "executor/train/trainer.h"

namespace accel::exec {

std::vector<double> TimeTrainingSteps(CausalLm& model, torch::optim::SGD& sgd,
                                      const torch::Tensor& tokens, int steps) {
  const torch::Tensor input = tokens.narrow(1, 0, tokens.size(1) - 1);
  const torch::Tensor targets = tokens.narrow(1, 1, tokens.size(1) - 1);
  std::vector<double> seconds;
  for (int step = 0; step < steps; ++step) {
    const calibrate::Clock::time_point start = calibrate::Clock::now();
    sgd.zero_grad();
    torch::Tensor loss = model.ForwardLoss(input, 0, targets);
    loss.backward();
    sgd.step();
    seconds.push_back(calibrate::Seconds(start));
  }
  return seconds;
}

std::vector<double> TimeTrainerSteps(Trainer& trainer, const torch::Tensor& tokens, int steps) {
  std::vector<double> seconds;
  for (int step = 0; step < steps; ++step) {
    const calibrate::Clock::time_point start = calibrate::Clock::now();
    absl::StatusOr<StepResult> result = trainer.Step({tokens});
    if (!result.ok()) throw std::runtime_error(std::string(result.status().message()));
    seconds.push_back(calibrate::Seconds(start));
  }
  return seconds;
}

}  // namespace accel::exec
