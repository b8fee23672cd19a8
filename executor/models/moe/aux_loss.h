// How a mixture-of-experts layer's load-balancing loss reaches the objective without being
// returned: an identity on the layer's output whose backward also seeds the loss's gradient.
#ifndef ACCEL_EXECUTOR_MODELS_MOE_AUX_LOSS_H_
#define ACCEL_EXECUTOR_MODELS_MOE_AUX_LOSS_H_

#include <ATen/core/Tensor.h>

namespace accel::exec {

// Returns y unchanged (a view of it) and makes backward also send `grad` to aux_loss (a 0-dim
// differentiable tensor), as if grad · aux_loss had been added to the scalar that backward starts
// from (DeepSeek-V2/V3's AddAuxiliaryLoss; Megatron-LM's MoEAuxLossAutoScaler). The loss thus
// stays a term of the block's output, so it survives full recompute (a region returns one
// tensor) and pipeline stages without the head. For a loss weighted coef in an objective that
// backward scales by s, grad = coef · s (divided by the tensor-parallel degree when every tp rank
// computes the same loss and the router's gradients are summed over tp).
// y: any shape; aux_loss: 0-dim.
at::Tensor AttachAuxLoss(const at::Tensor& y, const at::Tensor& aux_loss, double grad);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_MOE_AUX_LOSS_H_
