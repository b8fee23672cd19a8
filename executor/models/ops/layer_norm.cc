#include "executor/models/ops/layer_norm.h"

#include <torch/autograd.h>
#include <torch/torch.h>

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct LayerNormFunction : torch::autograd::Function<LayerNormFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias, double eps) {
    auto [y, mean, inv_std] = at::native_layer_norm(x, {x.size(-1)}, weight, bias, eps);
    ctx->save_for_backward({x, weight, bias, mean, inv_std});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const std::array<bool, 3> needed = {ctx->needs_input_grad(0), ctx->needs_input_grad(1),
                                        ctx->needs_input_grad(2)};
    auto [dx, dweight, dbias] = at::native_layer_norm_backward(
        grads[0].contiguous(), saved[0], {saved[0].size(-1)}, saved[3], saved[4], saved[1], saved[2], needed);
    return {dx, dweight, dbias, at::Tensor()};
  }
};

}  // namespace

at::Tensor LayerNorm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  return LayerNormFunction::apply(x, weight, bias, eps);
}

}  // namespace accel::exec
