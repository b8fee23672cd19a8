#ifndef ACCEL_PLANNER_STEP_FLOPS_H_
#define ACCEL_PLANNER_STEP_FLOPS_H_

#include <cstdint>

#include "ir/plan.pb.h"
#include "planner/memory_model.h"

// Matrix-multiply FLOPs of the transformers accel builds, per microbatch. A multiply-add counts
// 2 FLOPs; only matmuls are counted (elementwise work is bandwidth-bound and estimated from
// bytes). Narayanan et al. 2021 (arXiv 2104.04473) §5.1: one GPT layer's forward is
// 24·b·s·h² + 4·b·s²·h, i.e. 24·b·s·h²·(1 + s/(6h)); backward is twice the forward; the
// LM head adds 2·b·s·h·V. Korthikanti et al. 2022 (arXiv 2205.05198) §5: selective recompute
// re-runs only the attention core (Q·Kᵀ and the weighted sum of V), full recompute the whole
// forward of the block. Causal attention is counted in full (s², as the papers do).
namespace accel::planner {

// Forward FLOPs of one transformer block for one microbatch on one rank, split by part.
struct LayerFlops {
  double qkv = 0;        // 2·b·s·h·(a·d + 2·kv·d)
  double attention = 0;  // Q·Kᵀ 2·b·s²·(a·d) + probabilities·V 2·b·s²·(a·d)
  double output = 0;     // 2·b·s·(a·d)·h
  double mlp = 0;        // gpt2 2 matmuls: 4·b·s·h·ffn; llama gated 3 matmuls: 6·b·s·h·ffn
  double Total() const { return qkv + attention + output + mlp; }
};

// The forward FLOPs of one block of `model` for `micro_batch` sequences of `seq_len` tokens,
// divided over `tp` tensor-parallel and `cp` context-parallel ranks (heads, ffn columns and
// sequence split evenly; Megatron-LM). d = head_dim (hidden_size / num_heads when unset),
// kv = num_kv_heads (num_heads when unset), ffn = ffn_hidden_size (4h when unset).
LayerFlops LayerForwardFlops(const ir::Model& model, int64_t seq_len, int64_t micro_batch,
                             int64_t tp, int64_t cp);

// Forward FLOPs of the LM head for one microbatch on one rank: 2·b·s·h·V_padded / (tp·cp)
// (vocabulary-parallel output layer; padded_vocab_size, else vocab_size).
double HeadForwardFlops(const ir::Model& model, int64_t seq_len, int64_t micro_batch, int64_t tp,
                        int64_t cp);

// The extra forward FLOPs recompute adds in backward for one block: none 0; selective the
// attention core (LayerFlops::attention); full the whole block (LayerFlops::Total()).
double LayerRecomputeFlops(const LayerFlops& layer, RecomputeMode mode);

// Backward FLOPs for a forward of `forward_flops`: 2× (gradients with respect to inputs and to
// weights, one matmul each; Narayanan et al. 2021 §5.1).
inline double BackwardFlops(double forward_flops) { return 2.0 * forward_flops; }

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_STEP_FLOPS_H_
