#include "executor/models/moe/moe_step_state.h"

#include <ATen/ATen.h>

namespace accel::exec {

void MoeStepState::Record(const at::Tensor& counts, const at::Tensor& aux_loss) {
  // Kept on the device and summed there: reading them back every block would synchronize a GPU.
  const at::Tensor c = counts.detach();
  const at::Tensor a = aux_loss.detach().to(at::kDouble);
  if (!counts_.defined()) {
    counts_ = c.clone();
    aux_sum_ = a.clone();
  } else {
    counts_.add_(c);
    aux_sum_.add_(a);
  }
  ++aux_losses_;
}

MoeStepStats MoeStepState::Take() {
  MoeStepStats stats;
  if (counts_.defined()) {
    const at::Tensor counts = counts_.to(at::kCPU, at::kLong).contiguous();
    stats.expert_counts.assign(counts.data_ptr<int64_t>(), counts.data_ptr<int64_t>() + counts.numel());
    stats.aux_loss_sum = aux_sum_.item<double>();
  }
  stats.aux_losses = aux_losses_;
  counts_ = at::Tensor();
  aux_sum_ = at::Tensor();
  aux_losses_ = 0;
  return stats;
}

}  // namespace accel::exec
