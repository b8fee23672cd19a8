#include "executor/models/ops/gelu.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <vector>

#include "executor/models/ops/float_blocks.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor GeluForward(const at::Tensor& x) {
  if (!UsesFloatBlocks(x) || x.numel() == 0) return at::gelu(x, "tanh");
  return MapInFloatBlocks({x}, [](const std::vector<at::Tensor>& b) { return at::gelu(b[0], "tanh"); });
}

at::Tensor GeluBackward(const at::Tensor& grad, const at::Tensor& x) {
  if (!UsesFloatBlocks(x) || x.numel() == 0) return at::gelu_backward(grad, x, "tanh");
  return MapInFloatBlocks({x, grad},
                          [](const std::vector<at::Tensor>& b) { return at::gelu_backward(b[1], b[0], "tanh"); });
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
