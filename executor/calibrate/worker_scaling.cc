#include "executor/calibrate/worker_scaling.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "executor/blas_threads.h"
#include "executor/calibrate/every_core.h"
#include "executor/calibrate/timing.h"
#include "executor/calibrate/training_steps.h"
#include "executor/models/causal_lm.h"

namespace accel::exec {
namespace {

using calibrate::Median;

constexpr int kWarmUpSteps = 2;
constexpr int kTimedSteps = 7;

// The model and batch of MeasureTrainingStepSeconds: the step-time benchmark's GPT-2 width
// (bench/step_time/base.yaml) with half its layers: fewer layers keep the rounds over every
// worker count short, while a step must stay long against scheduling and timer noise.
ModelConfig StepModel() {
  ModelConfig config;
  config.arch = ModelArch::kGpt2;
  config.num_layers = 2;
  return config;
}

double TimedSteps(CausalLm& model) {
  torch::optim::SGD sgd(model.parameters(), torch::optim::SGDOptions(1e-3));
  const torch::Tensor tokens = torch::randint(0, model.config().vocab_size, {8, 129}, torch::kLong);
  std::vector<double> seconds = TimeTrainingSteps(model, sgd, tokens, kWarmUpSteps + kTimedSteps);
  seconds.erase(seconds.begin(), seconds.begin() + kWarmUpSteps);
  return Median(seconds);
}

// Step seconds of every (workers, threads) count in turn: MeasureTrainingStepSeconds in that
// many processes at once, the mean over the processes.
absl::StatusOr<std::vector<double>> RoundSeconds(const std::vector<std::pair<int, int>>& counts) {
  std::vector<double> seconds;
  for (const auto& [workers, threads] : counts) {
    const int t = threads;
    absl::StatusOr<std::vector<double>> mean = MeasureOnEveryCore(workers, [t] {
      absl::StatusOr<double> s = MeasureTrainingStepSeconds(t);
      if (!s.ok()) return absl::StatusOr<std::vector<double>>(s.status());
      return absl::StatusOr<std::vector<double>>(std::vector<double>{*s});
    });
    if (!mean.ok()) return mean.status();
    seconds.push_back(mean->at(0));
  }
  return seconds;
}

}  // namespace

absl::StatusOr<double> MeasureTrainingStepSeconds(int threads) {
  if (threads < 1) {
    return absl::InvalidArgumentError("a training step needs at least 1 thread, not " +
                                      std::to_string(threads));
  }
  at::set_num_threads(threads);
  SetBlasThreads(threads);
  absl::StatusOr<std::shared_ptr<CausalLm>> model = BuildCausalLm(StepModel(), 1234);
  if (!model.ok()) return model.status();
  try {
    return TimedSteps(**model);
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("cannot time a training step: ") + e.what());
  }
}

absl::StatusOr<std::vector<WorkerEfficiency>> MeasureWorkerScaling(
    int cores, int rounds, std::vector<std::pair<double, double>>* ranges) {
  if (cores < 1) cores = 1;
  if (rounds < 1) rounds = 1;
  // (workers, threads per worker): one worker on every core, one per core, two per core.
  const std::vector<std::pair<int, int>> counts =
      cores == 1 ? std::vector<std::pair<int, int>>{{1, 1}, {2, 1}}
                 : std::vector<std::pair<int, int>>{{1, cores}, {cores, 1}, {2 * cores, 1}};
  // efficiencies[i][r]: count i's efficiency in round r. Every round times every count back to
  // back, so a round's ratios share the machine's state of those seconds.
  std::vector<std::vector<double>> efficiencies(counts.size());
  for (int round = 0; round < rounds; ++round) {
    absl::StatusOr<std::vector<double>> seconds = RoundSeconds(counts);
    if (!seconds.ok()) return seconds.status();
    // The reference: one single-threaded worker per core, as the per-core figures were measured.
    const double reference = cores == 1 ? (*seconds)[0] : (*seconds)[1];
    for (size_t i = 0; i < counts.size(); ++i) {
      efficiencies[i].push_back(reference * counts[i].first / cores / (*seconds)[i]);
    }
  }
  std::vector<WorkerEfficiency> out;
  if (ranges != nullptr) ranges->clear();
  for (size_t i = 0; i < counts.size(); ++i) {
    out.push_back({counts[i].first, Median(efficiencies[i])});
    if (ranges == nullptr) continue;
    const auto [low, high] = std::minmax_element(efficiencies[i].begin(), efficiencies[i].end());
    ranges->push_back({*low, *high});
  }
  return out;
}

}  // namespace accel::exec
