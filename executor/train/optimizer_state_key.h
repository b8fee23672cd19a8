// The key of a parameter's entry in a torch::optim::Optimizer's state map: the tensor's address,
// as a string in LibTorch 1.x and as the pointer itself in 2.x.
#ifndef ACCEL_EXECUTOR_TRAIN_OPTIMIZER_STATE_KEY_H_
#define ACCEL_EXECUTOR_TRAIN_OPTIMIZER_STATE_KEY_H_

#include <torch/types.h>
#include <torch/version.h>

#include <string>

namespace accel::exec {

#if TORCH_VERSION_MAJOR >= 2
inline void* OptimizerStateKey(const torch::Tensor& t) { return t.unsafeGetTensorImpl(); }
#else
inline std::string OptimizerStateKey(const torch::Tensor& t) {
  return c10::guts::to_string(t.unsafeGetTensorImpl());
}
#endif

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_OPTIMIZER_STATE_KEY_H_
