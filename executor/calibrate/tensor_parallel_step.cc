#include "executor/calibrate/tensor_parallel_step.h"

#include <torch/torch.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "executor/calibrate/skippable_group.h"
#include "executor/calibrate/training_steps.h"
#include "executor/models/causal_lm.h"

namespace accel::exec {

absl::StatusOr<TensorParallelStepSample> MeasureTensorParallelStep(int group_size, int rounds,
                                                                  const std::string& store_file) {
  if (group_size < 2 || rounds < 1) {
    return absl::InvalidArgumentError("a tensor-parallel step needs at least 2 ranks and 1 round, not " +
                                      std::to_string(group_size) + " and " + std::to_string(rounds));
  }
  constexpr int kTimedSteps = 3;  // per round and mode, after a warm-up step
  const MakeSteps make = [](std::shared_ptr<SkippableGroup> group) -> TimeSteps {
    TensorParallel tp;
    tp.group = group;
    absl::StatusOr<std::shared_ptr<CausalLm>> built = BuildCausalLm(ModelConfig{}, 1234, tp);
    if (!built.ok()) throw std::runtime_error(std::string(built.status().message()));
    std::shared_ptr<CausalLm> model = *built;
    auto sgd = std::make_shared<torch::optim::SGD>(model->parameters(), torch::optim::SGDOptions(1e-3));
    const torch::Tensor tokens = torch::randint(0, ModelConfig{}.vocab_size, {8, 129}, torch::kLong);
    return [model, sgd, tokens](int n) { return TimeTrainingSteps(*model, *sgd, tokens, n); };
  };
  return MeasurePairedStep("the tensor-parallel step", group_size, rounds, kTimedSteps,
                           SkippedCalls::kBlocking, store_file, make);
}

}  // namespace accel::exec
