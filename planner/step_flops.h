#ifndef ACCEL_PLANNER_STEP_FLOPS_H_
#define ACCEL_PLANNER_STEP_FLOPS_H_

#include <array>
#include <cstdint>
#include <vector>

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

// The attention's heads as a tensor-parallel group computes them: query heads, key/value heads
// with a head replicated on R tp ranks counted R times (Model.kv_head_replicas: each of those
// ranks computes it; num_kv_heads 0 means one per query head), and the head dimension
// (Model.head_dim, else hidden_size / num_heads). Divide by tp for one rank's share.
struct AttentionHeads {
  int64_t heads = 0;
  int64_t kv = 0;
  int64_t head_dim = 0;
};
AttentionHeads AttentionHeadsOf(const ir::Model& model);

// Forward FLOPs of one transformer block for one microbatch on one rank, split by part.
struct LayerFlops {
  double qkv = 0;        // 2·b·s·h·(a·d + 2·kv·d)
  double attention = 0;  // Q·Kᵀ 2·b·s²·(a·d) + probabilities·V 2·b·s²·(a·d)
  double output = 0;     // 2·b·s·(a·d)·h
  double mlp = 0;        // gpt2 2 matmuls: 4·b·s·h·ffn; llama gated 3 matmuls: 6·b·s·h·ffn
  // Of qkv, output and mlp: what per-op recompute runs again (the matmuls whose outputs it does not
  // keep, planner/recompute_policy.h): gpt2 attn.c_proj and mlp.c_proj, llama k_proj, o_proj and
  // up_proj.
  double op_recomputed = 0;
  double Total() const { return qkv + attention + output + mlp; }
};

// One matrix multiply of a forward pass: `count` products C[m×n] = A[m×k]·B[k×n] (count > 1
// for the batched attention products, one per sequence and head), reading its operands as
// `layout` says (ir::MatmulLayout: the executor's Conv1D and attention products are NN,
// nn.Linear and the LM head x·Wᵀ are NT).
struct Gemm {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t count = 1;
  bool attention = false;  // Q·Kᵀ or probabilities·V (selective recompute re-runs these)
  ir::MatmulLayout layout = ir::MATMUL_LAYOUT_NN;
  // The share of the product per-op recompute runs again: 1 for the attention products (its
  // backward re-runs the core), 0 for a kept matmul output, between for a product standing for
  // several matmuls (llama's q/k/v, gate/up) (planner/recompute_policy.h).
  double op_recomputed = 1;
  double Flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
           static_cast<double>(count);
  }
};

// The forward matmuls of one block for one microbatch on one rank, in execution order, with
// the shapes LayerForwardFlops counts (their Flops() sum to LayerForwardFlops(...).Total()) and
// the layouts the executor runs them in (gpt2's Conv1D weights are [in×out]: NN; llama's
// nn.Linear weights [out×in]: NT; the attention products NN, their heads, transposed views of
// the projections, copied contiguous by matmul's batch reshape, except llama's Q·Kᵀ with
// grouped keys, NT: repeat_interleave leaves K contiguous and Kᵀ a view):
// t = b·s/cp tokens; qkv [t×h]·[h×(a+2kv)d/tp] (llama as three products of the same total
// width, counted as one), Q·Kᵀ b·a/tp products [s/cp×d]·[d×s], probabilities·V
// [s/cp×s]·[s×d], output [t×ad/tp]·[ad/tp×h], MLP input [t×h]·[h×ffn/tp] (twice for llama's
// gate and up), MLP output [t×ffn/tp]·[ffn/tp×h]. Sequence parallelism gathers the sequence
// before these, so t does not shrink with it.
// A mixture-of-experts model's MLP is its MoE block's (the active parameters,
// docs/planner-facts.md §9): router [t×h]·[h×E], routed experts over t·k rows [t·k×h]·[h×fe/tp]
// twice and [t·k×fe/tp]·[fe/tp×h], shared experts as a SwiGLU of width S·fs — for an MoE block;
// with moe_block false, a dense block of the same model (the dense blocks of a model mixing
// both, e.g. DeepSeek's first_k_dense_replace, Qwen's mlp_only_layers).
std::vector<Gemm> LayerForwardGemms(const ir::Model& model, int64_t seq_len, int64_t micro_batch,
                                    int64_t tp, int64_t cp, bool moe_block = true);

// The LM head's forward matmul: [t×h]·[h×V_padded/tp], NT (x·Wᵀ with the [V×h] embedding
// or head weight).
Gemm HeadForwardGemm(const ir::Model& model, int64_t seq_len, int64_t micro_batch, int64_t tp,
                     int64_t cp);

// The two backward matmuls of a forward product C = A·B, each as many times as the forward one
// (Narayanan et al. 2021 §5.1: backward is twice the forward FLOPs), in the shapes and layouts
// PyTorch's mm/bmm backward runs them (torch/csrc/autograd/FunctionsManual.cpp
// mm_mat1_backward, mm_mat2_backward): dA = dC·Bᵀ, shape (m, k, n), NT when B was row-major
// (NN forward) and NN when B was a transposed view (NT forward); dB = Aᵀ·dC, shape (k, n, m),
// TN, or for an NT mm forward (B = Wᵀ column-major) computed as (dCᵀ·A)ᵀ, shape (n, k, m), TN
// (bmm, the attention products, has no such case: (k, n, m)). Forward layouts other than NN and
// NT (which the planner never builds) are treated as NN.
std::array<Gemm, 2> BackwardGemms(const Gemm& forward);

// The forward FLOPs of one block of `model` for `micro_batch` sequences of `seq_len` tokens,
// divided over `tp` tensor-parallel and `cp` context-parallel ranks (heads, ffn columns and
// sequence split evenly; Megatron-LM). d = head_dim (hidden_size / num_heads when unset),
// kv = num_kv_heads (num_heads when unset) × Model.kv_head_replicas (a head replicated on R tp
// ranks is computed by each), ffn = ffn_hidden_size (4h when unset).
LayerFlops LayerForwardFlops(const ir::Model& model, int64_t seq_len, int64_t micro_batch,
                             int64_t tp, int64_t cp, bool moe_block = true);

// Forward FLOPs of the LM head for one microbatch on one rank: 2·b·s·h·V_padded / (tp·cp)
// (vocabulary-parallel output layer; padded_vocab_size, else vocab_size).
double HeadForwardFlops(const ir::Model& model, int64_t seq_len, int64_t micro_batch, int64_t tp,
                        int64_t cp);

// The extra forward FLOPs recompute adds in backward for one block: none 0; selective the
// attention core (LayerFlops::attention); per-op the attention core (its kept output's backward
// re-runs it) and the matmuls whose outputs it does not keep (LayerFlops::op_recomputed); full
// the whole block (LayerFlops::Total()).
double LayerRecomputeFlops(const LayerFlops& layer, RecomputeMode mode);

// Backward FLOPs for a forward of `forward_flops`: 2× (gradients with respect to inputs and to
// weights, one matmul each; Narayanan et al. 2021 §5.1).
inline double BackwardFlops(double forward_flops) { return 2.0 * forward_flops; }

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_STEP_FLOPS_H_
