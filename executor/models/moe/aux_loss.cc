#include "executor/models/moe/aux_loss.h"

#include <torch/autograd.h>
#include <torch/torch.h>

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct AttachAuxLossFunction : torch::autograd::Function<AttachAuxLossFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& y, const at::Tensor& aux_loss, double grad) {
    ctx->saved_data["grad"] = grad;
    ctx->saved_data["aux_dtype"] = static_cast<int64_t>(aux_loss.scalar_type());
    return y.view_as(y);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const auto dtype = static_cast<at::ScalarType>(ctx->saved_data["aux_dtype"].toInt());
    at::Tensor aux_grad = at::full({}, ctx->saved_data["grad"].toDouble(), grads[0].options().dtype(dtype));
    return {grads[0], aux_grad, at::Tensor()};
  }
};

}  // namespace

at::Tensor AttachAuxLoss(const at::Tensor& y, const at::Tensor& aux_loss, double grad) {
  if (!at::GradMode::is_enabled() || !aux_loss.requires_grad()) return y;
  return AttachAuxLossFunction::apply(y, aux_loss, grad);
}

}  // namespace accel::exec
