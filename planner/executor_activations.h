// Activation memory of accel's own executor (executor/models/gpt2.cc, llama.cc), per rank with
// tp = 1: the tensors autograd keeps for backward, listed op by op from the model code under
// LibTorch's autocast rules, and checked against the counting CPU allocator
// (executor/memory/counting_allocator.h; bench/memory_bench/run.sh compares whole runs).
// Korthikanti et al. 2022 (memory_model.h ActivationBytesPerLayer) describe Megatron-LM's fused
// kernels with 16-bit activations and dropout; accel keeps residuals and norm inputs in the
// parameter dtype (fp32), casts matmul operands to bf16 (saved copies) and keeps no dropout masks,
// so its coefficients differ. Its projections keep the weights themselves, not autocast's 16-bit
// copies of them (executor/models/ops/linear.h).
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
  // Blocks of the chunked head + loss (ir::Training.loss_chunks); 0: ceil(V / tp / h).
  int64_t loss_chunks = 0;
  // Context parallelism (executor/models/context/context_attention.h): cp > 1 ranks each hold
  // seq_len tokens (s / cp of the whole sequence), and attention spans them by ring attention or,
  // with `ulysses`, by DeepSpeed-Ulysses all-to-alls; only the attention core's terms change.
  int64_t cp = 1;
  bool ulysses = false;
  // Llama family: the head width d when the model states one apart from h / a (Qwen3's head_dim;
  // q is then s·b·a·d, not x), 0: h / a; and per-head q/k RMSNorms (Qwen3), which keep their
  // inputs, the projections' outputs c·q and c·k, and an fp32 1/rms per head and token.
  int64_t head_dim = 0;
  bool qk_norm = false;
  // OLMo 2 and Gemma (ir::Model.norm_placement): whether the block has the input norms of
  // attention and MLP (false: OLMo 2) and the norms on their outputs (OLMo 2, Gemma); q/k norms
  // over the whole projection (OLMo 2); GeGLU's gate (Gemma); soft-capped attention scores and
  // final logits (Gemma 2).
  bool pre_norms = true;
  bool post_norms = false;
  bool qk_norm_full_width = false;
  bool norm_unit_offset = false;  // Gemma's norms keep fp32 inputs (x̂·(1 + w) in fp32)
  bool gelu_tanh = false;
  bool attn_softcapping = false;
  bool final_softcapping = false;
};

// Bytes one transformer block keeps for backward, no recompute, listed tensor by tensor from the
// lean blocks (executor/models/ops/: norms, rotary and SwiGLU as single autograd nodes, k and v
// never repeated), with p the parameters' bytes (the residual stream and the norms' inputs: 4, or
// 2 with bf16 parameters), c the matmuls' bytes (2 under bf16 autocast or with bf16 parameters,
// else 4), x = s·b·h, k = s·b·kv_heads·head_dim, f = s·b·ffn, n = s·b, S = b·a·s²:
//   GPT-2: 2p·x  the two LayerNorms' inputs (+ 16n: their fp32 mean and 1/std)
//          2c·x  their outputs, the input copies of c_attn and c_fc
//          3c·x  q, k, v (c_attn's output; its bias is added in c)
//          c·x   the attention output (c_proj's input)
//          2c·f  GELU's input (c_fc's output) and output (c_proj's input)
//   Llama: 2p·x  the two RMSNorms' inputs (+ 8n: their fp32 1/rms)
//          2c·x  their outputs, the input of q/k/v and of gate/up
//          c·x + 2c·k  q and k after rotary (which keeps nothing), v
//          c·x   the attention output (o_proj's input)
//          3c·f  SwiGLU's gate and up, and down_proj's input
//   plus the attention core: math c·S + s² (softmax output, causal mask); SDPA 4·b·a·s (its fp32
//   log-sum-exp; its output is the attention output above),
//   OLMo 2 (norms after the sublayers only): the two norms keep the sublayers' outputs, 2c·x
//          (+ 8n), and the matmuls' inputs stay 2c·x; its full-width q/k norms keep c·x + c·k
//          and 8n of 1/rms;
//   Gemma (norms before and after): four norms keep their inputs in fp32 (x̂·(1 + w) is computed
//          in fp32), 16x (+ 16n), the two before the sublayers make 2c·x of matmul inputs;
//          GeGLU keeps what SwiGLU does (3c·f); and
//          with soft-capped scores the math core keeps tanh's output too: 2c·S + s²,
// Context parallel cp (s here the rank's s / cp tokens, S_all the whole sequence cp·s): Ulysses'
//   core runs on the whole sequence of a / cp heads: c·b·(a/cp)·S_all² + S_all² (math) or
//   4·b·(a/cp)·S_all (SDPA). Ring attention keeps, for each of the 2·cp + 1 (query chunk, key
//   chunk) pairs at or before the diagonal (chunks of r = s/2 tokens), its scores and
//   probabilities 2c·b·a·r², its partial output c·b·a·r·d and log-sum-exp and merge weight
//   2c·b·a·r (+ c·b·a·r·(2cp + 1) for the stacked log-sum-exps, the two merged
//   ones 2c·b·a·r, 2r² for the diagonal pairs' masks), and the cp − 1 key/value blocks it received,
//   2c·k each (the stacked copy of its own replaces k and v).
// At Llama-3-8B's shape (kv = a/4, ffn = 3.5h) with bf16 parameters that is 12x + 1x + 21x = 34 B
// per s·b·h besides the core; GPT-2 (ffn = 4h) 16x + 16x = 32 (Korthikanti et al. 2022 count 34
// for Megatron-LM's GPT block with flash attention, eq. 1–2 without dropout masks).
// Tensor parallel t: q, k, v, the attention output, f and S are this rank's
// heads and MLP slice (/ t; a replicated key/value head counted where held); the norms' outputs
// are whole (the column-parallel matmuls' gathered input); with sequence parallelism the norms'
// inputs and statistics are sequence shards (/ t).
// Measured per rank with the counting allocator, also on simulated groups of 2 and 4 ranks
// (tests/executor/memory/activation_estimate_test.cc).
int64_t ExecutorActivationBytesPerLayer(const ExecutorActivationShape& shape);

// Bytes one transformer block keeps for one pending weight gradient: a zero-bubble schedule's
// BACKWARD_WEIGHT waiting after its BACKWARD_INPUT (ir::PipelineStage.max_pending_weight_grads).
// A linear y = x·Wᵀ has weight gradient dW = dyᵀ·x (Qi et al. 2023 §2), so for a deferred W the
// executor MUST keep, per linear, exactly its input x and its output gradient dy, c B each (the
// matmuls' dtype, ComputeBytes), and nothing else of the block. With x = s·b·h (norm outputs
// are whole: the column-parallel matmuls' gathered input), q = s·b·h/t, k = this rank's key/value
// width (ExecutorActivationBytesPerLayer's), f = s·b·ffn/t:
//   inputs            c·x   the attention norm's output, shared by q, k and v (GPT-2's c_attn)
//                     c·q   the attention output (o_proj's input; GPT-2's c_proj)
//                     c·x   the MLP norm's output, shared by gate and up (GPT-2's c_fc)
//                     c·f   down_proj's input (GPT-2: the MLP c_proj's, GELU's output)
//   output gradients  c·(q + 2k)  of q, k and v (GPT-2: c_attn's 3q)
//                     c·x   of o_proj (row-parallel: whole before its reduction)
//                     2c·f  of gate and up (GPT-2: c_fc's f)
//                     c·x   of down_proj
// Llama: c·(4x + 2q + 2k + 3f); GPT-2: c·(4x + 4q + 2f). Bias gradients need only dy (counted);
// norm weights' gradients run with the input gradient. MoE blocks are counted as dense ones.
int64_t ExecutorPendingWeightGradBytesPerBlock(const ExecutorActivationShape& shape);

// ExecutorActivationBytesPerLayer at t = 1 without the attention core,
// per s·b·h element: the figure to compare with other stacks' "bytes per s·b·h".
double ExecutorBytesPerSbh(const ExecutorActivationShape& shape);

// State a checkpointed region keeps besides its inputs: the CPU generator's state, so dropout
// would draw the same mask in the recompute (executor/train/recompute.h; measured: 5056 B).
inline constexpr int64_t kRecomputeRngStateBytes = 5056;

// Bytes one transformer block keeps for backward when the executor checkpoints the modules the
// plan names (ir::Training.recompute_modules):
//   kNone:      ExecutorActivationBytesPerLayer.
//   kSelective: that without the attention core's own tensors (c·S + s², or SDPA's log-sum-exp),
//               plus kRecomputeRngStateBytes: the core's inputs q, k, v stay, the same size as the
//               copies its matmuls would have kept.
//   kFull:      the block's input (p·x, a sequence shard with sequence parallelism) plus
//               kRecomputeRngStateBytes.
//   kOp:        kFull's plus the outputs the block keeps (planner/recompute_policy.h), c B each:
//               GPT-2 c_attn 3q, the attention output q, c_fc f; Llama q_proj q, v_proj k, the
//               attention output q, gate_proj f, down_proj x (q, k, f this rank's widths under
//               tensor parallelism; down_proj's output is whole before its reduction).
// Chen et al. 2016 (full), Korthikanti et al. 2022 §4.1 (selective); checked against the counting
// allocator (tests/executor/memory/activation_estimate_test.cc).
int64_t ExecutorKeptBytesPerLayer(const ExecutorActivationShape& shape, RecomputeMode mode);

// Full recompute: bytes above the kept block inputs at the peak of one checkpointed block's
// backward: the block rebuilt with its no-recompute activations
// (ExecutorActivationBytesPerLayer), plus that block's backward working memory
// (ExecutorBlockBackwardBytes), plus 4x (x = s·b·h) for GPT-2 with bf16 compute over fp32
// parameters. Checked with the counting allocator on a one-block pipeline stage whose block is
// checkpointed (tests/executor/memory/activation_estimate_test.cc): exact for fp32 and for Llama
// with bf16 parameters, within 12% elsewhere (the peak moves between ops as the shape changes).
// Per-op recompute (mode kOp) rebuilds the same block, but the outputs it kept are already
// counted (ExecutorKeptBytesPerLayer) and move into the rebuilt graph: they come off. Its
// attention core runs only in the attention's backward, after the MLP's: measured, the MLP's
// backward peaks exactly the attention core's tensors (c·S + s²) below this, the attention's
// backward in between; the estimate keeps the upper end (at most the core's bytes over). GPT-2's
// extra 4x under bf16 compute does not appear with per-op recompute.
int64_t ExecutorRecomputeWorkingBytes(const ExecutorActivationShape& shape,
                                      RecomputeMode mode = RecomputeMode::kFull);

// Bytes one block's backward holds above what was live when it started: the gradients of its
// intermediates as they appear, less the saved tensors backward frees on the way, and autograd's
// weight-gradient temporaries. Measured with the counting allocator on a pipeline stage holding
// one block (tests/executor/memory/activation_estimate_test.cc), with f = s·b·ffn, x = s·b·h and
// W = h·ffn elements (the MLP's backward is the peak):
//   GPT-2 fp32: 4f + 4W; bf16 compute: 2f + 8W + 2x;       bf16 parameters: 3f + 6x
//   Llama fp32: 12f;     bf16 compute: max(6f, 10W + 2x);  bf16 parameters: 6f
// With bf16 compute over fp32 parameters each projection's backward casts its weight again and
// converts its weight gradient to fp32 (executor/models/ops/linear.h), hence the W terms. Exact
// on the fp32 shapes and for Llama with bf16 parameters; elsewhere the peak moves between the
// MLP's weight gradients and its activation gradients as the shape changes (GPT-2 with bf16
// parameters within 20%, bf16 compute within 26%; Llama with bf16 compute within 12%). The fp32
// and bf16-parameter figures were first measured on an AVX2-only AMD EPYC, the bf16-compute ones
// (refitted with the projections of ops/linear.h) on an AMD EPYC with AVX512-BF16, whose oneDNN
// kernels allocate more scratch (up to 40% more measured; the test allows an estimate 45% under
// on such CPUs). A stage without the head peaks during a block's
// backward; with the head, the loss backward's transients come first (ExecutorHeadBytes).
int64_t ExecutorBlockBackwardBytes(const ExecutorActivationShape& shape);

// Bytes one block's forward holds at its peak beyond what was live when it started and what it
// keeps for backward (ExecutorActivationBytesPerLayer): the transients of its widest op, with
// x = s·b·h and f = s·b·ffn elements, per rank of a tensor-parallel group of t:
//              t = 1        t >= 2                    t >= 2, sequence parallel
//   GPT-2 fp32: 20x          12x + 12x/t               as without
//   bf16:       16x          12x + 6x/t                6x + 12x/t
//   bf16 params 10x          6x + 6x/t                 as without
//   Llama fp32: 5x + 4f      7x + 8x/t                 as without
//   bf16:       11x          8x + 4x/t                 2x + 9x/t
//   bf16 params 3x + 2f      4x + 3x/t                 as without
// The peak moves between ops with t (the all-reduced and gathered copies appear only at t >= 2),
// so the columns are separate fits, not one formula. Measured with the counting allocator on a
// pipeline stage holding one block, on a simulated group for t = 2 and 4
// (tests/executor/memory/activation_estimate_test.cc) on an AVX2-only AMD EPYC: GPT-2 exact,
// Llama within 12% (the peak op depends on the head count); 16-bit transients are larger on a
// CPU with bf16 instructions (ExecutorBlockBackwardBytes). A stage's forward peaks in its last block, holding every
// micro-batch's kept tensors: on a pipeline stage it competes with the block backward's working
// memory, on a stage with the head with the loss.
int64_t ExecutorBlockForwardBytes(const ExecutorActivationShape& shape);

// Elements of one fp32 block of the executor's 16-bit GELU and LayerNorm on the CPU
// (executor/models/ops/float_blocks.h, which uses this constant).
inline constexpr int64_t kExecutorFloatBlockElements = 16384;

// The fp32 working set of those blocks, GPT-2 with 16-bit activations: a block's fp32 input and
// output, 8 B per element of min(one block, the larger of the rank's s·b·ffn and s·b·h), and
// LayerNorm's fp32 copies of its weight and bias with slack, 16h, and of its per-row fp32
// statistics, 32 B per token; 0 otherwise. Added to
// ExecutorBlockForwardBytes as a bound: the forward's peak holds between none and all of it,
// depending on which op the peak falls in (measured: the fitted terms ≤ measured ≤ the fitted
// terms + this). At most 128 KiB; on CUDA (where LibTorch's 16-bit kernels run directly) an
// over-count of that much. The backward's fitted tolerances already cover it.
int64_t ExecutorFloatBlockBytes(const ExecutorActivationShape& shape);

// Bytes of the output side for one micro-batch at the loss backward's peak: what it keeps
// (ExecutorHeadKeptBytes) plus the chunked loss's backward (executor/models/ops/
// chunked_cross_entropy.h), with V this rank's vocabulary rows (V / t), n tokens and 13n of target
// bookkeeping. fp32, by chunks of r = ⌈n / chunks⌉ token rows: the input's gradient (4x), the
// weight's gradient (4·V·h, each chunk's added in place) and one chunk's logits (4·r·V). 16 bits,
// by blocks of B = ⌈V / chunks⌉ vocabulary rows over every token: the weight in the product's
// dtype when it differs from the parameters' (c·V·h), the weight's gradient in the parameters'
// dtype (p·V·h), the input's gradient summed in fp32 (4x), one block's logits and their gradient
// ((4 + c)·n·B), and the larger of the block's input-gradient product with its fp32 conversion
// ((c + 4)·x) and, when the dtypes differ, its weight-gradient product (c·B·h).
// With Gemma 2's final soft cap, tanh of one chunk's (16 bits: one block's) fp32 logits more.
// Measured with the counting allocator on the loss alone
// (tests/executor/memory/activation_estimate_test.cc): fp32 within 4%, 16 bits within 1% with the
// default chunks and within 7% with 1 to 3 chunks (measured on an AVX512-BF16 CPU, whose oneDNN
// kernels allocate scratch for the larger blocks).
int64_t ExecutorHeadBytes(const ExecutorActivationShape& shape);

// What one micro-batch keeps from the head's forward until its backward: the final norm's input
// (p·x, a shard with sequence parallelism) and statistics, the head's input in the product's
// dtype (c·x), the targets (8n) and the fp32 log-sum-exp (4n); no logits. What each further
// micro-batch in flight on a pipeline's last stage adds (GPipe keeps m of them).
int64_t ExecutorHeadKeptBytes(const ExecutorActivationShape& shape);

// The per-layer formula of ExecutorKeptBytesPerLayer for `mode` and "x=s·b·h ..." with the
// numbers, for the plan's formula text.
std::string ExecutorActivationFormula(const ExecutorActivationShape& shape,
                                      RecomputeMode mode = RecomputeMode::kNone);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_EXECUTOR_ACTIVATIONS_H_
