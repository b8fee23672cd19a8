#include "executor/models/model_config.h"

#include "absl/strings/str_cat.h"

namespace accel::exec {

std::string ModelArchName(ModelArch arch) { return arch == ModelArch::kGpt2 ? "gpt2" : "llama"; }

absl::Status ValidateModelConfig(const ModelConfig& c) {
  auto positive = [](const char* name, int64_t v) -> absl::Status {
    if (v <= 0) return absl::InvalidArgumentError(absl::StrCat("model.", name, " must be > 0, got ", v));
    return absl::OkStatus();
  };
  for (auto [name, value] : {std::pair<const char*, int64_t>{"hidden_size", c.hidden_size},
                             {"num_layers", c.num_layers},
                             {"num_heads", c.num_heads},
                             {"num_kv_heads", c.num_kv_heads},
                             {"ffn_size", c.ffn_size},
                             {"vocab_size", c.vocab_size},
                             {"max_seq_len", c.max_seq_len}}) {
    if (absl::Status s = positive(name, value); !s.ok()) return s;
  }
  if (c.hidden_size % c.num_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat("model.num_heads ", c.num_heads,
                                                   " does not divide hidden_size ", c.hidden_size));
  }
  if (c.num_heads % c.num_kv_heads != 0) {
    return absl::InvalidArgumentError(absl::StrCat("model.num_kv_heads ", c.num_kv_heads,
                                                   " does not divide num_heads ", c.num_heads));
  }
  if (c.arch == ModelArch::kGpt2) {
    if (c.num_kv_heads != c.num_heads) {
      return absl::InvalidArgumentError("gpt2 has no grouped-query attention: num_kv_heads must equal num_heads");
    }
    if (!c.tie_embeddings) return absl::InvalidArgumentError("gpt2 always ties the head to the token embedding");
  }
  if (c.arch == ModelArch::kLlama && (c.hidden_size / c.num_heads) % 2 != 0) {
    return absl::InvalidArgumentError("llama rotary embedding needs an even head dimension");
  }
  if (!(c.norm_eps > 0)) return absl::InvalidArgumentError("model.norm_eps must be > 0");
  if (c.arch == ModelArch::kLlama && !(c.rope_theta > 0)) {
    return absl::InvalidArgumentError("model.rope_theta must be > 0");
  }
  return absl::OkStatus();
}

int64_t BlockParameterCount(const ModelConfig& c) {
  const int64_t h = c.hidden_size;
  const int64_t f = c.ffn_size;
  if (c.arch == ModelArch::kGpt2) {
    return (3 * h * h + 3 * h) + (h * h + h) + 4 * h + (h * f + f) + (f * h + h);
  }
  const int64_t kv_dim = c.num_kv_heads * (h / c.num_heads);
  return 2 * h * h + 2 * h * kv_dim + 3 * h * f + 2 * h;
}

int64_t ModelParameterCount(const ModelConfig& c) {
  const int64_t h = c.hidden_size;
  const int64_t blocks = c.num_layers * BlockParameterCount(c);
  if (c.arch == ModelArch::kGpt2) return c.vocab_size * h + c.max_seq_len * h + blocks + 2 * h;
  const int64_t head = c.tie_embeddings ? 0 : c.vocab_size * h;
  return c.vocab_size * h + head + blocks + h;
}

}  // namespace accel::exec
