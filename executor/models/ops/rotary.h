// Rotary position embedding (Su et al. 2021, RoFormer) as one autograd node that keeps no
// activations: its backward is the inverse rotation.
#ifndef ACCEL_EXECUTOR_MODELS_OPS_ROTARY_H_
#define ACCEL_EXECUTOR_MODELS_OPS_ROTARY_H_

#include <ATen/core/Tensor.h>

namespace accel::exec {

// Hugging Face's apply_rotary_pos_emb: y = x·cos + rotate_half(x)·sin, rotate_half mapping the
// last dim's halves (x1, x2) to (−x2, x1). x: [batch, heads, seq, head_dim] (any strides, fp32 or
// bf16); cos, sin: [seq, head_dim] fp32 tables (cat(freqs, freqs) of LlamaModel). Computed in
// fp32, returned in x's dtype and shape.
// Keeps only cos and sin (shared by every layer of a forward). The map is a rotation per pair
// (x_i, x_{i+d/2}), so dx = g·cos + rotate_half_transposed(g·sin), rotate_half's transpose
// mapping (y1, y2) to (y2, −y1). Composed of ATen ops, autograd keeps x and rotate_half(x)
// (two copies of q and of k per layer).
at::Tensor ApplyRotary(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_ROTARY_H_
