#include "executor/calibrate/data_parallel_step.h"

#include <torch/torch.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "executor/calibrate/skippable_group.h"
#include "executor/calibrate/training_steps.h"
#include "executor/models/causal_lm.h"
#include "executor/train/trainer.h"

namespace accel::exec {
namespace {

// One rank's trainer around `group`; its steps are timed whole (Trainer::Step).
TimeSteps MakeTrainerSteps(std::shared_ptr<SkippableGroup> group, int64_t bucket_elements) {
  absl::StatusOr<std::shared_ptr<CausalLm>> model = BuildCausalLm(ModelConfig{}, 1234, {});
  if (!model.ok()) throw std::runtime_error(std::string(model.status().message()));
  TrainerOptions options;
  options.bucket_bytes = bucket_elements * 4;
  absl::StatusOr<std::unique_ptr<Trainer>> created =
      Trainer::Create(*model, CausalLmLoss(), options, group);
  if (!created.ok()) throw std::runtime_error(std::string(created.status().message()));
  std::shared_ptr<Trainer> trainer = std::move(*created);
  const torch::Tensor tokens = torch::randint(0, ModelConfig{}.vocab_size, {8, 129}, torch::kLong);
  return [trainer, tokens](int steps) { return TimeTrainerSteps(*trainer, tokens, steps); };
}

}  // namespace

absl::StatusOr<PairedStepSample> MeasureDataParallelStep(int group_size, int rounds,
                                                         int64_t bucket_elements,
                                                         const std::string& store_file) {
  if (group_size < 2 || rounds < 1 || bucket_elements < 1) {
    return absl::InvalidArgumentError(
        "a data-parallel step needs at least 2 ranks, 1 round and 1 element per bucket, not " +
        std::to_string(group_size) + ", " + std::to_string(rounds) + " and " +
        std::to_string(bucket_elements));
  }
  constexpr int kTimedSteps = 3;  // per round and mode, after a warm-up step
  return MeasurePairedStep("the data-parallel step", group_size, rounds, kTimedSteps,
                           SkippedCalls::kAsync, store_file,
                           [bucket_elements](std::shared_ptr<SkippableGroup> group) {
                             return MakeTrainerSteps(std::move(group), bucket_elements);
                           });
}

}  // namespace accel::exec
