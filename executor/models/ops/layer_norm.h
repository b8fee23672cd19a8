// LayerNorm (Ba et al. 2016) as one autograd node that runs in its input's dtype under autocast.
#ifndef ACCEL_EXECUTOR_MODELS_OPS_LAYER_NORM_H_
#define ACCEL_EXECUTOR_MODELS_OPS_LAYER_NORM_H_

#include <ATen/core/Tensor.h>

namespace accel::exec {

// y = (x − mean) / sqrt(var + eps) · weight + bias over the last dim, with LibTorch's native
// kernels (statistics in fp32). x: [..., h], weight and bias: [h], all of one dtype. Returns x's
// shape and dtype.
// Keeps for backward x (in its own dtype), weight, bias and the fp32 per-row mean and 1/std
// (8 B per row). torch::nn::LayerNorm under autocast runs in fp32 (layer_norm is on autocast's
// fp32 list), which with bf16 parameters keeps an fp32 copy of x and returns fp32 that the next
// matmul copies back to bf16; this node does neither. A 16-bit x on the CPU runs in fp32 row
// blocks (ops/float_blocks.h: LibTorch 1.13's bf16 CPU kernel is 13× slower than its fp32 one),
// its output rounded once; the statistics are fp32 on every path.
at::Tensor LayerNorm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double eps);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_LAYER_NORM_H_
