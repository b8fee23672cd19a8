#include "executor/models/ops/rms_norm.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "executor/communicator.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// fp32, or fp64 for fp64 input (the gradient tests).
at::ScalarType Accumulation(const at::Tensor& x) {
  return x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

struct RmsNormFunction : torch::autograd::Function<RmsNormFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, double eps) {
    const at::Tensor xf = x.to(Accumulation(x));
    const at::Tensor inv_rms = at::rsqrt(xf.square().mean(-1, /*keepdim=*/true).add_(eps));
    ctx->save_for_backward({x, weight, inv_rms});
    return weight * (xf * inv_rms).to(x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& inv_rms = saved[2];
    const at::Tensor& g = grads[0];
    const at::Tensor normed = x.to(Accumulation(x)).mul_(inv_rms);
    at::Tensor grad_weight;
    if (weight.requires_grad()) {
      grad_weight = (g * normed.to(x.scalar_type())).reshape({-1, weight.size(0)}).sum(0).to(weight.scalar_type());
    }
    const at::Tensor g_normed = (g * weight).to(Accumulation(x));
    const at::Tensor dot = (g_normed * normed).mean(-1, /*keepdim=*/true);
    at::Tensor grad_x = g_normed.sub_(normed.mul_(dot)).mul_(inv_rms).to(x.scalar_type());
    return {grad_x, grad_weight, at::Tensor()};
  }
};

void CheckOk(const absl::Status& status) {
  if (!status.ok()) throw std::runtime_error(std::string(status.message()));
}

// Row sums of `rows` ([..., 1]) summed over `group`.
at::Tensor SumOverGroup(at::Tensor rows, Communicator* group) {
  at::Tensor sum = rows.contiguous();
  CheckOk(group->AllReduce(sum, ReduceOp::kSum));
  return sum;
}

struct RmsNormOverGroupFunction : torch::autograd::Function<RmsNormOverGroupFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const at::Tensor& weight, double eps,
                            int64_t group_handle) {
    auto* group = reinterpret_cast<Communicator*>(static_cast<intptr_t>(group_handle));
    const double width = static_cast<double>(x.size(-1) * group->Size());
    const at::Tensor xf = x.to(Accumulation(x));
    const at::Tensor inv_rms =
        at::rsqrt(SumOverGroup(xf.square().sum(-1, /*keepdim=*/true), group).div_(width).add_(eps));
    ctx->save_for_backward({x, weight, inv_rms});
    ctx->saved_data["group"] = group_handle;
    return weight * (xf * inv_rms).to(x.scalar_type());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& x = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& inv_rms = saved[2];
    auto* group = reinterpret_cast<Communicator*>(static_cast<intptr_t>(ctx->saved_data["group"].toInt()));
    const double width = static_cast<double>(x.size(-1) * group->Size());
    const at::Tensor& g = grads[0];
    const at::Tensor normed = x.to(Accumulation(x)).mul_(inv_rms);
    at::Tensor grad_weight;
    if (weight.requires_grad()) {
      grad_weight = (g * normed.to(x.scalar_type())).reshape({-1, weight.size(0)}).sum(0).to(weight.scalar_type());
    }
    const at::Tensor g_normed = (g * weight).to(Accumulation(x));
    const at::Tensor dot = SumOverGroup((g_normed * normed).sum(-1, /*keepdim=*/true), group).div_(width);
    at::Tensor grad_x = g_normed.sub_(normed.mul_(dot)).mul_(inv_rms).to(x.scalar_type());
    return {grad_x, grad_weight, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor RmsNormOverGroup(const at::Tensor& x, const at::Tensor& weight, double eps, Communicator* group) {
  if (group == nullptr || group->Size() <= 1) return RmsNorm(x, weight, eps);
  return RmsNormOverGroupFunction::apply(x, weight, eps, reinterpret_cast<intptr_t>(group));
}

at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps) {
  return RmsNormFunction::apply(x, weight, eps);
}

}  // namespace accel::exec
