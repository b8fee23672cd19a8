#include "executor/models/ops/rotary.h"

#include <torch/autograd.h>
#include <torch/torch.h>

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// (x1, x2) -> (−x2, x1) over the halves of the last dim.
at::Tensor RotateHalf(const at::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return at::cat({x.narrow(-1, half, half).neg(), x.narrow(-1, 0, half)}, -1);
}

// The transpose of RotateHalf: (y1, y2) -> (y2, −y1).
at::Tensor RotateHalfTransposed(const at::Tensor& y) {
  const int64_t half = y.size(-1) / 2;
  return at::cat({y.narrow(-1, half, half), y.narrow(-1, 0, half).neg()}, -1);
}

struct RotaryFunction : torch::autograd::Function<RotaryFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
    ctx->save_for_backward({cos, sin});
    const at::Tensor xf = x.to(at::kFloat);
    return (xf * cos).add_(RotateHalf(xf).mul_(sin)).to(x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor g = grads[0].to(at::kFloat);
    at::Tensor dx = (g * saved[0]).add_(RotateHalfTransposed(g * saved[1]));
    return {dx.to(grads[0].scalar_type()), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor ApplyRotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin) {
  return RotaryFunction::apply(x, cos, sin);
}

}  // namespace accel::exec
