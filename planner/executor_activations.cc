#include "planner/executor_activations.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/units.h"
#include "ir/plan_access.h"
#include "planner/recompute_policy.h"

namespace accel::planner {

namespace {

using I = __int128;

// Sums in 128 bits and saturates: at the spec limits (spec/limits.h) b*a*s^2 exceeds 2^63, and a
// saturated estimate still reads as "does not fit" instead of overflowing.
int64_t Saturate(I bytes) {
  constexpr I kMax = std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(bytes > kMax ? kMax : bytes);
}

// Bytes per element of the residual stream and the norms' inputs (the parameters' dtype) and of
// the matmuls' operands and outputs (autocast's dtype, else the parameters').
int64_t StreamBytes(const ExecutorActivationShape& s) { return s.bf16_params ? 2 : 4; }
int64_t ComputeBytes(const ExecutorActivationShape& s) { return s.bf16_params || s.bf16_compute ? 2 : 4; }

// One rank's share of a block's dimensions under tensor parallelism t.
struct RankDims {
  I t = 1;
  I n = 0;           // tokens s·b
  I n_stream = 0;    // tokens of the residual stream: n / t with sequence parallelism
  I q_width = 0;     // this rank's query heads × head_dim = h / t
  I kv_width = 0;    // this rank's key/value heads × head_dim (replicated heads counted)
  I ffn = 0;         // ffn / t
  I heads = 0;       // a / t
};

I HeadWidth(const ExecutorActivationShape& s) {
  if (s.head_dim > 0) return s.head_dim;
  return s.heads > 0 ? I{s.hidden} / s.heads : 0;
}

RankDims RankDimsOf(const ExecutorActivationShape& s) {
  RankDims d;
  d.t = std::max<int64_t>(s.tp, 1);
  d.n = I{s.seq_len} * s.micro_batch;
  d.n_stream = s.sequence_parallel && d.t > 1 ? d.n / d.t : d.n;
  const I head_dim = HeadWidth(s);
  d.q_width = s.gpt2 ? I{s.hidden} / d.t : I{s.heads} * head_dim / d.t;
  d.kv_width = s.gpt2 ? d.q_width
                      : I{s.kv_heads} * ir::KvHeadReplicas(s.kv_heads, static_cast<int64_t>(d.t)) * head_dim / d.t;
  d.ffn = I{s.ffn} / d.t;
  d.heads = I{s.heads} / d.t;
  return d;
}

// The attention core under context parallelism (ExecutorActivationBytesPerLayer's formula).
I ContextCoreBytes(const ExecutorActivationShape& s, const RankDims& d) {
  const I c = ComputeBytes(s), b = s.micro_batch, cp = s.cp;
  if (s.ulysses) {
    const I all = I{s.seq_len} * cp, heads = d.heads / cp;
    if (s.fused_attention) return I{4} * b * heads * all;
    return c * b * heads * all * all + all * all;
  }
  const I r = I{s.seq_len} / 2, pairs = 2 * cp + 1, a = d.heads;
  const I head_dim = HeadWidth(s);
  const I per_pair = 2 * c * b * a * r * r + c * b * a * r * head_dim + 2 * c * b * a * r;
  const I merge = c * b * a * r * pairs + 2 * c * b * a * r + 2 * r * r;
  const I received = (cp - 1) * 2 * c * d.n * d.kv_width;
  return pairs * per_pair + merge + received;
}

// What the attention core keeps besides its inputs q, k, v: the softmax output (c·b·a·s²) and the
// causal mask (s² B), or with SDPA its fp32 log-sum-exp (4·b·a·s B; its output is the
// o_proj/c_proj input counted with the block).
I CoreBytes(const ExecutorActivationShape& s, const RankDims& d) {
  if (s.cp > 1) return ContextCoreBytes(s, d);
  if (s.fused_attention) return I{4} * s.micro_batch * d.heads * s.seq_len;
  // Gemma 2's soft cap keeps tanh's output, one more c·S.
  const I copies = s.attn_softcapping ? 2 : 1;
  return copies * ComputeBytes(s) * s.micro_batch * d.heads * s.seq_len * s.seq_len + I{s.seq_len} * s.seq_len;
}

// The RMSNorms of a llama-family block: each keeps its input (the residual stream's p B before a
// sublayer; a sublayer's output, c B, after it; fp32 with Gemma's x̂·(1 + w)) and a fp32 1/rms per
// token; a norm before a sublayer also makes the matmuls' input (c·x, gathered under sequence
// parallelism). Without a norm before a sublayer (OLMo 2) the matmuls' input is the stream itself
// or its copy in the compute dtype, c·x as well.
I LlamaNormBytes(const ExecutorActivationShape& s, const RankDims& d) {
  const I h = s.hidden, x_stream = d.n_stream * h;
  const I pre_input = s.norm_unit_offset ? 4 : StreamBytes(s);
  const I post_input = s.norm_unit_offset ? 4 : ComputeBytes(s);
  const I pre = s.pre_norms ? 2 * (pre_input * x_stream + 4 * d.n_stream) : 0;
  const I post = s.post_norms ? 2 * (post_input * x_stream + 4 * d.n_stream) : 0;
  return pre + post + 2 * I{ComputeBytes(s)} * d.n * h;
}

// Everything a block keeps but the attention core, term by term (ExecutorActivationBytesPerLayer).
I BlockBytesWithoutCore(const ExecutorActivationShape& s, const RankDims& d) {
  const I p = StreamBytes(s), c = ComputeBytes(s), h = s.hidden;
  // GPT-2's LayerNorms: inputs, fp32 mean and 1/std per row (ops/layer_norm.h) and outputs (the
  // column-parallel matmuls' input, gathered).
  const I norms = s.gpt2 ? 2 * p * d.n_stream * h + 2 * 8 * d.n_stream + 2 * c * d.n * h : LlamaNormBytes(s, d);
  const I qkv = c * d.n * (d.q_width + 2 * d.kv_width);
  const I attention_output = c * d.n * d.q_width;
  const I mlp = (s.gpt2 ? 2 : 3) * c * d.n * d.ffn;
  // Qwen3's per-head q/k norms keep their inputs and a 1/rms per head row; OLMo 2's full-width
  // ones a 1/rms per token each; Gemma 3's keep fp32 inputs (x̂·(1 + w) in fp32).
  const I head_dim = HeadWidth(s);
  const I qk_rows = s.qk_norm_full_width ? 2 * d.n : head_dim > 0 ? d.n * (d.q_width + d.kv_width) / head_dim : 0;
  const I qk_norms = s.qk_norm ? (s.norm_unit_offset ? 4 : c) * d.n * (d.q_width + d.kv_width) + 4 * qk_rows : 0;
  return norms + qkv + attention_output + mlp + qk_norms;
}

// Elements per token of the outputs per-op recompute keeps on this rank.
int64_t OpKeptWidth(const ExecutorActivationShape& s, const RankDims& d) {
  BlockOpWidths w;
  w.q = static_cast<int64_t>(d.q_width);
  w.kv = static_cast<int64_t>(d.kv_width);
  w.h = s.hidden;
  w.ffn = static_cast<int64_t>(d.ffn);
  return OpPolicyKeptWidth(s.gpt2, w);
}

std::string CoreFormula(const ExecutorActivationShape& s) {
  if (s.fused_attention) return "4 B x b*a*s sdpa log-sum-exp";
  return absl::StrCat((s.attn_softcapping ? 2 : 1) * ComputeBytes(s), "S + s^2");
}

}  // namespace

int64_t ExecutorPendingWeightGradBytesPerBlock(const ExecutorActivationShape& s) {
  const RankDims d = RankDimsOf(s);
  const I c = ComputeBytes(s), x = d.n * s.hidden, q = d.n * d.q_width, k = d.n * d.kv_width, f = d.n * d.ffn;
  const I inputs = x + q + x + f;
  const I output_grads = (q + 2 * k) + x + (s.gpt2 ? 1 : 2) * f + x;
  return Saturate(c * (inputs + output_grads));
}

int64_t ExecutorActivationBytesPerLayer(const ExecutorActivationShape& s) {
  const RankDims d = RankDimsOf(s);
  return Saturate(BlockBytesWithoutCore(s, d) + CoreBytes(s, d));
}

double ExecutorBytesPerSbh(const ExecutorActivationShape& s) {
  ExecutorActivationShape one = s;
  one.tp = 1;
  one.sequence_parallel = false;
  const RankDims d = RankDimsOf(one);
  const I x = d.n * s.hidden;
  return x > 0 ? static_cast<double>(BlockBytesWithoutCore(one, d)) / static_cast<double>(x) : 0.0;
}

int64_t ExecutorKeptBytesPerLayer(const ExecutorActivationShape& s, RecomputeMode mode) {
  const RankDims d = RankDimsOf(s);
  switch (mode) {
    case RecomputeMode::kNone:
      return ExecutorActivationBytesPerLayer(s);
    case RecomputeMode::kSelective:
      // The core's inputs (q, k, v as the block made them) are the same size as the copies its
      // matmuls keep, so only the core's own tensors go.
      return Saturate(BlockBytesWithoutCore(s, d) + kRecomputeRngStateBytes);
    case RecomputeMode::kOp:
      return Saturate(I{StreamBytes(s)} * d.n_stream * s.hidden + kRecomputeRngStateBytes +
                      I{ComputeBytes(s)} * d.n * OpKeptWidth(s, d));
    case RecomputeMode::kFull:
      return Saturate(I{StreamBytes(s)} * d.n_stream * s.hidden + kRecomputeRngStateBytes);
  }
  return 0;
}

int64_t ExecutorRecomputeWorkingBytes(const ExecutorActivationShape& s, RecomputeMode mode) {
  // GPT-2 with bf16 compute over fp32 parameters: the rebuilt block's backward holds 4x more.
  const bool bf16_over_fp32 = s.bf16_compute && !s.bf16_params;
  const I extra = s.gpt2 && bf16_over_fp32 && mode != RecomputeMode::kOp ? I{4} * s.seq_len * s.micro_batch * s.hidden : 0;
  const RankDims d = RankDimsOf(s);
  const I kept = mode == RecomputeMode::kOp ? I{ComputeBytes(s)} * d.n * OpKeptWidth(s, d) : 0;
  return Saturate(I{ExecutorActivationBytesPerLayer(s)} + ExecutorBlockBackwardBytes(s) + extra - kept);
}

int64_t ExecutorBlockBackwardBytes(const ExecutorActivationShape& s) {
  const int64_t n = s.seq_len * s.micro_batch;
  const int64_t f = n * s.ffn, x = n * s.hidden, w = s.hidden * s.ffn;
  if (s.gpt2) {
    if (s.bf16_params) return 3 * f + 6 * x;
    return s.bf16_compute ? 2 * f + 8 * w + 2 * x : 4 * f + 4 * w;
  }
  if (s.bf16_params) return 6 * f;
  return s.bf16_compute ? std::max(6 * f, 10 * w + 2 * x) : 12 * f;
}

namespace {

// ExecutorBlockForwardBytes's coefficients, bytes per element: at t = 1, w1·x + c1·f; at t >= 2,
// w·x + (d·x + c·f)/t.
struct ForwardCoefficients {
  int64_t w1, c1, w, d, c;
};

ForwardCoefficients ForwardCoefficientsOf(const ExecutorActivationShape& s) {
  const bool sp = s.sequence_parallel;
  if (s.gpt2) {
    if (s.bf16_params) return sp ? ForwardCoefficients{10, 0, 4, 6, 0} : ForwardCoefficients{10, 0, 6, 6, 0};
    if (s.bf16_compute) return sp ? ForwardCoefficients{16, 0, 6, 12, 0} : ForwardCoefficients{16, 0, 12, 6, 0};
    return sp ? ForwardCoefficients{20, 0, 8, 12, 0} : ForwardCoefficients{20, 0, 12, 12, 0};
  }
  if (s.bf16_params) return {3, 2, 4, 3, 0};
  if (s.bf16_compute) return sp ? ForwardCoefficients{11, 0, 2, 9, 0} : ForwardCoefficients{11, 0, 8, 4, 0};
  return {5, 4, 7, 8, 0};
}

}  // namespace

int64_t ExecutorFloatBlockBytes(const ExecutorActivationShape& s) {
  if (!s.gpt2 || !(s.bf16_compute || s.bf16_params)) return 0;
  const int64_t n = s.seq_len * s.micro_batch;
  const int64_t f_local = n * s.ffn / std::max<int64_t>(s.tp, 1);
  return 8 * std::min(kExecutorFloatBlockElements, std::max(f_local, n * s.hidden)) + 16 * s.hidden + 32 * n;
}

int64_t ExecutorBlockForwardBytes(const ExecutorActivationShape& s) {
  const int64_t n = s.seq_len * s.micro_batch;
  const int64_t f = n * s.ffn, x = n * s.hidden;
  const ForwardCoefficients k = ForwardCoefficientsOf(s);
  const int64_t t = std::max<int64_t>(s.tp, 1);
  const int64_t blocks = ExecutorFloatBlockBytes(s);
  if (t == 1) return k.w1 * x + k.c1 * f + blocks;
  return k.w * x + (k.d * x + k.c * f) / t + blocks;
}

namespace {

// This rank's vocabulary rows and the rows of one loss chunk (ChunkedCrossEntropy).
struct LossChunking {
  I v_local = 0;
  I chunk_rows = 0;
  I vocab_block = 0;  // vocabulary rows of one block of the 16-bit backward
};

LossChunking LossChunkingOf(const ExecutorActivationShape& s) {
  const I t = std::max<int64_t>(s.tp, 1);
  const I n = std::max<I>(I{s.seq_len} * s.micro_batch, 1);
  const I v_local = I{s.vocab} / t;
  I chunks = s.loss_chunks > 0 ? I{s.loss_chunks} : std::max<I>(1, (v_local + s.hidden - 1) / std::max<int64_t>(s.hidden, 1));
  chunks = std::min(chunks, n);
  return {v_local, (n + chunks - 1) / chunks, (v_local + chunks - 1) / chunks};
}

// The final norm's input and statistics, the head's input in the product's dtype (gathered with
// sequence parallelism), the targets (8 B) and the fp32 log-sum-exp (4 B) per token.
I HeadKept(const ExecutorActivationShape& s) {
  const RankDims d = RankDimsOf(s);
  const I h = s.hidden;
  const I norm = I{s.norm_unit_offset ? 4 : StreamBytes(s)} * d.n_stream * h + (s.gpt2 ? 8 : 4) * d.n_stream;
  return norm + I{ComputeBytes(s)} * d.n * h + 12 * d.n;
}

}  // namespace

int64_t ExecutorHeadBytes(const ExecutorActivationShape& s) {
  const RankDims d = RankDimsOf(s);
  const LossChunking k = LossChunkingOf(s);
  const I h = s.hidden, c = ComputeBytes(s), p = StreamBytes(s), n = d.n, v = k.v_local;
  // 13 B per token: the targets' local indices (8), where they lie (1) and its fp32 complement (4).
  const I targets = 13 * n;
  if (c == 4) {
    // fp32, a chunk of token rows at a time: the input's gradient, the weight's gradient
    // (each chunk's added in place) and one chunk's logits, turned into their gradient in place.
    // Gemma 2's final soft cap holds tanh of one chunk's logits besides them.
    const I capped = s.final_softcapping ? 2 : 1;
    return Saturate(HeadKept(s) + c * n * h + 4 * v * h + capped * 4 * k.chunk_rows * v + targets);
  }
  // 16 bits, a block of ⌈V / chunks⌉ vocabulary rows at a time over every token: the weight in
  // the product's dtype (a copy when it differs from the parameters'), its gradient in the
  // parameters' dtype, the input's gradient summed in fp32, one block's logits in fp32 and their
  // gradient in the product's dtype, then the block's input-gradient product and its fp32
  // conversion, or its weight-gradient product (made in place when the dtypes agree).
  const I weight_copy = c != p ? c * v * h : 0;
  const I block = k.vocab_block * n;
  const I weight_product = c != p ? c * k.vocab_block * h : 0;
  const I capped = s.final_softcapping ? 4 * block : 0;  // tanh of the block's logits (Gemma 2)
  const I backward = weight_copy + p * v * h + 4 * n * h + (4 + c) * block + capped +
                     std::max((c + 4) * n * h, weight_product) + targets;
  return Saturate(HeadKept(s) + backward);
}

int64_t ExecutorHeadKeptBytes(const ExecutorActivationShape& s) { return Saturate(HeadKept(s)); }

std::string ExecutorActivationFormula(const ExecutorActivationShape& s, RecomputeMode mode) {
  const int64_t p = StreamBytes(s), c = ComputeBytes(s);
  const char* precision = s.bf16_params ? "bf16 params" : s.bf16_compute ? "bf16 compute" : "fp32 compute";
  // norm inputs 2p (OLMo 2: 2c after the sublayers; Gemma both, 4 B each), norm outputs 2c, q c
  // (and k, v c each for GPT-2), attention output c.
  const int64_t pre_in = s.norm_unit_offset ? 4 : p, post_in = s.norm_unit_offset ? 4 : c;
  const int64_t norm_x = (s.pre_norms ? 2 * pre_in : 0) + (s.post_norms ? 2 * post_in : 0);
  const int64_t norm_n = (s.pre_norms ? 8 : 0) + (s.post_norms ? 8 : 0);
  const std::string block =
      s.gpt2 ? absl::StrCat(2 * p + 6 * c, "x + ", 2 * c, "f + 16n")
             : absl::StrCat(norm_x + 4 * c, "x + ", 2 * c, "k + ", 3 * c, "f + ", norm_n, "n",
                            s.qk_norm ? " + q/k norms" : "");
  std::string kept;
  switch (mode) {
    case RecomputeMode::kNone:
      kept = absl::StrCat(block, " + ", CoreFormula(s));
      break;
    case RecomputeMode::kSelective:
      kept = absl::StrCat(block, " + ", kRecomputeRngStateBytes,
                          " B generator state (selective recompute: the attention core's ",
                          CoreFormula(s), " recomputed)");
      break;
    case RecomputeMode::kOp:
      kept = absl::StrCat(p, "x + ", kRecomputeRngStateBytes, " B generator state + ", c,
                          s.gpt2 ? "(4x + f)" : "(3x + k + f)",
                          " (per-op recompute: block input and the outputs of ",
                          absl::StrJoin(OpPolicyKeptOutputs(s.gpt2), ", "), ")");
      break;
    case RecomputeMode::kFull:
      kept = absl::StrCat(p, "x + ", kRecomputeRngStateBytes, " B generator state (full recompute: block input)");
      break;
  }
  const std::string tp =
      s.tp <= 1 ? ""
                : absl::StrCat(", per rank of tensor parallel t=", s.tp,
                               s.sequence_parallel ? " with sequence parallel: norm inputs and n / t, "
                                                   : ": ",
                               "q, k, v, attention output, f and S / t");
  return absl::StrCat(kept, " (accel executor, ", s.gpt2 ? "gpt2" : "llama", ", ", precision,
                      s.fused_attention ? ", sdpa attention" : "", tp, "; ",
                      absl::StrFormat("%.1f", ExecutorBytesPerSbh(s)), " B per s*b*h at t=1 without the core), x=s*b*h",
                      s.gpt2 ? "" : ", k=s*b*kv_heads*head_dim", ", f=s*b*ffn with s=", FormatCount(s.seq_len),
                      " b=", FormatCount(s.micro_batch), " h=", FormatCount(s.hidden), " a=", FormatCount(s.heads),
                      s.gpt2 ? "" : absl::StrCat(" kv_heads=", FormatCount(s.kv_heads)), " ffn=", FormatCount(s.ffn));
}

}  // namespace accel::planner
