// Scoped mixed-precision compute (autocast) for CPU and CUDA, hiding the API differences between
// LibTorch 1.13 and 2.x.
#ifndef ACCEL_EXECUTOR_TRAIN_AUTOCAST_H_
#define ACCEL_EXECUTOR_TRAIN_AUTOCAST_H_

#include <c10/core/Device.h>

namespace accel::exec {

// Compute precision of forward passes. Parameters, gradients and optimizer state stay fp32.
enum class ComputePrecision { kFp32, kBf16 };

// While alive, eligible ops on device_type run in bfloat16 (kBf16) per LibTorch's autocast op
// lists (matmul/linear in bf16; softmax, norms and losses in fp32). kFp32 does nothing. Restores
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

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_AUTOCAST_H_
