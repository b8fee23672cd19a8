#include "spec/model_config.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "common/diag_codes.h"
#include "common/json_document.h"
#include "common/utf8.h"
#include "spec/field_registry.h"
#include "spec/file_reader.h"
#include "spec/json_object.h"
#include "spec/text_checks.h"

namespace accel::spec {
namespace {

using Json = nlohmann::json;

// Strings and numbers quoted in messages are cut to this many bytes.
constexpr size_t kMaxShownConfigBytes = 60;

// Collects values from the JSON object and remembers every problem, so a config.json with
// three missing keys gets three errors.
class ConfigReader {
 public:
  ConfigReader(const Json& object, ModelConfigResult& result, ModelConfigFile& out)
      : object_(object), result_(result), out_(out) {}

  // A positive integer under `key` (or, when absent, under `fallback_key`), stored into
  // `target` and recorded as set for `spec_path`. Missing is an error when `required`.
  void Integer(const char* key, const char* spec_path, int64_t& target, bool required,
               const char* what, const char* fallback_key = nullptr) {
    const Json* value = Find(key);
    const char* used = key;
    if (value == nullptr && fallback_key != nullptr) {
      value = Find(fallback_key);
      used = fallback_key;
    }
    if (value == nullptr) {
      if (required) Issue(codes::kModelConfigInvalid, std::string("has no '") + key + "' (" + what + ")");
      return;
    }
    if (!value->is_number_integer() || value->get<int64_t>() < 1) {
      Issue(codes::kModelConfigInvalid, std::string("has '") + used + "' = " + ShownJsonValue(*value, kMaxShownConfigBytes) +
                                            "; it must be a positive integer");
      return;
    }
    if (AboveLimit(*value, used, spec_path)) return;
    target = value->get<int64_t>();
    Record(spec_path, used);
  }

  // Reports a value above the limit of the spec field it sets (spec/limits.h): a config.json
  // must not make the planner enumerate a billion layers either.
  bool AboveLimit(const Json& value, const char* key, const char* spec_path) {
    const FieldInfo* field = FindField(spec_path);
    if (field == nullptr || !field->maximum ||
        static_cast<double>(value.get<int64_t>()) <= *field->maximum) {
      return false;
    }
    Issue(codes::kModelConfigInvalid,
          std::string("has '") + key + "' = " + ShownJsonValue(value, kMaxShownConfigBytes) + "; accel accepts at most " +
              std::to_string(static_cast<int64_t>(*field->maximum)) + " (the limit of " +
              spec_path + ")");
    return true;
  }

  // An optional positive number.
  void Number(const char* key, const char* spec_path, double& target) {
    const Json* value = Find(key);
    if (value == nullptr) return;
    if (!value->is_number() || !(value->get<double>() > 0) || !std::isfinite(value->get<double>())) {
      Issue(codes::kModelConfigInvalid, std::string("has '") + key + "' = " + ShownJsonValue(*value, kMaxShownConfigBytes) +
                                            "; it must be a positive number");
      return;
    }
    target = value->get<double>();
    Record(spec_path, key);
  }

  // An optional number >= 0 (a loss weight may be 0).
  void NonNegativeNumber(const char* key, const char* spec_path, double& target) {
    const Json* value = Find(key);
    if (value == nullptr) return;
    if (!value->is_number() || !(value->get<double>() >= 0) || !std::isfinite(value->get<double>())) {
      Issue(codes::kModelConfigInvalid, std::string("has '") + key + "' = " + ShownJsonValue(*value, kMaxShownConfigBytes) +
                                            "; it must be a number >= 0");
      return;
    }
    target = value->get<double>();
    Record(spec_path, key);
  }

  // An optional integer >= 0 (DeepSeek's first_k_dense_replace may be 0).
  void Count(const char* key, const char* spec_path, int64_t& target) {
    const Json* value = Find(key);
    if (value == nullptr) return;
    if (!value->is_number_integer() || value->get<int64_t>() < 0) {
      Issue(codes::kModelConfigInvalid, std::string("has '") + key + "' = " + ShownJsonValue(*value, kMaxShownConfigBytes) +
                                            "; it must be an integer >= 0");
      return;
    }
    if (AboveLimit(*value, key, spec_path)) return;
    target = value->get<int64_t>();
    Record(spec_path, key);
  }

  // An optional list of layer indices (Qwen's mlp_only_layers), each in [0, num_layers).
  void LayerList(const char* key, const char* spec_path, int64_t num_layers,
                 std::vector<int64_t>& target) {
    const Json* value = Find(key);
    if (value == nullptr) return;
    bool ok = value->is_array();
    if (ok) {
      for (const Json& item : *value) {
        ok = ok && item.is_number_integer() && item.get<int64_t>() >= 0 &&
             (num_layers <= 0 || item.get<int64_t>() < num_layers);
      }
    }
    if (!ok) {
      Issue(codes::kModelConfigInvalid, std::string("has '") + key + "' = " + ShownJsonValue(*value, kMaxShownConfigBytes) +
                                            "; it must be a list of layer indices below num_hidden_layers");
      return;
    }
    for (const Json& item : *value) target.push_back(item.get<int64_t>());
    Record(spec_path, key);
  }

  // An optional boolean.
  void Boolean(const char* key, const char* spec_path, bool& target) {
    const Json* value = Find(key);
    if (value == nullptr) return;
    if (!value->is_boolean()) {
      Issue(codes::kModelConfigInvalid, std::string("has '") + key + "' = " + ShownJsonValue(*value, kMaxShownConfigBytes) +
                                            "; it must be true or false");
      return;
    }
    target = value->get<bool>();
    Record(spec_path, key);
  }

  // An optional soft-capping value (Gemma's attn_logit_softcapping, final_logit_softcapping): a
  // number >= 0; `absent` when the key is missing (the config class's default), 0 (no cap) when
  // it is null.
  void Cap(const char* key, double absent, double& target) {
    if (!object_.contains(key)) {
      target = absent;
      return;
    }
    double value = 0.0;
    NonNegativeNumber(key, "model.variant", value);
    target = value;
  }

  // Notes that the file's `key` set the spec field `spec_path`.
  void Record(const char* spec_path, const char* key) {
    out_.fields.push_back(spec_path);
    out_.keys[spec_path] = key;
  }

  const Json* Find(const char* key) const {
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  void Issue(const char* code, std::string message) {
    result_.issues.push_back({code, std::move(message), {}});
  }

 private:
  const Json& object_;
  ModelConfigResult& result_;
  ModelConfigFile& out_;
};

bool IsLlamaFamily(const std::string& model_type) {
  for (const char* name : {"llama", "mistral", "qwen2", "qwen3", "phi3", "olmo2", "gemma2", "gemma3_text", "mixtral",
                           "qwen2_moe", "qwen3_moe"}) {
    if (model_type == name) return true;
  }
  return false;
}

// The mixture-of-experts keys of Mixtral (MixtralConfig), Qwen2-MoE (Qwen2MoeConfig) and
// Qwen3-MoE (Qwen3MoeConfig), as their modeling code reads them (transformers
// models/{mixtral,qwen2_moe,qwen3_moe}/modeling_*.py): Mixtral's experts are `intermediate_size`
// wide and always renormalize their top-k; Qwen2-MoE adds one shared expert of
// `shared_expert_intermediate_size` behind a sigmoid gate; the Qwen models make block l dense
// when l is in `mlp_only_layers` or (l + 1) is not a multiple of `decoder_sparse_step`.
// DeepSeek's `first_k_dense_replace` is read wherever present.
void ReadMoe(ConfigReader& reader, const std::string& model_type, ModelSpec& model,
             std::vector<std::string>& fields) {
  MoeSpec& moe = model.moe;
  const bool mixtral = model_type == "mixtral";
  reader.Integer(mixtral ? "num_local_experts" : "num_experts", "model.moe.num_experts",
                 moe.num_experts, true, "the number of routed experts");
  reader.Integer("num_experts_per_tok", "model.moe.experts_per_token", moe.experts_per_token,
                 true, "the routed experts per token");
  if (mixtral) {
    moe.expert_ffn_size = model.ffn_hidden_size;
    if (moe.expert_ffn_size > 0) fields.push_back("model.moe.expert_ffn_size");
    moe.norm_topk_prob = true;
    fields.push_back("model.moe.norm_topk_prob");
  } else {
    reader.Integer("moe_intermediate_size", "model.moe.expert_ffn_size", moe.expert_ffn_size,
                   true, "the routed experts' MLP hidden size");
    reader.Boolean("norm_topk_prob", "model.moe.norm_topk_prob", moe.norm_topk_prob);
    reader.Integer("decoder_sparse_step", "model.moe.sparse_step", moe.sparse_step, false, "");
    reader.LayerList("mlp_only_layers", "model.moe.dense_layers", model.num_layers,
                     moe.dense_layers);
  }
  if (model_type == "qwen2_moe") {
    reader.Integer("shared_expert_intermediate_size", "model.moe.shared_expert_ffn_size",
                   moe.shared_expert_ffn_size, true, "the shared expert's MLP hidden size");
    moe.num_shared_experts = 1;
    moe.shared_expert_gate = true;
    fields.push_back("model.moe.num_shared_experts");
    fields.push_back("model.moe.shared_expert_gate");
  }
  reader.NonNegativeNumber("router_aux_loss_coef", "model.moe.router_aux_loss_coef",
                           moe.router_aux_loss_coef);
  reader.Count("first_k_dense_replace", "model.moe.first_dense_layers", moe.first_dense_layers);
}

// OLMo 2 (transformers' Olmo2Config, modeling_olmo2.py): norms on the attention's and the MLP's
// outputs only, and q/k RMSNorms over the whole projection (self_attn.q_norm [heads·d],
// k_norm [kv_heads·d]) before the head split.
void ReadOlmo2(ModelSpec& model, std::vector<std::string>& fields) {
  model.variant.norm_placement = NormPlacement::kPost;
  model.variant.qk_norm_full_width = true;
  model.qk_norm = true;
  fields.push_back("model.qk_norm");
}

// Gemma 2 and Gemma 3 text (transformers' Gemma2Config / Gemma3TextConfig and their modeling
// code), with those classes' defaults for absent keys: four norms a block computing x̂·(1 + w),
// embeddings × √h, GeGLU (hidden_activation gelu_pytorch_tanh, the only one accepted), scores ×
// query_pre_attn_scalar^(-1/2), head_dim 256, tied embeddings; sliding-window blocks every
// sliding_window_pattern-th block but one (Gemma 2: 2; Gemma 3: sliding_window_pattern, default
// 6); Gemma 2 soft-caps the scores (50) and the final logits (30); Gemma 3 has per-head q/k norms
// and rope_local_base_freq (default 10000) for its sliding-window blocks.
void ReadGemma(ConfigReader& reader, const std::string& model_type, ModelSpec& model,
               std::vector<std::string>& fields) {
  DecoderVariantSpec& v = model.variant;
  const bool gemma3 = model_type == "gemma3_text";
  v.norm_placement = NormPlacement::kPreAndPost;
  v.norm_unit_offset = true;
  v.scale_embeddings = true;
  v.mlp_activation = MlpActivation::kGeluTanh;
  const Json* act = reader.Find("hidden_activation");
  if (act != nullptr && (!act->is_string() || act->get<std::string>() != "gelu_pytorch_tanh")) {
    reader.Issue(codes::kModelConfigInvalid, "has 'hidden_activation' = " + ShownJsonValue(*act, kMaxShownConfigBytes) +
                                                 "; accel runs gelu_pytorch_tanh only");
  }
  if (reader.Find("head_dim") == nullptr) {
    model.head_dim = 256;
    fields.push_back("model.head_dim");
  } else {
    reader.Integer("head_dim", "model.head_dim", model.head_dim, false, "");
  }
  if (reader.Find("tie_word_embeddings") == nullptr) {
    model.tie_word_embeddings = true;
    fields.push_back("model.tie_word_embeddings");
  }
  v.query_pre_attn_scalar = 256;
  reader.Number("query_pre_attn_scalar", "model.variant", v.query_pre_attn_scalar);
  reader.Cap("attn_logit_softcapping", gemma3 ? 0.0 : 50.0, v.attn_logit_softcapping);
  reader.Cap("final_logit_softcapping", gemma3 ? 0.0 : 30.0, v.final_logit_softcapping);
  v.sliding_window = 4096;
  reader.Integer("sliding_window", "model.variant", v.sliding_window, false, "");
  v.sliding_window_pattern = gemma3 ? 6 : 2;
  if (gemma3) {
    reader.Integer("sliding_window_pattern", "model.variant", v.sliding_window_pattern, false, "");
    model.qk_norm = true;
    fields.push_back("model.qk_norm");
    v.rope_local_theta = 10000.0;
    reader.Number("rope_local_base_freq", "model.variant", v.rope_local_theta);
    if (reader.Find("rope_theta") == nullptr) {
      model.rope_theta = 1000000.0;
      fields.push_back("model.rope_theta");
    }
    const Json* scaling = reader.Find("rope_scaling");
    if (scaling != nullptr) {
      reader.Issue(codes::kModelConfigInvalid, "has 'rope_scaling' = " + ShownJsonValue(*scaling, kMaxShownConfigBytes) +
                                                   "; accel runs gemma3_text without RoPE scaling (null)");
    }
  }
}

}  // namespace

ModelConfigResult ParseModelConfig(std::string_view json_text) {
  ModelConfigResult result;
  result.text = std::string(json_text);
  JsonObjectProblem problem;
  std::optional<Json> parsed = ParseJsonObject(json_text, "model config", problem);
  if (!parsed) {
    result.issues.push_back({codes::kModelConfigInvalid, problem.message, problem.location});
    return result;
  }
  const Json& json = *parsed;
  ModelConfigFile file;
  ConfigReader reader(json, result, file);
  const Json* type = reader.Find("model_type");
  if (type == nullptr || !type->is_string()) {
    reader.Issue(codes::kModelConfigInvalid,
                 "has no 'model_type' string, so its architecture is unknown");
    return result;
  }
  std::string model_type = type->get<std::string>();
  ModelSpec& model = file.model;
  model.model_type = model_type;
  if (model_type == "gpt2") {
    model.arch = Arch::kGpt2;
    file.fields.push_back("model.arch");
    reader.Integer("n_embd", "model.hidden_size", model.hidden_size, true, "the hidden size");
    reader.Integer("n_layer", "model.num_layers", model.num_layers, true, "the number of layers");
    reader.Integer("n_head", "model.num_heads", model.num_heads, true,
                   "the number of attention heads");
    reader.Integer("n_positions", "model.max_seq_len", model.max_seq_len, true,
                   "the maximum sequence length", "n_ctx");
    reader.Integer("vocab_size", "model.vocab_size", model.vocab_size, true,
                   "the vocabulary size");
    reader.Integer("n_inner", "model.ffn_hidden_size", model.ffn_hidden_size, false, "");
    reader.Number("layer_norm_epsilon", "model.norm_eps", model.norm_eps);
    reader.Boolean("tie_word_embeddings", "model.tie_word_embeddings", model.tie_word_embeddings);
  } else if (IsLlamaFamily(model_type)) {
    model.arch = Arch::kLlama;
    file.fields.push_back("model.arch");
    // Hugging Face's LlamaConfig default (Olmo2Config's 1e-5); most files state it anyway.
    model.norm_eps = model_type == "olmo2" ? 1e-5 : 1e-6;
    reader.Integer("hidden_size", "model.hidden_size", model.hidden_size, true, "the hidden size");
    reader.Integer("num_hidden_layers", "model.num_layers", model.num_layers, true,
                   "the number of layers");
    reader.Integer("num_attention_heads", "model.num_heads", model.num_heads, true,
                   "the number of attention heads");
    reader.Integer("num_key_value_heads", "model.num_kv_heads", model.num_kv_heads, false, "");
    reader.Integer("intermediate_size", "model.ffn_hidden_size", model.ffn_hidden_size, true,
                   "the MLP hidden size");
    reader.Integer("vocab_size", "model.vocab_size", model.vocab_size, true,
                   "the vocabulary size");
    reader.Integer("max_position_embeddings", "model.max_seq_len", model.max_seq_len, true,
                   "the maximum sequence length");
    reader.Boolean("tie_word_embeddings", "model.tie_word_embeddings", model.tie_word_embeddings);
    reader.Number("rms_norm_eps", "model.norm_eps", model.norm_eps);
    reader.Number("rope_theta", "model.rope_theta", model.rope_theta);
    if (model_type == "qwen2" || model_type == "qwen2_moe") {
      model.qkv_bias = true;
      file.fields.push_back("model.qkv_bias");
    } else {
      reader.Boolean("attention_bias", "model.qkv_bias", model.qkv_bias);
    }
    if (model_type == "qwen3" || model_type == "qwen3_moe") {
      reader.Integer("head_dim", "model.head_dim", model.head_dim, false, "");
      model.qk_norm = true;
      file.fields.push_back("model.qk_norm");
    }
    if (model_type == "phi3") {
      int64_t window = 0;
      reader.Integer("sliding_window", "model.max_seq_len", window, false, "");
      if (window > 0 && window < model.max_seq_len) model.max_seq_len = window;
    }
    if (model_type == "olmo2") {
      ReadOlmo2(model, file.fields);
    } else if (model_type == "gemma2" || model_type == "gemma3_text") {
      ReadGemma(reader, model_type, model, file.fields);
    } else if (model_type != "llama" && model_type != "mistral" && model_type != "qwen2" && model_type != "qwen3" &&
               model_type != "phi3") {
      ReadMoe(reader, model_type, model, file.fields);
    }
  } else {
    std::string list;
    for (const char* name : kSupportedModelTypes) list += std::string(list.empty() ? "" : ", ") + name;
    reader.Issue(codes::kModelTypeUnsupported,
                 "has model_type '" + model_type + "'; accel supports " + list);
    return result;
  }
  if (result.issues.empty()) result.config = std::move(file);
  return result;
}

ModelConfigResult ReadModelConfig(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileLimited(path, kMaxSpecFileBytes);
  if (!text.ok()) {
    ModelConfigResult result;
    std::string reason(text.status().message());
    if (text.status().code() == absl::StatusCode::kOutOfRange) {
      reason = "it is " + reason + " bytes, more than the 1 MiB limit";
    }
    result.issues.push_back(
        {codes::kModelConfigUnreadable, "cannot be read: " + reason, {}});
    return result;
  }
  return ParseModelConfig(*text);
}

std::optional<ModelSpec> LoadModelConfig(const std::string& path, DiagnosticSink& sink,
                                         SourceManager& sources) {
  ModelConfigResult result = ReadModelConfig(path);
  if (!result.text.empty()) sources.Add(path, result.text);
  for (const ModelConfigIssue& issue : result.issues) {
    sink.Error(issue.code, path, issue.location, "", "model config " + issue.message);
  }
  if (!result.config) return std::nullopt;
  ModelConfigFile& file = *result.config;
  auto is_set = [&](std::string_view field) {
    for (const std::string& f : file.fields) {
      if (f == field) return true;
    }
    return false;
  };
  ApplyArchDefaults(file.model, is_set);
  return file.model;
}

absl::StatusOr<ModelSpec> LoadModelConfig(const std::string& path) {
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<ModelSpec> model = LoadModelConfig(path, sink, sources);
  if (model) return *model;
  const Diagnostic& first = sink.diagnostics().front();
  std::string where = path;
  if (first.location.known()) {
    where += ":" + std::to_string(first.location.line) + ":" + std::to_string(first.location.column);
  }
  std::string message = where + ": " + first.message;
  if (first.code == codes::kModelConfigUnreadable) return absl::NotFoundError(message);
  return absl::InvalidArgumentError(message);
}

}  // namespace accel::spec
