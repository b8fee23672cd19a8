#include "executor/models/ops/geglu.h"

#include <torch/autograd.h>
#include <torch/torch.h>

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct GeGluFunction : torch::autograd::Function<GeGluFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& gate, const at::Tensor& up) {
    ctx->save_for_backward({gate, up});
    return at::gelu(gate, "tanh") * up;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& gate = saved[0];
    const at::Tensor& up = saved[1];
    const at::Tensor& g = grads[0];
    at::Tensor d_up = g * at::gelu(gate, "tanh");
    at::Tensor d_gate = at::gelu_backward(g * up, gate, "tanh");
    return {d_gate, d_up};
  }
};

}  // namespace

at::Tensor GeGlu(const at::Tensor& gate, const at::Tensor& up) { return GeGluFunction::apply(gate, up); }

}  // namespace accel::exec
