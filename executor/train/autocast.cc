#include "executor/train/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace accel::exec {
namespace {

// LibTorch 2.4 replaced the per-device getters and setters with device-type-generic ones.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool IsEnabled(c10::DeviceType d) { return at::autocast::is_autocast_enabled(d); }
void SetEnabled(c10::DeviceType d, bool on) { at::autocast::set_autocast_enabled(d, on); }
at::ScalarType GetDtype(c10::DeviceType d) { return at::autocast::get_autocast_dtype(d); }
void SetDtype(c10::DeviceType d, at::ScalarType t) { at::autocast::set_autocast_dtype(d, t); }
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
at::ScalarType GetDtype(c10::DeviceType d) {
  return d == c10::DeviceType::CPU ? at::autocast::get_autocast_cpu_dtype()
                                   : at::autocast::get_autocast_gpu_dtype();
}
void SetDtype(c10::DeviceType d, at::ScalarType t) {
  if (d == c10::DeviceType::CPU) {
    at::autocast::set_autocast_cpu_dtype(t);
  } else {
    at::autocast::set_autocast_gpu_dtype(t);
  }
}
#endif

void Apply(const AutocastState& state) {
  SetDtype(c10::DeviceType::CPU, state.cpu_dtype);
  SetEnabled(c10::DeviceType::CPU, state.cpu_enabled);
  SetDtype(c10::DeviceType::CUDA, state.cuda_dtype);
  SetEnabled(c10::DeviceType::CUDA, state.cuda_enabled);
  at::autocast::set_autocast_cache_enabled(state.cache_enabled);
}

}  // namespace

AutocastScope::AutocastScope(c10::DeviceType device_type, ComputePrecision precision)
    : device_type_(device_type) {
  if (precision == ComputePrecision::kFp32) return;
  active_ = true;
  previous_enabled_ = IsEnabled(device_type_);
  SetDtype(device_type_, precision == ComputePrecision::kFp16 ? at::kHalf : at::kBFloat16);
  SetEnabled(device_type_, true);
  at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope() {
  if (!active_) return;
  // The cache of casted weights lives until the outermost autocast region ends.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  SetEnabled(device_type_, previous_enabled_);
}

AutocastState CurrentAutocastState() {
  AutocastState state;
  state.cpu_enabled = IsEnabled(c10::DeviceType::CPU);
  state.cpu_dtype = GetDtype(c10::DeviceType::CPU);
  state.cuda_enabled = IsEnabled(c10::DeviceType::CUDA);
  state.cuda_dtype = GetDtype(c10::DeviceType::CUDA);
  state.cache_enabled = at::autocast::is_autocast_cache_enabled();
  return state;
}

AutocastStateScope::AutocastStateScope(const AutocastState& state)
    : previous_(CurrentAutocastState()) {
  Apply(state);
  at::autocast::increment_nesting();
}

AutocastStateScope::~AutocastStateScope() {
  // As torch.autocast's __exit__: the cache of casted weights lives until the outermost region.
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  Apply(previous_);
}

c10::ScalarType AutocastMatmulDtype(const at::Tensor& x) {
  const AutocastState state = CurrentAutocastState();
  if (x.is_cuda() && state.cuda_enabled) return state.cuda_dtype;
  if (x.is_cpu() && state.cpu_enabled) return state.cpu_dtype;
  return x.scalar_type();
}

}  // namespace accel::exec
