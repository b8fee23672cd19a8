// RMSNorm (Zhang & Sennrich 2019) as one autograd node that keeps only what its backward needs.
#ifndef ACCEL_EXECUTOR_MODELS_OPS_RMS_NORM_H_
#define ACCEL_EXECUTOR_MODELS_OPS_RMS_NORM_H_

#include <ATen/core/Tensor.h>

namespace accel::exec {

// y = weight · (x̂ cast to x's dtype), x̂ = x / sqrt(mean(x²) + eps) over the last dim, computed
// in fp32 as Hugging Face's LlamaRMSNorm does. x: [..., h] (fp32 or bf16), weight: [h]. Returns
// x's shape in the promoted dtype of x and weight.
// Keeps for backward only x (in its own dtype), weight and the fp32 per-row 1/rms ([...] rows,
// 4 B each); backward recomputes x̂. Composed of ATen ops, autograd would keep the fp32 copy of
// x, its square and the normalized product as well (about 3 more copies of x).
// Backward: dx = r·(ĝ − x̂·mean(ĝ·x̂)) with ĝ = g·weight in fp32 and r = 1/rms; dweight = Σ g·x̂.
at::Tensor RmsNorm(const at::Tensor& x, const at::Tensor& weight, double eps);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_RMS_NORM_H_
