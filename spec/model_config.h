#ifndef ACCEL_SPEC_MODEL_CONFIG_H_
#define ACCEL_SPEC_MODEL_CONFIG_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/diagnostics.h"
#include "common/source_location.h"
#include "spec/job_spec.h"

// Reads model dimensions from a Hugging Face `config.json`.
// gpt2 (GPT2Config): n_embd, n_layer, n_head, n_positions (or n_ctx), vocab_size,
//   layer_norm_epsilon, n_inner (null means 4·n_embd).
// llama, mistral, qwen2 (LlamaConfig and relatives; all map to arch llama): hidden_size,
//   num_hidden_layers, num_attention_heads, num_key_value_heads (default num_attention_heads),
//   intermediate_size, vocab_size, max_position_embeddings, tie_word_embeddings (default false),
//   rms_norm_eps, rope_theta, attention_bias; qwen2 always has q/k/v bias; qwen3 adds head_dim
//   and per-head q/k RMSNorm (transformers' Qwen3Config / Qwen3Attention); phi3 (Phi3Config) is a
//   llama with fused qkv_proj and gate_up_proj (ir::Model.model_type tells the executor), and its
//   sliding_window, when smaller, bounds max_seq_len: up to that length sliding-window attention
//   is causal attention, which accel runs.
// olmo2, gemma2, gemma3_text (arch llama with ModelSpec.variant): the llama keys plus OLMo 2's
//   post-norms and full-width q/k norms, Gemma's four norms, GeGLU, embedding scaling,
//   query_pre_attn_scalar, attn_logit_softcapping, final_logit_softcapping, sliding_window
//   (every other block in Gemma 2, sliding_window_pattern in Gemma 3) and Gemma 3's per-head q/k
//   norms and rope_local_base_freq, with the transformers config classes' defaults.
// mixtral, qwen2_moe, qwen3_moe (mixture of experts, arch llama with model.moe): the llama keys
//   plus num_local_experts (mixtral) or num_experts, num_experts_per_tok, moe_intermediate_size
//   (mixtral: intermediate_size), norm_topk_prob (mixtral: always true), router_aux_loss_coef,
//   decoder_sparse_step and mlp_only_layers (qwen), shared_expert_intermediate_size (qwen2_moe:
//   one shared expert behind a sigmoid gate, q/k/v bias), head_dim and per-head q/k RMSNorm
//   (qwen3_moe), first_k_dense_replace wherever present.
namespace accel::spec {

// The model types accel understands, in the order error messages list them.
inline constexpr const char* kSupportedModelTypes[] = {"gpt2",      "llama",     "mistral", "qwen2",
                                                       "qwen3",     "phi3",      "olmo2",   "gemma2",
                                                       "gemma3_text", "mixtral", "qwen2_moe", "qwen3_moe"};

// One problem with a config.json: a stable code (E0201 unreadable, E0202 malformed or missing a
// field, E0203 unsupported model_type), a message naming the JSON key, and where in the JSON
// text it is (unknown when the problem has no single position, e.g. a missing key). The message
// is a predicate without a subject ("has no 'n_embd' (the hidden size)"), so callers can say
// which file: "model config 'models/x/config.json' has no 'n_embd' (the hidden size)".
struct ModelConfigIssue {
  std::string code;
  std::string message;
  SourceLocation location;
};

// What a config.json provides. `model` holds the values read; fields the file does not give
// keep ModelSpec's defaults (no arch-dependent defaults are applied here). `fields` lists the
// spec paths the file set ("model.arch", "model.hidden_size", ...), so a job file's own values
// can take precedence over them.
struct ModelConfigFile {
  ModelSpec model;
  std::vector<std::string> fields;
  // The JSON key that set each field it read from a key ("model.max_seq_len" ->
  // "max_position_embeddings", or "n_positions" for gpt2), so messages name the file's own key.
  std::map<std::string, std::string> keys;
};

// The outcome of reading a config.json: `config` on success, else every issue found.
struct ModelConfigResult {
  std::optional<ModelConfigFile> config;
  std::vector<ModelConfigIssue> issues;
  std::string text;  // the file's contents (empty when it could not be read), for diagnostics
};

// Parses config.json text (at most 1 MiB). Issues: E0202 for JSON syntax errors (located at
// the offending byte), a top level that is not an object, missing or mistyped keys (all of
// them are reported), E0203 for model types other than kSupportedModelTypes.
ModelConfigResult ParseModelConfig(std::string_view json_text);

// Reads and parses the file at `path`; E0201 when it cannot be read.
ModelConfigResult ReadModelConfig(const std::string& path);

// Fills the arch-dependent defaults of fields not listed as set: num_kv_heads = num_heads,
// ffn_hidden_size = 4·hidden_size (gpt2 only; llama has no conventional default),
// tie_word_embeddings = true for gpt2 and false for llama. `is_set(path)` says whether a
// dotted spec path ("model.num_kv_heads") was given explicitly.
template <typename IsSet>
void ApplyArchDefaults(ModelSpec& model, const IsSet& is_set) {
  if (!is_set("model.num_kv_heads")) model.num_kv_heads = model.num_heads;
  if (!is_set("model.ffn_hidden_size") && model.arch == Arch::kGpt2) {
    model.ffn_hidden_size = 4 * model.hidden_size;
  }
  if (!is_set("model.tie_word_embeddings")) model.tie_word_embeddings = model.arch == Arch::kGpt2;
}

// Loads a config.json on its own (for `accel estimate-memory --model config.json`), with arch
// defaults applied. Problems are added to `sink` located in the config file itself (its text is
// registered in `sources`); returns nullopt when there were any.
std::optional<ModelSpec> LoadModelConfig(const std::string& path, DiagnosticSink& sink,
                                         SourceManager& sources);

// The same, for callers without a sink: InvalidArgument (or NotFound for an unreadable file)
// whose message is the first problem as "path:line:col: message".
absl::StatusOr<ModelSpec> LoadModelConfig(const std::string& path);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_MODEL_CONFIG_H_
