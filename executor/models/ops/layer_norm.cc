#include "executor/models/ops/layer_norm.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <array>
#include <tuple>

#include "executor/models/ops/float_blocks.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// native_layer_norm of a 16-bit CPU x, by fp32 row blocks (ops/float_blocks.h): y in x's dtype,
// the fp32 mean and 1/std as [rows, 1].
std::tuple<at::Tensor, at::Tensor, at::Tensor> LayerNormByFloatBlocks(const at::Tensor& x, const at::Tensor& weight,
                                                                      const at::Tensor& bias, double eps) {
  const int64_t h = x.size(-1);
  const at::Tensor rows = x.contiguous().view({-1, h});
  const at::Tensor w = weight.to(at::kFloat), b = bias.to(at::kFloat);
  at::Tensor y = at::empty_like(rows);
  at::Tensor mean = at::empty({rows.size(0), 1}, rows.options().dtype(at::kFloat));
  at::Tensor inv_std = at::empty_like(mean);
  ForEachRowBlock(rows.size(0), h, [&](int64_t begin, int64_t count) {
    auto [yb, mb, sb] = at::native_layer_norm(rows.narrow(0, begin, count).to(at::kFloat), {h}, w, b, eps);
    y.narrow(0, begin, count).copy_(yb);
    mean.narrow(0, begin, count).copy_(mb);
    inv_std.narrow(0, begin, count).copy_(sb);
  });
  return {y.view(x.sizes()), mean, inv_std};
}

// native_layer_norm_backward by fp32 row blocks; the weight and bias gradients summed over the
// blocks in fp32 and returned in their parameters' dtype.
std::tuple<at::Tensor, at::Tensor, at::Tensor> LayerNormBackwardByFloatBlocks(
    const at::Tensor& grad, const at::Tensor& x, const at::Tensor& mean, const at::Tensor& inv_std,
    const at::Tensor& weight, const at::Tensor& bias, std::array<bool, 3> needed) {
  const int64_t h = x.size(-1);
  const at::Tensor rows = x.contiguous().view({-1, h});
  const at::Tensor grad_rows = grad.contiguous().view({-1, h});
  const at::Tensor w = weight.to(at::kFloat), b = bias.to(at::kFloat);
  at::Tensor dx = needed[0] ? at::empty_like(rows) : at::Tensor();
  at::Tensor dw = at::zeros({h}, w.options()), db = at::zeros({h}, w.options());
  ForEachRowBlock(rows.size(0), h, [&](int64_t begin, int64_t count) {
    auto [dxb, dwb, dbb] = at::native_layer_norm_backward(
        grad_rows.narrow(0, begin, count).to(at::kFloat), rows.narrow(0, begin, count).to(at::kFloat), {h},
        mean.narrow(0, begin, count), inv_std.narrow(0, begin, count), w, b, needed);
    if (needed[0]) dx.narrow(0, begin, count).copy_(dxb);
    if (needed[1]) dw.add_(dwb);
    if (needed[2]) db.add_(dbb);
  });
  return {needed[0] ? dx.view(x.sizes()) : at::Tensor(), needed[1] ? dw.to(weight.scalar_type()) : at::Tensor(),
          needed[2] ? db.to(bias.scalar_type()) : at::Tensor()};
}

struct LayerNormFunction : torch::autograd::Function<LayerNormFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight,
                            const at::Tensor& bias, double eps) {
    auto [y, mean, inv_std] = UsesFloatBlocks(x) ? LayerNormByFloatBlocks(x, weight, bias, eps)
                                                 : at::native_layer_norm(x, {x.size(-1)}, weight, bias, eps);
    ctx->save_for_backward({x, weight, bias, mean, inv_std});
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const std::array<bool, 3> needed = {ctx->needs_input_grad(0), ctx->needs_input_grad(1),
                                        ctx->needs_input_grad(2)};
    auto [dx, dweight, dbias] =
        UsesFloatBlocks(saved[0])
            ? LayerNormBackwardByFloatBlocks(grads[0], saved[0], saved[3], saved[4], saved[1], saved[2], needed)
            : at::native_layer_norm_backward(grads[0].contiguous(), saved[0], {saved[0].size(-1)}, saved[3],
                                             saved[4], saved[1], saved[2], needed);
    return {dx, dweight, dbias, at::Tensor()};
  }
};

}  // namespace

at::Tensor LayerNorm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps) {
  return LayerNormFunction::apply(x, weight, bias, eps);
}

}  // namespace accel::exec
