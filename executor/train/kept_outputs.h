// Per-op selective activation checkpointing: inside a Recompute region (executor/train/recompute.h,
// e.g. a whole transformer block), the outputs of the ops marked kept are stored by the region's
// forward and reused when backward recomputes the region, so the recompute re-runs only the other
// ops, and those ops' backward needs no extra work either. torchtitan's per-op policy
// (`selective_ac_option = "op"`, torchtitan/distributed/activation_checkpoint.py) keeps the outputs
// of every other matrix multiply and of attention this way, with PyTorch's selective-checkpoint
// contexts (torch/utils/checkpoint.py), which LibTorch 1.13 lacks.
//
// Each function below runs its op plainly when `keep` is false or when no region is running on
// the calling thread (ActiveRegion), so a block calls them the same way with and without
// recompute. The ops a region's recompute runs must be those its forward ran, in the same order;
// the stored outputs are used by one backward (a second backward through the region throws
// c10::Error, as does a recompute that runs different kept ops).
#ifndef ACCEL_EXECUTOR_TRAIN_KEPT_OUTPUTS_H_
#define ACCEL_EXECUTOR_TRAIN_KEPT_OUTPUTS_H_

#include <ATen/core/Tensor.h>

#include <vector>

#include "executor/train/recompute.h"

namespace accel::exec {

// Linear(x, weight, bias, kOutIn) (executor/models/ops/linear.h: x·Wᵀ + b as torch::nn::Linear
// computes it under autocast; x [..., in], weight [out, in], bias [out] or undefined -> [..., out]).
// Kept: the region's forward stores the output; its recompute hands the stored output to Linear,
// which returns it with its usual backward (dx = dy·W, dW = dyᵀ·x, db = Σ dy), so no product is
// recomputed and gradients equal the plain op's bit for bit. Memory kept from forward to
// backward: the output.
at::Tensor KeptLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool keep);

// Linear(x, m, {}, kInOut): x·m as torch::matmul computes it under autocast (x [..., k], m [k, n])
// -> [..., n]; kept as KeptLinear. For GPT-2's Conv1D, whose weight is [in, out].
at::Tensor KeptMatmul(const at::Tensor& x, const at::Tensor& m, bool keep);

// fn(inputs) with fn's outputs kept: the recompute returns them through a region whose backward
// re-runs fn on the recomputed inputs (RecomputeFromOutputs), so fn runs once in forward and once
// in backward, as FlashAttention's backward recomputes its scores (Dao 2023) — for the
// attention core. Memory kept from forward to backward: the outputs. fn must not draw random
// numbers differently on recompute (the RNG state is restored, as for Recompute).
std::vector<at::Tensor> KeptOutputs(const RecomputeManyFn& fn, const std::vector<at::Tensor>& inputs, bool keep);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_KEPT_OUTPUTS_H_
