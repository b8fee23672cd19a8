// Test helpers shared by the parity suites that train a plan on several ranks and compare with
// one rank (tensor_parallel_test, pipeline_test).
#ifndef ACCEL_TESTS_EXECUTOR_TRAIN_PARITY_H_
#define ACCEL_TESTS_EXECUTOR_TRAIN_PARITY_H_

#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <map>
#include <string>

#include "ir/plan.pb.h"

namespace accel::exec::testing {

// The token ids every layout of `plan` reads: [steps, accumulation, dp·micro, seq + 1], drawn
// from a fixed seed; data-parallel rank d takes rows [d·micro, (d+1)·micro) of each micro-step,
// so every layout with the same global batch sees the same tokens.
inline torch::Tensor GlobalBatches(const ir::Plan& plan, int steps) {
  torch::manual_seed(7);
  return torch::randint(0, plan.model().vocab_size(),
                        {steps, plan.batch().grad_accum_steps(),
                         plan.batch().data_parallel_size() * plan.batch().micro_batch_size(),
                         plan.batch().seq_len() + 1},
                        torch::kLong);
}

// Largest |a − b| / (|b| + 1e-3) over every weight of b (a must hold the same names and shapes).
inline double MaxRelativeDifference(const std::map<std::string, torch::Tensor>& a,
                                    const std::map<std::string, torch::Tensor>& b) {
  double worst = 0;
  REQUIRE(a.size() == b.size());
  for (const auto& [name, w] : b) {
    REQUIRE(a.at(name).sizes() == w.sizes());
    worst = std::max(worst, ((a.at(name) - w).abs() / (w.abs() + 1e-3)).max().item<double>());
  }
  return worst;
}

}  // namespace accel::exec::testing

#endif  // ACCEL_TESTS_EXECUTOR_TRAIN_PARITY_H_
