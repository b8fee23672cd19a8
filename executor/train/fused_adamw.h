// AdamW (Loshchilov & Hutter 2019) as one fused multi-tensor CUDA kernel per parameter group,
// LibTorch's at::_fused_adamw_ (the kernel behind torch.optim.AdamW(fused=True)), instead of
// torch::optim::AdamW's ~10 kernels per tensor. Same update rule, hyperparameters and state
// (AdamWParamState: step, exp_avg, exp_avg_sq), so checkpoints, sharded state and the learning
// rate schedule (group options) treat it as torch::optim::AdamW; only the order of the fp32
// roundings differs. The trainer uses it for CUDA parameters when FusedAdamWAvailable().
#ifndef ACCEL_EXECUTOR_TRAIN_FUSED_ADAMW_H_
#define ACCEL_EXECUTOR_TRAIN_FUSED_ADAMW_H_

#include <torch/optim/adamw.h>

#include <unordered_map>
#include <vector>

namespace accel::exec {

// True when this LibTorch has at::_fused_adamw_ (2.1 and later); it runs on CUDA tensors.
bool FusedAdamWAvailable();

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;

  // One at::_fused_adamw_ per group over the parameters that have gradients (all on one CUDA
  // device, fp32 or all the same dtype). amsgrad is not supported (the trainer never sets it).
  // Throws c10::Error where FusedAdamWAvailable() is false.
  torch::Tensor step(LossClosure closure = nullptr) override;

 private:
  // The kernel counts steps in a device tensor per parameter; `host` mirrors it so a state
  // replaced by a checkpoint load (AdamWParamState::step) is noticed and re-read.
  struct StepCounter {
    at::Tensor device;
    int64_t host = 0;
  };
  std::unordered_map<const void*, StepCounter> steps_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_FUSED_ADAMW_H_
