#include "executor/train/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace accel::exec {
namespace {

// LibTorch 2.4 replaced the per-device setters with device-type-generic ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool IsEnabled(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void SetEnabled(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
void SetBf16(c10::DeviceType d) { at::autocast::set_autocast_dtype(d, at::kBFloat16); }
#else
bool IsEnabled(c10::DeviceType d) {
  return d == c10::DeviceType::CPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
}
void SetEnabled(c10::DeviceType d, bool on) {
  if (d == c10::DeviceType::CPU) {
    at::autocast::set_cpu_enabled(on);
  } else {
    at::autocast::set_enabled(on);
  }
}
void SetBf16(c10::DeviceType d) {
  if (d == c10::DeviceType::CPU) {
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
  } else {
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
  }
}
#endif

}  // namespace

AutocastScope::AutocastScope(c10::DeviceType device_type, ComputePrecision precision)
    : device_type_(device_type) {
  if (precision != ComputePrecision::kBf16) return;
  active_ = true;
  previous_enabled_ = IsEnabled(device_type_);
  SetBf16(device_type_);
  SetEnabled(device_type_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The cache of casted weights lives until the outermost autocast region ends.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  SetEnabled(device_type_, previous_enabled_);
}

}  // namespace accel::exec
