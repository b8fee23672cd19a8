// The projections of the executor's blocks (nn.Linear's x·Wᵀ + b, Hugging Face Conv1D's x·W) as
// one autograd node that keeps the weight parameter itself for backward, never a copy or a view
// of its storage.
#ifndef ACCEL_EXECUTOR_MODELS_OPS_LINEAR_H_
#define ACCEL_EXECUTOR_MODELS_OPS_LINEAR_H_

#include <ATen/core/Tensor.h>

namespace accel::exec {

// How a weight is stored: nn.Linear's [out, in] (y = x·Wᵀ) or Conv1D's [in, out] (y = x·W).
enum class WeightLayout { kOutIn, kInOut };

// y = x·Wᵀ + bias (kOutIn, as torch::nn::functional::linear computes it) or x·W + bias (kInOut,
// as torch::matmul, then the bias added) under the calling thread's autocast: an fp32 operand is
// cast to autocast's dtype for the product when it is on for x's device (at::autocast's
// cached_cast rule). x: [..., in]; bias: [out] or undefined. Returns [..., out] in the product's
// dtype.
// `stored`, when defined, is returned instead of computing the product (per-op recompute hands a
// kept output back, executor/train/kept_outputs.h); it must be what this call would compute.
// Keeps for backward x in the product's dtype (autocast's copy when it casts) and `weight` itself:
// autograd's own linear keeps autocast's 16-bit copy of an fp32 weight (2 B per weight element of
// every block for the step), and matmul keeps the transposed view of an nn.Linear weight, which
// holds on to the storage ZeRO-3 frees after a unit's forward (executor/train/zero3_sync.cc).
// Backward casts the weight again (a transient of its size in the product's dtype) and computes
// dx = dy·W, dW = dyᵀ·x, dbias = Σ dy in the shapes and order of PyTorch's mm and addmm backward
// (torch/csrc/autograd/FunctionsManual.cpp mm_mat1_backward, mm_mat2_backward; the bias summed in
// the incoming gradient's layout, as autograd reduces a broadcast bias), then casts them to the
// operands' dtypes: the gradients equal autograd's bit for bit. Under a WeightGradDeferral
// (weight_grad_store.h) backward leaves the weight's gradient to the store's W.
at::Tensor Linear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, WeightLayout layout,
                  const at::Tensor& stored = {});

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_LINEAR_H_
