// The SwiGLU gate (Shazeer 2020, "GLU Variants Improve Transformer") as one autograd node.
#ifndef ACCEL_EXECUTOR_MODELS_OPS_SWIGLU_H_
#define ACCEL_EXECUTOR_MODELS_OPS_SWIGLU_H_

#include <ATen/core/Tensor.h>

namespace accel::exec {

// silu(gate) · up, elementwise. gate, up: the same shape and dtype. Returns that shape and dtype.
// Keeps gate and up and recomputes silu(gate) in backward: d up = g·silu(gate), d gate =
// silu'(gate)·g·up (LibTorch's silu_backward kernel). Composed of ATen ops, autograd keeps
// silu(gate) as well. The results equal the composed ops' bit for bit (the same kernels in the
// same order).
at::Tensor SwiGlu(const at::Tensor& gate, const at::Tensor& up);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_SWIGLU_H_
