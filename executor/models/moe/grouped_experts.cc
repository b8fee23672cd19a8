#include "executor/models/moe/grouped_experts.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include "executor/train/autocast.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Expert e's weight in the matmuls' dtype (a cast copy only when autocast casts).
at::Tensor ExpertWeight(const at::Tensor& grouped, int64_t e, c10::ScalarType dtype) {
  const at::Tensor w = grouped[e];
  return w.scalar_type() == dtype ? w : w.to(dtype);
}

struct GroupedExpertsFunction : torch::autograd::Function<GroupedExpertsFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& rows, const at::Tensor& gate,
                            const at::Tensor& up, const at::Tensor& down, std::vector<int64_t> rows_per_expert) {
    TORCH_CHECK(gate.size(0) == static_cast<int64_t>(rows_per_expert.size()) && up.sizes() == gate.sizes() &&
                    down.size(0) == gate.size(0) && down.size(1) == rows.size(1) && down.size(2) == gate.size(1) &&
                    gate.size(2) == rows.size(1),
                "GroupedExperts: rows ", rows.sizes(), ", gate ", gate.sizes(), ", up ", up.sizes(), ", down ",
                down.sizes(), " and ", rows_per_expert.size(), " experts do not match");
    const c10::ScalarType dtype = AutocastMatmulDtype(rows);
    const at::Tensor x = rows.to(dtype);
    const int64_t fe = gate.size(1);
    at::Tensor g = at::empty({rows.size(0), fe}, x.options()), u = at::empty_like(g);
    at::Tensor y = at::empty({rows.size(0), down.size(1)}, x.options());
    int64_t offset = 0;
    for (size_t e = 0; e < rows_per_expert.size(); ++e) {
      const int64_t n = rows_per_expert[e];
      const at::Tensor xe = x.narrow(0, offset, n);
      at::Tensor ge = g.narrow(0, offset, n), ue = u.narrow(0, offset, n);
      at::mm_out(ge, xe, ExpertWeight(gate, e, dtype).t());
      at::mm_out(ue, xe, ExpertWeight(up, e, dtype).t());
      at::Tensor ye = y.narrow(0, offset, n);
      at::mm_out(ye, at::silu(ge) * ue, ExpertWeight(down, e, dtype).t());
      offset += n;
    }
    ctx->save_for_backward({x, gate, up, down, g, u});
    ctx->saved_data["rows_per_expert"] = rows_per_expert;
    ctx->saved_data["rows_dtype"] = static_cast<int64_t>(rows.scalar_type());
    return y;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list s = ctx->get_saved_variables();
    const at::Tensor &x = s[0], &gate = s[1], &up = s[2], &down = s[3], &g = s[4], &u = s[5];
    const std::vector<int64_t> rows_per_expert = ctx->saved_data["rows_per_expert"].toIntVector();
    const c10::ScalarType dtype = x.scalar_type();
    const at::Tensor dy = grads[0].to(dtype).contiguous();
    at::Tensor dx = at::empty_like(x);
    // The weight gradients are written expert by expert into grouped tensors: no per-expert
    // pieces to stack (which would hold them twice).
    at::Tensor dgate = at::zeros(gate.sizes(), x.options()), dup = at::zeros(up.sizes(), x.options());
    at::Tensor ddown = at::zeros(down.sizes(), x.options());
    int64_t offset = 0;
    for (size_t e = 0; e < rows_per_expert.size(); ++e) {
      const int64_t n = rows_per_expert[e];
      const at::Tensor xe = x.narrow(0, offset, n), dye = dy.narrow(0, offset, n);
      const at::Tensor ge = g.narrow(0, offset, n), ue = u.narrow(0, offset, n);
      const at::Tensor silu = at::silu(ge);
      const at::Tensor da = dye.mm(ExpertWeight(down, e, dtype));  // [n, fe]
      if (n > 0) {
        at::Tensor dd = ddown[e];
        at::mm_out(dd, dye.t(), silu * ue);  // [h, fe]
      }
      const at::Tensor dg = at::silu_backward(da * ue, ge), du = da * silu;
      if (n > 0) {
        at::Tensor dge = dgate[e], due = dup[e];
        at::mm_out(dge, dg.t(), xe);
        at::mm_out(due, du.t(), xe);
      }
      at::Tensor dxe = dx.narrow(0, offset, n);
      at::mm_out(dxe, dg, ExpertWeight(gate, e, dtype));
      dxe.addmm_(du, ExpertWeight(up, e, dtype));
      offset += n;
    }
    const auto rows_dtype = static_cast<c10::ScalarType>(ctx->saved_data["rows_dtype"].toInt());
    return {dx.to(rows_dtype), dgate.to(gate.scalar_type()), dup.to(up.scalar_type()), ddown.to(down.scalar_type()),
            at::Tensor()};
  }
};

}  // namespace

at::Tensor GroupedExperts(const at::Tensor& rows, const at::Tensor& gate, const at::Tensor& up,
                          const at::Tensor& down, const std::vector<int64_t>& rows_per_expert) {
  return GroupedExpertsFunction::apply(rows, gate, up, down, rows_per_expert);
}

}  // namespace accel::exec
