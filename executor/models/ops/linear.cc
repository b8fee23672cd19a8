#include "executor/models/ops/linear.h"

#include <ATen/ExpandUtils.h>
#include <torch/torch.h>

#include <vector>

#include "executor/models/ops/weight_grad_store.h"
#include "executor/train/autocast.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What autocast hands a 16-bit op for operand t (at::autocast::cached_cast): an fp32 tensor cast
// to the matmul's dtype, anything else unchanged.
at::Tensor AutocastOperand(const at::Tensor& t, c10::ScalarType dtype) {
  if (!t.defined() || t.scalar_type() != at::kFloat || dtype == at::kFloat) return t;
  return t.to(dtype);
}

// The product's right operand m [in, out] from the (cast) weight.
at::Tensor RightOperand(const at::Tensor& weight, WeightLayout layout) {
  return layout == WeightLayout::kOutIn ? weight.t() : weight;
}

// dA of C = A·B (A [m, k], B [k, n]) as mm_mat1_backward computes it: a column-major A gets a
// column-major gradient.
at::Tensor MatmulInputGrad(const at::Tensor& grad, const at::Tensor& a, const at::Tensor& b) {
  if (a.stride(0) == 1 && a.stride(1) == a.size(0)) return b.mm(grad.t()).t();
  return grad.mm(b.t());
}

// dB of C = A·B as mm_mat2_backward computes it: a column-major B (a transposed weight) gets a
// column-major gradient.
at::Tensor MatmulWeightGrad(const at::Tensor& grad, const at::Tensor& a, const at::Tensor& b) {
  if (b.stride(0) == 1 && b.stride(1) == b.size(0)) return grad.t().mm(a).t();
  return a.t().mm(grad);
}

// operands: x, weight, then bias and stored when given (LibTorch 1.13's Function::apply takes no
// undefined tensor); flags: the layout, whether a bias and a stored output follow.
struct LinearFunction : torch::autograd::Function<LinearFunction> {
  static at::Tensor forward(AutogradContext* ctx, at::TensorList operands, int64_t layout, bool has_bias,
                            bool has_stored) {
    const at::Tensor& x = operands[0];
    const c10::ScalarType dtype = AutocastMatmulDtype(x);
    const at::Tensor x_c = AutocastOperand(x, dtype);
    ctx->save_for_backward({x_c, operands[1]});
    ctx->saved_data["dtype"] = static_cast<int64_t>(dtype);
    ctx->saved_data["x_dtype"] = static_cast<int64_t>(x.scalar_type());
    ctx->saved_data["layout"] = layout;
    ctx->saved_data["operands"] = static_cast<int64_t>(operands.size());
    ctx->saved_data["bias_dtype"] = has_bias ? static_cast<int64_t>(operands[2].scalar_type()) : int64_t{-1};
    if (has_stored) return operands.back().detach();
    const at::Tensor w_c = AutocastOperand(operands[1], dtype);
    const at::Tensor b_c = has_bias ? AutocastOperand(operands[2], dtype) : at::Tensor();
    if (static_cast<WeightLayout>(layout) == WeightLayout::kOutIn) return at::linear(x_c, w_c, b_c);
    at::Tensor y = at::matmul(x_c, w_c);
    return b_c.defined() ? y + b_c : y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x_c = saved[0];
    const at::Tensor& weight = saved[1];
    const auto dtype = static_cast<c10::ScalarType>(ctx->saved_data["dtype"].toInt());
    const auto layout = static_cast<WeightLayout>(ctx->saved_data["layout"].toInt());
    const int64_t bias_dtype = ctx->saved_data["bias_dtype"].toInt();
    const at::Tensor m = RightOperand(AutocastOperand(weight, dtype), layout);
    const at::Tensor grad = grad_outputs[0].reshape({-1, m.size(1)});
    const at::Tensor x2d = x_c.reshape({-1, m.size(0)});
    // One gradient per operand and per flag (undefined for the flags and the stored output).
    variable_list grads(static_cast<size_t>(ctx->saved_data["operands"].toInt()) + 3);
    if (ctx->needs_input_grad(0)) {
      const auto x_dtype = static_cast<c10::ScalarType>(ctx->saved_data["x_dtype"].toInt());
      grads[0] = MatmulInputGrad(grad, x2d, m).view(x_c.sizes()).to(x_dtype);
    }
    if (ctx->needs_input_grad(1)) {
      // MatmulWeightGrad reads only the right operand's strides, which the uncast weight shares.
      // Detached: x2d unpacked from the saved x carries its producer's grad_fn, whose chain of
      // nodes would keep the stage's input leaf, and its gradient, alive until W.
      auto weight_grad = [grad = grad.detach(), x2d = x2d.detach(), weight, layout]() {
        const at::Tensor dm = MatmulWeightGrad(grad, x2d, RightOperand(weight, layout));
        return std::make_pair(weight, (layout == WeightLayout::kOutIn ? dm.t() : dm).to(weight.scalar_type()));
      };
      if (WeightGradStore* store = ActiveWeightGradStore()) {
        store->Add(weight_grad);  // W: later, keeping x and the output gradient until then
      } else {
        grads[1] = weight_grad().second;
      }
    }
    if (bias_dtype >= 0 && ctx->needs_input_grad(2)) {
      const int64_t width = m.size(1);
      grads[2] = at::sum_to(grad_outputs[0], at::IntArrayRef(&width, 1)).to(static_cast<c10::ScalarType>(bias_dtype));
    }
    return grads;
  }
};

}  // namespace

at::Tensor Linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, WeightLayout layout,
                  const at::Tensor& stored) {
  std::vector<at::Tensor> operands = {x, weight};
  if (bias.defined()) operands.push_back(bias);
  if (stored.defined()) operands.push_back(stored);
  return LinearFunction::apply(at::TensorList(operands), static_cast<int64_t>(layout), bias.defined(),
                               stored.defined());
}

}  // namespace accel::exec
