// The GeGLU gate (Shazeer 2020, "GLU Variants Improve Transformer") with GELU's tanh
// approximation, as Gemma's MLP uses it (transformers' gelu_pytorch_tanh), as one autograd node.
#ifndef ACCEL_EXECUTOR_MODELS_OPS_GEGLU_H_
#define ACCEL_EXECUTOR_MODELS_OPS_GEGLU_H_

#include <ATen/core/Tensor.h>

namespace accel::exec {

// gelu_tanh(gate) · up, elementwise, gelu_tanh(x) = 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
// gate, up: the same shape and dtype. Returns that shape and dtype. Keeps gate and up and
// recomputes gelu_tanh(gate) in backward (as ops/swiglu.h): d up = g·gelu_tanh(gate),
// d gate = gelu_tanh'(gate)·g·up (LibTorch's gelu_backward kernel, approximate "tanh"). The
// results equal the composed ops' bit for bit.
at::Tensor GeGlu(const at::Tensor& gate, const at::Tensor& up);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_GEGLU_H_
