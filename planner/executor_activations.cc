#include "planner/executor_activations.h"

#include "absl/strings/str_cat.h"
#include "common/units.h"

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
  return 2 * h * h + 2 * h * s.kv_heads * head_dim + 3 * h * s.ffn;
}

// Autocast casts fp32 weights to bf16 once per step and keeps the copies.
bool CopiesWeights(const ExecutorActivationShape& s) { return s.bf16_compute && !s.bf16_params; }

int64_t NormBytes(const ExecutorActivationShape& s, int64_t x, int64_t tokens) {
  if (s.gpt2) {
    if (s.bf16_params) return 4 * x;
    return (s.bf16_compute ? 6 : 8) * x + 8 * tokens;
  }
  if (s.bf16_params) return 12 * x;
  return (s.bf16_compute ? 14 : 16) * x;
}

}  // namespace

int64_t ExecutorActivationBytesPerLayer(const ExecutorActivationShape& s) {
  const Coefficients c = CoefficientsOf(s);
  const int64_t tokens = s.seq_len * s.micro_batch;
  const int64_t bytes = c.per_x * tokens * s.hidden + c.per_f * tokens * s.ffn +
                        c.per_scores * s.micro_batch * s.heads * s.seq_len * s.seq_len +
                        c.per_token * tokens + s.seq_len * s.seq_len;
  return bytes + (CopiesWeights(s) ? 2 * WeightCopyElements(s) : 0);
}

int64_t ExecutorHeadBytes(const ExecutorActivationShape& s) {
  const int64_t tokens = s.seq_len * s.micro_batch;
  const int64_t x = tokens * s.hidden;
  const int64_t norm = NormBytes(s, x, tokens);
  const int64_t logits = 4 * tokens * s.vocab;
  const int64_t weight_copy = CopiesWeights(s) ? 2 * s.vocab * s.hidden : 0;
  return norm + logits + 8 * tokens + weight_copy + 2 * logits;
}

std::string ExecutorActivationFormula(const ExecutorActivationShape& s) {
  const Coefficients c = CoefficientsOf(s);
  const char* precision =
      s.bf16_params ? "bf16 params" : s.bf16_compute ? "bf16 compute" : "fp32 compute";
  return absl::StrCat(c.per_x, "x + ", c.per_f, "f + ", c.per_scores, "S + ", c.per_token,
                      "n + s^2", CopiesWeights(s) ? " + 2 B x bf16 weight copies" : "",
                      " (accel executor, ", s.gpt2 ? "gpt2" : "llama", ", ", precision,
                      "), x=s*b*h with s=", FormatCount(s.seq_len), " b=",
                      FormatCount(s.micro_batch), " h=", FormatCount(s.hidden), " a=",
                      FormatCount(s.heads), " ffn=", FormatCount(s.ffn));
}

}  // namespace accel::planner
