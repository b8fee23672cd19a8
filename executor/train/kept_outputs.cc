#include "executor/train/kept_outputs.h"

#include <ATen/ExpandUtils.h>
#include <torch/torch.h>

#include <utility>

#include "executor/train/autocast.h"
#include "executor/train/region_outputs.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// What autocast hands a 16-bit op for operand t (at::autocast::cached_cast): an fp32 tensor cast
// to the autocast dtype of the matmul, anything else unchanged. `dtype` is AutocastMatmulDtype.
at::Tensor AutocastOperand(const at::Tensor& t, c10::ScalarType dtype) {
  if (!t.defined() || t.scalar_type() != at::kFloat || dtype == at::kFloat) return t;
  return t.to(dtype);
}

// dA of C = A·B (A [m, k] as a matrix, B [k, n]), as mm_mat1_backward computes it: a column-major
// A gets a column-major gradient.
at::Tensor MatmulInputGrad(const at::Tensor& grad, const at::Tensor& a, const at::Tensor& b) {
  if (a.stride(0) == 1 && a.stride(1) == a.size(0)) return b.mm(grad.t()).t();
  return grad.mm(b.t());
}

// dB of C = A·B, as mm_mat2_backward computes it: a column-major B (a transposed weight) gets a
// column-major gradient.
at::Tensor MatmulWeightGrad(const at::Tensor& grad, const at::Tensor& a, const at::Tensor& b) {
  if (b.stride(0) == 1 && b.stride(1) == b.size(0)) return grad.t().mm(a).t();
  return a.t().mm(grad);
}

// Returns the stored product y = x·m (+ bias) of a kept op, x [..., k] folded to [rows, k] as
// matmul and linear fold it, m [k, n]; backward as mm's (and, with a bias, as addmm's: Σ rows).
// operands: {x, m} or {x, m, bias} (LibTorch 1.13's Function::apply takes no undefined tensor).
struct ReplayedMatmul : torch::autograd::Function<ReplayedMatmul> {
  static at::Tensor forward(AutogradContext* ctx, at::TensorList operands, const at::Tensor& stored) {
    ctx->save_for_backward({operands[0], operands[1]});
    ctx->saved_data["bias"] = operands.size() > 2;
    return stored.detach();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& m = saved[1];
    const at::Tensor grad = grad_outputs[0].reshape({-1, m.size(1)});
    const at::Tensor x2d = x.reshape({-1, m.size(0)});
    variable_list grads;
    grads.push_back(ctx->needs_input_grad(0) ? MatmulInputGrad(grad, x2d, m).view(x.sizes()) : at::Tensor());
    grads.push_back(ctx->needs_input_grad(1) ? MatmulWeightGrad(grad, x2d, m) : at::Tensor());
    if (ctx->saved_data["bias"].toBool()) {
      // Summed in the incoming gradient's own layout, as autograd reduces addmm's broadcast bias:
      // summing the folded copy would change the order for strided gradients (k after rotary).
      const int64_t width = m.size(1);
      grads.push_back(ctx->needs_input_grad(2) ? at::sum_to(grad_outputs[0], at::IntArrayRef(&width, 1)) : at::Tensor());
    }
    grads.push_back(at::Tensor());  // stored
    return grads;
  }
};

// ReplayedMatmul on x, m and bias (undefined: none) after autocast's casts.
at::Tensor Replay(const at::Tensor& x, const at::Tensor& m, const at::Tensor& bias, const at::Tensor& stored) {
  std::vector<at::Tensor> operands = {x, m};
  if (bias.defined()) operands.push_back(bias);
  return ReplayedMatmul::apply(at::TensorList(operands), stored);
}

// A kept product: computed plainly (and stored in a region's forward) or, in a region's recompute,
// made by replay from the stored output.
template <typename Compute, typename Replay>
at::Tensor KeptProduct(bool keep, const Compute& compute, const Replay& replay) {
  const ActiveRegion region = CurrentRegion();
  if (!keep || region.outputs == nullptr) return compute();
  if (!region.replay) {
    at::Tensor y = compute();
    region.outputs->Store({y});
    return y;
  }
  return replay(region.outputs->Take()[0]);
}

}  // namespace

at::Tensor KeptLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool keep) {
  // linear casts the weight, then multiplies by its transposed (column-major) view.
  return KeptProduct(
      keep, [&] { return torch::nn::functional::linear(x, weight, bias); },
      [&](const at::Tensor& stored) {
        const c10::ScalarType dtype = AutocastMatmulDtype(x);
        return Replay(AutocastOperand(x, dtype), AutocastOperand(weight, dtype).t(), AutocastOperand(bias, dtype),
                      stored);
      });
}

at::Tensor KeptMatmul(const at::Tensor& x, const at::Tensor& m, bool keep) {
  return KeptProduct(
      keep, [&] { return torch::matmul(x, m); },
      [&](const at::Tensor& stored) {
        const c10::ScalarType dtype = AutocastMatmulDtype(x);
        return Replay(AutocastOperand(x, dtype), AutocastOperand(m, dtype), at::Tensor(), stored);
      });
}

std::vector<at::Tensor> KeptOutputs(const RecomputeManyFn& fn, const std::vector<at::Tensor>& inputs, bool keep) {
  const ActiveRegion region = CurrentRegion();
  if (!keep || region.outputs == nullptr) return fn(inputs);
  if (!region.replay) {
    std::vector<at::Tensor> outputs = fn(inputs);
    region.outputs->Store(outputs);
    return outputs;
  }
  return RecomputeFromOutputs(fn, inputs, region.outputs->Take());
}

}  // namespace accel::exec
