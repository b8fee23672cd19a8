#include "executor/train/fused_adamw.h"

#include <torch/torch.h>
#include <torch/version.h>

#include "executor/train/optimizer_state_key.h"

#define ACCEL_HAS_FUSED_ADAMW \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1))

namespace accel::exec {

bool FusedAdamWAvailable() { return ACCEL_HAS_FUSED_ADAMW; }

torch::Tensor FusedAdamW::step(LossClosure closure) {
  TORCH_CHECK(FusedAdamWAvailable(), "at::_fused_adamw_ needs LibTorch 2.1 or later");
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups()) {
    auto& options = static_cast<torch::optim::AdamWOptions&>(group.options());
    TORCH_CHECK(!options.amsgrad(), "FusedAdamW does not support amsgrad");
    std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto& slot = state_[OptimizerStateKey(p)];
      if (slot == nullptr) {
        auto fresh = std::make_unique<torch::optim::AdamWParamState>();
        fresh->step(0);
        fresh->exp_avg(torch::zeros_like(p, at::MemoryFormat::Preserve));
        fresh->exp_avg_sq(torch::zeros_like(p, at::MemoryFormat::Preserve));
        slot = std::move(fresh);
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*slot);
      StepCounter& counter = steps_[p.unsafeGetTensorImpl()];
      if (!counter.device.defined() || counter.host != state.step()) {
        counter.device = torch::full({}, static_cast<double>(state.step()),
                                     torch::TensorOptions().dtype(torch::kFloat).device(p.device()));
        counter.host = state.step();
      }
      params.push_back(p);
      grads.push_back(p.grad());
      exp_avgs.push_back(state.exp_avg());
      exp_avg_sqs.push_back(state.exp_avg_sq());
      steps.push_back(counter.device);
      state.step(state.step() + 1);
      counter.host = state.step();
    }
    if (params.empty()) continue;
#if ACCEL_HAS_FUSED_ADAMW
    // The kernel reads the step count as given, so it is advanced first (as torch.optim.AdamW's
    // _fused_adamw does): the first update uses step 1, bias corrections 1 - beta^1.
    at::_foreach_add_(steps, 1);
    const auto [beta1, beta2] = options.betas();
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps,
                      options.lr(), beta1, beta2, options.weight_decay(), options.eps(),
                      /*amsgrad=*/false, /*maximize=*/false);
#endif
  }
  return loss;
}

}  // namespace accel::exec
