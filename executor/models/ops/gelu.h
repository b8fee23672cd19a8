// GELU with the tanh approximation (Hendrycks & Gimpel 2016; GPT-2's "gelu_new") as one autograd
// node.
#ifndef ACCEL_EXECUTOR_MODELS_OPS_GELU_H_
#define ACCEL_EXECUTOR_MODELS_OPS_GELU_H_

#include <ATen/core/Tensor.h>

namespace accel::exec {

// 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), elementwise. x: any shape, floating point. Returns
// x's shape and dtype. Keeps only x, in its dtype (as LibTorch's gelu). A 16-bit x on the CPU is
// computed in fp32 blocks and rounded once (ops/float_blocks.h: 2–3× faster than LibTorch 1.13's
// bf16 kernels); other inputs run at::gelu and at::gelu_backward unchanged, bit for bit.
at::Tensor Gelu(const at::Tensor& x);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_GELU_H_
