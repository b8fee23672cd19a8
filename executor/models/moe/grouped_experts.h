// The routed experts of a mixture-of-experts layer as one autograd node over grouped weights.
#ifndef ACCEL_EXECUTOR_MODELS_MOE_GROUPED_EXPERTS_H_
#define ACCEL_EXECUTOR_MODELS_MOE_GROUPED_EXPERTS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace accel::exec {

// SwiGLU experts over rows grouped by expert (TokenDispatch::Dispatch): for expert e's
// rows_per_expert[e] consecutive rows x_e [n_e, h],
//   y_e = (silu(x_e·G_eᵀ) ⊙ (x_e·U_eᵀ))·D_eᵀ
// with gate G and up U [E, fe, h] and down D [E, h, fe] (torchtitan's GroupedExperts layout,
// the plan's mlp.experts.{gate,up,down}_proj). rows: [R, h], R = Σ rows_per_expert, one entry per
// expert of the weights. Returns [R, h] in the matmuls' dtype (autocast's for rows' device when on,
// the weights cast to it per expert, as ops/linear.h).
// One matmul per expert over its rows, never a loop over tokens; an expert without rows gets
// zero weight gradients. Keeps for backward the rows (in the matmuls' dtype), the weight
// parameters themselves (never copies or views: ZeRO-3 frees gathered storage after forward) and
// the gate and up products [R, fe] each; silu(gate)·up is recomputed in backward (as ops/swiglu.h).
// Backward: the per-expert chain rule of the formula above, in the matmuls' dtype, written expert
// by expert into the three grouped weight gradients, each then cast to its parameter's dtype: its
// transient peak is those gradients in the matmuls' dtype, 3·E·fe·h·c bytes, and their fp32 casts
// when c is 16-bit (planner/moe_activations.h MoeActivationBytes::backward). Errors: c10::Error on mismatched shapes.
at::Tensor GroupedExperts(const at::Tensor& rows, const at::Tensor& gate, const at::Tensor& up,
                          const at::Tensor& down, const std::vector<int64_t>& rows_per_expert);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_MOE_GROUPED_EXPERTS_H_
