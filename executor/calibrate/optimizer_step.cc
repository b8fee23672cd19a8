#include "executor/calibrate/optimizer_step.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "executor/blas_threads.h"
#include "executor/calibrate/timing.h"
#include "executor/train/trainer.h"

namespace accel::exec {

absl::StatusOr<double> MeasureAdamWSecondsPerParameter(int64_t parameters) {
  constexpr int64_t kRows = 256, kCols = 1024;
  const int64_t tensors = parameters / (kRows * kCols);
  if (tensors < 1) {
    return absl::InvalidArgumentError("the optimizer step needs at least " +
                                      std::to_string(kRows * kCols) + " parameters, not " +
                                      std::to_string(parameters));
  }
  at::set_num_threads(1);
  SetBlasThreads(1);
  try {
    std::vector<torch::Tensor> params;
    for (int64_t i = 0; i < tensors; ++i) {
      params.push_back(torch::randn({kRows, kCols}).requires_grad_(true));
      params.back().mutable_grad() = torch::randn({kRows, kCols});
    }
    // The trainer's betas and eps; weight decay as the spec's default (training.optimizer).
    const TrainerOptions trainer;
    torch::optim::AdamW adamw(params, torch::optim::AdamWOptions(1e-3)
                                          .betas({trainer.beta1, trainer.beta2})
                                          .eps(trainer.adam_eps)
                                          .weight_decay(0.1));
    std::vector<double> seconds;
    for (int step = 0; step < 7; ++step) {
      const calibrate::Clock::time_point start = calibrate::Clock::now();
      adamw.step();
      if (step >= 2) seconds.push_back(calibrate::Seconds(start));
    }
    return calibrate::Median(seconds) / static_cast<double>(tensors * kRows * kCols);
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("cannot time the AdamW step: ") + e.what());
  }
}

}  // namespace accel::exec
