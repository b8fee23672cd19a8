#include "planner/executor_activations.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "common/units.h"
#include "ir/plan_access.h"

namespace accel::planner {

namespace {

struct Coefficients {
  int64_t per_x, per_f, per_scores, per_token;
};

Coefficients CoefficientsOf(const ExecutorActivationShape& s) {
  if (s.bf16_params) return s.gpt2 ? Coefficients{16, 4, 2, 8} : Coefficients{32, 8, 2, 8};
  if (s.gpt2) return s.bf16_compute ? Coefficients{20, 6, 2, 16} : Coefficients{32, 8, 4, 16};
  return s.bf16_compute ? Coefficients{42, 8, 2, 8} : Coefficients{48, 16, 4, 8};
}

int64_t WeightCopyElements(const ExecutorActivationShape& s) {
  const int64_t h = s.hidden;
  if (s.gpt2) return 4 * h * h + 2 * h * s.ffn;
  const int64_t head_dim = s.heads > 0 ? h / s.heads : 0;
  // Key/value heads over all tp ranks, a replicated head once per rank holding it.
  const int64_t kv = s.kv_heads * ir::KvHeadReplicas(s.kv_heads, std::max<int64_t>(s.tp, 1));
  return 2 * h * h + 2 * h * kv * head_dim + 3 * h * s.ffn;
}

// How a block's x terms split under tensor parallelism (ExecutorActivationBytesPerLayer):
// replicated_x + divided_x = Coefficients.per_x, but with sequence parallelism for Llama, whose
// gathered norm outputs come on top; divided_tokens: the n terms are sequence shards.
struct TpCoefficients {
  int64_t replicated_x, divided_x;
  bool divided_tokens;
};

TpCoefficients TpCoefficientsOf(const ExecutorActivationShape& s, const Coefficients& c) {
  if (s.tp <= 1) return {c.per_x, 0, false};
  const bool sp = s.sequence_parallel;
  int64_t replicated = 0;
  if (s.gpt2) {
    replicated = s.bf16_params ? (sp ? 4 : 8) : s.bf16_compute ? (sp ? 4 : 12) : (sp ? 8 : 16);
    return {replicated, c.per_x - replicated, sp};
  }
  if (sp) {
    if (s.bf16_params) return {10, 28, true};
    return s.bf16_compute ? TpCoefficients{10, 32, true} : TpCoefficients{20, 40, true};
  }
  replicated = s.bf16_params ? 24 : s.bf16_compute ? 34 : 32;
  return {replicated, c.per_x - replicated, false};
}

// Autocast casts fp32 weights to bf16 once per step and keeps the copies.
bool CopiesWeights(const ExecutorActivationShape& s) { return s.bf16_compute && !s.bf16_params; }

// Bytes the attention core keeps besides q, k and v: the softmax output and the causal mask
// (math), or SDPA's output in the compute dtype and its fp32 log-sum-exp.
__int128 CoreBytes(const ExecutorActivationShape& s, const Coefficients& c) {
  using I = __int128;
  if (!s.fused_attention) {
    return I{c.per_scores} * s.micro_batch * s.heads * s.seq_len * s.seq_len +
           I{s.seq_len} * s.seq_len;
  }
  const I output_bytes = s.bf16_params || s.bf16_compute ? 2 : 4;
  return output_bytes * s.seq_len * s.micro_batch * s.hidden +
         I{4} * s.micro_batch * s.heads * s.seq_len;
}

// The causal mask's bytes inside CoreBytes (math attention only): every rank holds it whole.
__int128 MaskBytes(const ExecutorActivationShape& s) {
  return s.fused_attention ? 0 : __int128{s.seq_len} * s.seq_len;
}

std::string CoreFormula(const ExecutorActivationShape& s, const Coefficients& c) {
  if (!s.fused_attention) return absl::StrCat(c.per_scores, "S + s^2");
  return absl::StrCat(s.bf16_params || s.bf16_compute ? 2 : 4,
                      "x sdpa output + 4 B x b*a*s log-sum-exp");
}

// Selective recompute keeps the attention core's inputs as they are, where the core's matmuls
// would have kept bf16 copies: with bf16 compute over fp32 parameters GPT-2's q, k, v are fp32
// (c_attn's fp32 bias promotes its output: 12x instead of 6x) and Llama's rotated q and repeated
// k are fp32 (the fp32 rotary tables promote them: 8x + 2x instead of 6x). Elsewhere the kept
// inputs and the copies are the same size.
int64_t SelectiveInputCoefficient(const ExecutorActivationShape& s) {
  if (!CopiesWeights(s)) return 0;
  return s.gpt2 ? 6 : 4;
}


}  // namespace

// Sums in 128 bits and saturates: at the spec limits (spec/limits.h) b*a*s^2 exceeds 2^63, and a
// saturated estimate still reads as "does not fit" instead of overflowing.
static int64_t Saturate(__int128 bytes) {
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(bytes > kMax ? kMax : bytes);
}

int64_t ExecutorActivationBytesPerLayer(const ExecutorActivationShape& s) {
  using I = __int128;
  const Coefficients c = CoefficientsOf(s);
  const TpCoefficients split = TpCoefficientsOf(s, c);
  const I t = std::max<int64_t>(s.tp, 1);
  const I tokens = I{s.seq_len} * s.micro_batch;
  const I x = tokens * s.hidden;
  const I mask = MaskBytes(s);
  const I divided = I{split.divided_x} * x + I{c.per_f} * tokens * s.ffn +
                    (CoreBytes(s, c) - mask) + (CopiesWeights(s) ? I{2} * WeightCopyElements(s) : 0);
  const I tokens_bytes = I{c.per_token} * tokens;
  return Saturate(I{split.replicated_x} * x + divided / t + mask +
                  (split.divided_tokens ? tokens_bytes / t : tokens_bytes));
}

int64_t ExecutorKeptBytesPerLayer(const ExecutorActivationShape& s, RecomputeMode mode) {
  using I = __int128;
  const Coefficients c = CoefficientsOf(s);
  const I x = I{s.seq_len} * s.micro_batch * s.hidden;
  // Under tensor parallelism the core and its inputs are this rank's heads; the block input is
  // a sequence shard with sequence parallelism.
  const I t = std::max<int64_t>(s.tp, 1);
  const I mask = MaskBytes(s);
  switch (mode) {
    case RecomputeMode::kNone:
      return ExecutorActivationBytesPerLayer(s);
    case RecomputeMode::kSelective: {
      return Saturate(I{ExecutorActivationBytesPerLayer(s)} - (CoreBytes(s, c) - mask) / t - mask +
                      kRecomputeRngStateBytes + I{SelectiveInputCoefficient(s)} * x / t);
    }
    case RecomputeMode::kFull:
      return Saturate(I{s.bf16_params ? 2 : 4} * x / (s.sequence_parallel ? t : 1) +
                      kRecomputeRngStateBytes);
  }
  return 0;
}

int64_t ExecutorRecomputeWorkingBytes(const ExecutorActivationShape& s) {
  const int64_t x = s.seq_len * s.micro_batch * s.hidden;
  int64_t extra = 0;
  if (CopiesWeights(s)) extra = s.gpt2 ? 16 * x + kRecomputeRngStateBytes : 8 * x;
  else if (s.bf16_params && !s.gpt2) extra = 2 * x;
  return Saturate(__int128{ExecutorActivationBytesPerLayer(s)} + ExecutorBlockBackwardBytes(s) + extra);
}

int64_t ExecutorBlockBackwardBytes(const ExecutorActivationShape& s) {
  const int64_t n = s.seq_len * s.micro_batch;
  const int64_t f = n * s.ffn, x = n * s.hidden, w = s.hidden * s.ffn;
  if (s.gpt2) {
    if (s.bf16_params) return 3 * f + x;
    return s.bf16_compute ? 6 * f - 2 * w : 4 * f + 4 * w;
  }
  if (s.bf16_params || s.bf16_compute) return 4 * f;
  return 8 * f;
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
    if (s.bf16_params) return {6, 1, 6, 6, 0};
    if (s.bf16_compute) return sp ? ForwardCoefficients{22, 4, 6, 18, 4} : ForwardCoefficients{22, 4, 12, 12, 4};
    return {20, 0, 12, 12, 0};
  }
  if (s.bf16_params) return sp ? ForwardCoefficients{6, 0, 8, 4, 0} : ForwardCoefficients{6, 0, 6, 2, 0};
  if (s.bf16_compute) return sp ? ForwardCoefficients{22, 0, 10, 14, 0} : ForwardCoefficients{22, 0, 16, 8, 0};
  return sp ? ForwardCoefficients{8, 0, 16, 4, 0} : ForwardCoefficients{8, 0, 8, 4, 0};
}

}  // namespace

int64_t ExecutorBlockForwardBytes(const ExecutorActivationShape& s) {
  const int64_t n = s.seq_len * s.micro_batch;
  const int64_t f = n * s.ffn, x = n * s.hidden;
  const ForwardCoefficients k = ForwardCoefficientsOf(s);
  const int64_t t = std::max<int64_t>(s.tp, 1);
  if (t == 1) return k.w1 * x + k.c1 * f;
  return k.w * x + (k.d * x + k.c * f) / t;
}

namespace {

// The head's bytes kept per micro-batch and its fp32 n·V logits size.
struct HeadParts {
  __int128 kept = 0;    // final norm + log-probabilities + targets
  __int128 logits = 0;  // 4·n·V
};

HeadParts HeadPartsOf(const ExecutorActivationShape& s) {
  using I = __int128;
  const I tokens = I{s.seq_len} * s.micro_batch;
  const I x = tokens * s.hidden;
  I norm = 0;
  if (s.gpt2) norm = s.bf16_params ? 4 * x : (s.bf16_compute ? 6 : 8) * x + 8 * tokens;
  else norm = (s.bf16_params ? 12 : s.bf16_compute ? 14 : 16) * x;
  const I logits = 4 * tokens * s.vocab;
  return {norm + logits + 8 * tokens, logits};
}

}  // namespace

int64_t ExecutorHeadBytes(const ExecutorActivationShape& s) {
  const HeadParts head = HeadPartsOf(s);
  const __int128 weight_copy = CopiesWeights(s) ? __int128{2} * s.vocab * s.hidden : 0;
  return Saturate(head.kept + weight_copy + 2 * head.logits);
}

int64_t ExecutorHeadKeptBytes(const ExecutorActivationShape& s) { return Saturate(HeadPartsOf(s).kept); }

std::string ExecutorActivationFormula(const ExecutorActivationShape& s, RecomputeMode mode) {
  const Coefficients c = CoefficientsOf(s);
  const char* precision =
      s.bf16_params ? "bf16 params" : s.bf16_compute ? "bf16 compute" : "fp32 compute";
  const std::string copies = CopiesWeights(s) ? " + 2 B x bf16 weight copies" : "";
  const std::string none =
      s.fused_attention ? absl::StrCat(c.per_x, "x + ", c.per_f, "f + ", c.per_token, "n + ",
                                       CoreFormula(s, c), copies)
                        : absl::StrCat(c.per_x, "x + ", c.per_f, "f + ", c.per_scores, "S + ",
                                       c.per_token, "n + s^2", copies);
  std::string kept;
  switch (mode) {
    case RecomputeMode::kNone:
      kept = none;
      break;
    case RecomputeMode::kSelective:
      kept = absl::StrCat(none, " - (", CoreFormula(s, c), ")",
                          SelectiveInputCoefficient(s) > 0
                              ? absl::StrCat(" + ", SelectiveInputCoefficient(s), "x fp32 q/k/v")
                              : "",
                          " + ", kRecomputeRngStateBytes,
                          " B generator state (selective recompute: attention core)");
      break;
    case RecomputeMode::kFull:
      kept = absl::StrCat(s.bf16_params ? 2 : 4, "x + ", kRecomputeRngStateBytes,
                          " B generator state (full recompute: block input)");
      break;
  }
  const TpCoefficients split = TpCoefficientsOf(s, c);
  const std::string tp =
      s.tp <= 1 ? ""
                : absl::StrCat(", per rank of tensor parallel t=", s.tp,
                               s.sequence_parallel ? " with sequence parallel" : "", ": of the x terms ",
                               split.replicated_x, "x whole and ", split.divided_x,
                               "x / t, f, S and weight copies / t");
  return absl::StrCat(kept, " (accel executor, ", s.gpt2 ? "gpt2" : "llama", ", ", precision,
                      s.fused_attention ? ", sdpa attention" : "", tp,
                      "), x=s*b*h with s=", FormatCount(s.seq_len), " b=",
                      FormatCount(s.micro_batch), " h=", FormatCount(s.hidden), " a=",
                      FormatCount(s.heads), " ffn=", FormatCount(s.ffn));
}

}  // namespace accel::planner
