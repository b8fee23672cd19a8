#include "executor/models/ops/gelu.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <algorithm>

#include "executor/models/ops/float_blocks.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// [rows, width] view of a contiguous copy of `t` (GELU is elementwise: any split into rows works).
at::Tensor Rows(const at::Tensor& t) {
  const int64_t width = t.dim() > 0 ? t.size(-1) : 1;
  return t.contiguous().view({-1, std::max<int64_t>(width, 1)});
}

at::Tensor GeluForward(const at::Tensor& x) {
  if (!UsesFloatBlocks(x) || x.numel() == 0) return at::gelu(x, "tanh");
  const at::Tensor rows = Rows(x);
  at::Tensor y = at::empty_like(rows);
  ForEachRowBlock(rows.size(0), rows.size(1), [&](int64_t begin, int64_t count) {
    y.narrow(0, begin, count).copy_(at::gelu(rows.narrow(0, begin, count).to(at::kFloat), "tanh"));
  });
  return y.view(x.sizes());
}

at::Tensor GeluBackward(const at::Tensor& grad, const at::Tensor& x) {
  if (!UsesFloatBlocks(x) || x.numel() == 0) return at::gelu_backward(grad, x, "tanh");
  const at::Tensor rows = Rows(x);
  const at::Tensor grad_rows = Rows(grad);
  at::Tensor dx = at::empty_like(rows);
  ForEachRowBlock(rows.size(0), rows.size(1), [&](int64_t begin, int64_t count) {
    dx.narrow(0, begin, count)
        .copy_(at::gelu_backward(grad_rows.narrow(0, begin, count).to(at::kFloat),
                                 rows.narrow(0, begin, count).to(at::kFloat), "tanh"));
  });
  return dx.view(x.sizes());
}

struct GeluFunction : torch::autograd::Function<GeluFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x) {
    ctx->save_for_backward({x});
    return GeluForward(x);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    return {GeluBackward(grads[0], ctx->get_saved_variables()[0])};
  }
};

}  // namespace

at::Tensor Gelu(const at::Tensor& x) { return GeluFunction::apply(x); }

}  // namespace accel::exec
