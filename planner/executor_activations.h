// Activation memory of accel's own executor (executor/models/gpt2.cc, llama.cc), per rank with
// tp = 1: the tensors autograd keeps for backward, listed op by op from the model code under
// LibTorch's autocast rules, and checked against the counting CPU allocator
// (executor/memory/counting_allocator.h; bench/memory_bench/run.sh compares whole runs).
// Korthikanti et al. 2022 (memory_model.h ActivationBytesPerLayer) describe Megatron-LM's fused
// kernels with 16-bit activations and dropout; accel keeps residuals and norm inputs in the
// parameter dtype (fp32), casts matmul operands to bf16 (saved copies), keeps no dropout masks and
// caches bf16 copies of the weights for the step, so its coefficients differ.
#ifndef ACCEL_PLANNER_EXECUTOR_ACTIVATIONS_H_
#define ACCEL_PLANNER_EXECUTOR_ACTIVATIONS_H_

#include <cstdint>
#include <string>

#include "planner/memory_model.h"

namespace accel::planner {

// One micro-batch on one rank. Sizes are elements; bytes come out.
struct ExecutorActivationShape {
  bool gpt2 = true;             // false: the Llama family (llama, mistral, qwen2)
  int64_t seq_len = 0;          // s
  int64_t micro_batch = 0;      // b
  int64_t hidden = 0;           // h
  int64_t heads = 0;            // a
  int64_t kv_heads = 0;         // Llama grouped-query attention; = heads for GPT-2
  int64_t ffn = 0;              // MLP inner size
  int64_t vocab = 0;            // padded vocabulary V
  bool bf16_compute = false;    // autocast to bf16 (else fp32 compute)
  bool bf16_params = false;     // parameters stored in bf16: the whole forward runs in bf16
  // The plan's attention kernel is SDPA (ir::ATTENTION_KERNEL_SDPA): the core keeps its output
  // and an fp32 log-sum-exp per query (FlashAttention-2, Dao 2023) instead of the scores.
  bool fused_attention = false;
  // Tensor-parallel degree t of the block (executor/models/tensor_parallel.h) and whether norms
  // and residuals run on sequence shards (sequence parallel).
  int64_t tp = 1;
  bool sequence_parallel = false;
};

// Bytes one transformer block keeps for backward, no recompute, with x = s·b·h, f = s·b·ffn,
// S = b·a·s² (attention scores), n = s·b:
//   GPT-2 fp32: 32x + 8f + 4S + 16n + s²    (input, LN-1 output, q/k/v, attention output,
//               residual, LN-2 output at 4 B; c_fc output and GELU output; softmax output;
//               two LayerNorms' mean and rstd; the causal mask)
//   GPT-2 bf16: 20x + 6f + 2S + 16n + s²    (fp32 input and residual; bf16 copies of the LN
//               outputs, q, k, v and the attention output; fp32 GELU input + bf16 GELU output)
//   Llama fp32: 48x + 16f + 4S + 8n + s²    (RMSNorm as composed ops, RoPE'd and repeated k/v,
//               gate, SiLU, up and their product)
//   Llama bf16: 42x + 8f + 2S + 8n + s²
// and with bf16 parameters (residual stream, norms and matmul operands all bf16, no casts):
//   GPT-2: 16x + 4f + 2S + 8n + s²,  Llama: 32x + 8f + 2S + 8n + s²
// plus, with bf16 compute over fp32 parameters, autocast's bf16 copy of the block's weight matrices for the step
// (GPT-2 4h² + 2h·ffn, Llama 2h² + 2h·kv·(h/a) + 3h·ffn elements, 2 B each).
// With fused attention (SDPA) the attention core's part, c·S + s² (softmax output, causal mask),
// is replaced by what scaled_dot_product_attention saves: its output (x elements at the compute
// dtype, c = 2 or 4 B) and the fp32 log-sum-exp (4·b·a·s B); q, k and v are counted as before.
// Tensor parallel t: the heads' and the MLP's tensors (f, S, the core, the weight copies) are
// divided by t; of the x terms a replicated part stays whole (the norms' inputs and outputs and
// the residual, which every rank holds) and the rest is divided by t, and with sequence
// parallelism the norms' tensors and statistics are sequence shards while the gathered norm
// outputs the column-parallel matmuls keep are whole. Whole + divided x coefficients, the n
// terms whole (with sequence parallelism: divided):
//   GPT-2 fp32 16 + 16 (sp 8 + 24), bf16 12 + 8 (sp 4 + 16), bf16 parameters 8 + 8 (sp 4 + 12);
//   Llama fp32 32 + 16 (sp 20 + 40), bf16 34 + 8 (sp 10 + 32), bf16 parameters 24 + 8
//   (sp 10 + 28); with sequence parallelism Llama keeps both the shards its composed RMSNorm
//   saves and the gathered outputs, more in all than at t = 1 (a sum of 60x instead of 48x).
// Measured per rank with the counting allocator on a simulated group of 2 and 4 ranks
// (tests/executor/memory/activation_estimate_test.cc): exact for GPT-2, within 1% for Llama
// (its rotary tables).
int64_t ExecutorActivationBytesPerLayer(const ExecutorActivationShape& shape);

// State a checkpointed region keeps besides its inputs: the CPU generator's state, so dropout
// would draw the same mask in the recompute (executor/train/recompute.h; measured: 5056 B).
inline constexpr int64_t kRecomputeRngStateBytes = 5056;

// Bytes one transformer block keeps for backward when the executor checkpoints the modules the
// plan names (ir::Training.recompute_modules):
//   kNone:      ExecutorActivationBytesPerLayer.
//   kSelective: that, minus the attention core's softmax output and causal mask (c·S + s², c = 4
//               for fp32 compute, 2 for bf16; with SDPA its output and log-sum-exp instead),
//               plus kRecomputeRngStateBytes, plus, with bf16
//               compute over fp32 parameters, the core's inputs kept in fp32 where the core's
//               matmuls would have kept bf16 copies (GPT-2 6x: c_attn's fp32 bias promotes q, k, v;
//               Llama 4x: the fp32 rotary tables promote q and k).
//   kFull:      the block's input (x elements at 4 B with fp32 parameters, 2 B with bf16) plus
//               kRecomputeRngStateBytes; the forward runs without grad, so autocast keeps no
//               weight copies for the step.
// Chen et al. 2016 (full), Korthikanti et al. 2022 §4.1 (selective); the terms are accel's,
// checked against the counting allocator (tests/executor/memory/activation_estimate_test.cc).
int64_t ExecutorKeptBytesPerLayer(const ExecutorActivationShape& shape, RecomputeMode mode);

// Full recompute: bytes above the kept block inputs at the peak of one checkpointed block's
// backward: the block rebuilt with its no-recompute activations, autocast's weight copies
// included (ExecutorActivationBytesPerLayer), plus that block's backward working memory
// (ExecutorBlockBackwardBytes), plus what the rebuilt block's backward holds beyond both with
// 16-bit compute (x = s·b·h elements): GPT-2 with bf16 compute over fp32 parameters 16x +
// kRecomputeRngStateBytes, Llama 8x; Llama with bf16 parameters 2x. Measured with the counting
// allocator on a one-block pipeline stage whose block is checkpointed
// (tests/executor/memory/activation_estimate_test.cc): exact for fp32 (within the generator
// state), within 8% elsewhere (the peak moves between ops as the shape changes; GPT-2 with
// bf16 parameters at twice the width is the 8%, from ExecutorBlockBackwardBytes).
int64_t ExecutorRecomputeWorkingBytes(const ExecutorActivationShape& shape);

// Bytes one block's backward holds above what was live when it started: the gradients of its
// intermediates as they appear, less the saved tensors backward frees on the way, and autograd's
// weight-gradient temporaries. Measured with the counting allocator on a pipeline stage holding
// one block (tests/executor/memory/activation_estimate_test.cc), with f = s·b·ffn, x = s·b·h and
// W = h·ffn elements (the attention scores S do not enter: the MLP's backward is the peak):
//   GPT-2 fp32: 4f + 4W; bf16 compute: 6f − 2W; bf16 parameters: 3f + x
//   Llama fp32: 8f;      bf16 compute: 4f;      bf16 parameters: 4f
// Exact on the measured shapes except GPT-2 with bf16 parameters and Llama with bf16 compute
// (within 16%; the peak moves between ops as the shape changes). The 16-bit figures here and in
// ExecutorBlockForwardBytes were fitted on a CPU with bf16 instructions (AVX512-BF16); on an
// AVX2-only CPU LibTorch's fallback kernels allocate less scratch, and these estimates exceed
// the measurement by up to 29% (GPT-2 with bf16 parameters; the test allows 45%). A stage
// without the head peaks during a block's backward; with the head, the loss backward's larger
// transients come first (ExecutorHeadBytes).
int64_t ExecutorBlockBackwardBytes(const ExecutorActivationShape& shape);

// Bytes one block's forward holds at its peak beyond what was live when it started and what it
// keeps for backward (ExecutorActivationBytesPerLayer): the transients of its widest op, with
// x = s·b·h and f = s·b·ffn elements, per rank of a tensor-parallel group of t:
//              t = 1        t >= 2                    t >= 2, sequence parallel
//   GPT-2 fp32: 20x          12x + 12x/t               as without
//   bf16:       22x + 4f     12x + (12x + 4f)/t        6x + (18x + 4f)/t
//   bf16 params 6x + f       6x + 6x/t                 as without
//   Llama fp32: 8x           8x + 4x/t                 16x + 4x/t
//   bf16:       22x          16x + 8x/t                10x + 14x/t
//   bf16 params 6x           6x + 2x/t                 8x + 4x/t
// The peak moves between ops with t (the all-reduced and gathered copies appear only at t >= 2),
// so the columns are separate fits, not one formula. Measured with the counting allocator on a
// pipeline stage holding one block, on a simulated group for t = 2 and 4
// (tests/executor/memory/activation_estimate_test.cc): GPT-2 within 1% but for bf16 parameters
// with sequence parallelism and twice the MLP (11%), Llama within 6% (its rotary tables) but with
// bf16 parameters at t = 1 within 40% — a block's backward
// (ExecutorBlockBackwardBytes, 4f) exceeds it there in every measured shape, so it never sets
// the peak. A stage's forward peaks
// in its last block, holding every micro-batch's kept tensors: on a pipeline stage it competes
// with the block backward's working memory, on a stage with the head with the loss.
int64_t ExecutorBlockForwardBytes(const ExecutorActivationShape& shape);

// Bytes of the output side for one micro-batch: final norm (GPT-2 fp32 8x + 8n, bf16 6x + 8n,
// bf16 parameters 4x; Llama fp32 16x, bf16 14x, bf16 parameters 12x), the fp32 log-probabilities the cross-entropy keeps (4·n·V), the
// targets (8n), with bf16 compute over fp32 parameters the bf16 copy of the output weight (2·V·h), and the backward
// of the loss, which holds two fp32 n·V gradients at once (log-softmax and logits).
int64_t ExecutorHeadBytes(const ExecutorActivationShape& shape);

// The part of ExecutorHeadBytes one micro-batch keeps until its backward (the final norm's saved
// tensors, the fp32 log-probabilities and the targets), without the loss backward's transients
// and the step's weight copy: what each further micro-batch in flight on a pipeline's last stage
// adds (GPipe keeps m of them).
int64_t ExecutorHeadKeptBytes(const ExecutorActivationShape& shape);

// The per-layer formula of ExecutorKeptBytesPerLayer for `mode` and "x=s·b·h ..." with the
// numbers, for the plan's formula text.
std::string ExecutorActivationFormula(const ExecutorActivationShape& shape,
                                      RecomputeMode mode = RecomputeMode::kNone);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_EXECUTOR_ACTIVATIONS_H_
