// Scoped mixed-precision compute (autocast) for CPU and CUDA, hiding the API differences between
// LibTorch 1.13 and 2.x.
#ifndef ACCEL_EXECUTOR_TRAIN_AUTOCAST_H_
#define ACCEL_EXECUTOR_TRAIN_AUTOCAST_H_

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

namespace accel::exec {

// Compute precision of forward passes. Parameters, gradients and optimizer state stay fp32.
enum class ComputePrecision { kFp32, kBf16, kFp16 };

// While alive, eligible ops on device_type run in bfloat16 (kBf16) or float16 (kFp16) per
// LibTorch's autocast op lists (matmul/linear in 16 bits; softmax, norms and losses in fp32).
// kFp32 does nothing. LibTorch's CPU kernels have no fp16 matmul: kFp16 is for CUDA. Restores
// the previous autocast state and clears the autocast weight cache on destruction. Autocast state
// is thread-local, so each rank thread has its own.
class AutocastScope {
 public:
  AutocastScope(c10::DeviceType device_type, ComputePrecision precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  c10::DeviceType device_type_;
  bool active_ = false;
  bool previous_enabled_ = false;
};

// The calling thread's autocast settings (autocast state is thread-local): per device type whether
// it is on and to which dtype it casts, and whether casted weights are cached. The fields that
// PyTorch's torch/utils/checkpoint.py saves in forward and re-enters for recomputation.
struct AutocastState {
  bool cpu_enabled = false;
  c10::ScalarType cpu_dtype = c10::ScalarType::BFloat16;
  bool cuda_enabled = false;
  c10::ScalarType cuda_dtype = c10::ScalarType::Half;
  bool cache_enabled = true;
};

// Reads the calling thread's autocast state.
AutocastState CurrentAutocastState();

// The dtype a matmul on x runs in now: autocast's for x's device when it is on there, else x's.
c10::ScalarType AutocastMatmulDtype(const at::Tensor& x);

// While alive, the calling thread runs under `state` (all fields); restores the previous state on
// destruction. Counts as an autocast region like torch.autocast: the weight cache is cleared when
// the outermost region ends.
class AutocastStateScope {
 public:
  explicit AutocastStateScope(const AutocastState& state);
  ~AutocastStateScope();
  AutocastStateScope(const AutocastStateScope&) = delete;
  AutocastStateScope& operator=(const AutocastStateScope&) = delete;

 private:
  AutocastState previous_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_AUTOCAST_H_
