#include "checkpoint/hf_config.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "ir/plan_access.h"

namespace accel::exec {
namespace {

const char* TorchDtype(ir::Dtype dtype) {
  return dtype == ir::DTYPE_BF16 ? "bfloat16" : dtype == ir::DTYPE_FP16 ? "float16" : "float32";
}

nlohmann::json Gpt2Config(const ir::Model& d, ir::Dtype dtype) {
  return {{"model_type", "gpt2"},
          {"architectures", {"GPT2LMHeadModel"}},
          {"n_embd", d.hidden_size()},
          {"n_layer", d.num_layers()},
          {"n_head", d.num_heads()},
          {"n_inner", ir::FfnSize(d)},
          {"n_positions", d.max_seq_len()},
          {"n_ctx", d.max_seq_len()},
          {"vocab_size", ir::VocabRows(d)},
          {"layer_norm_epsilon", d.norm_eps()},
          {"activation_function", "gelu_new"},
          {"attn_pdrop", 0.0},
          {"embd_pdrop", 0.0},
          {"resid_pdrop", 0.0},
          {"tie_word_embeddings", d.tie_word_embeddings()},
          {"torch_dtype", TorchDtype(dtype)}};
}

nlohmann::json LlamaConfig(const ir::Model& d, ir::Dtype dtype) {
  return {{"model_type", "llama"},
          {"architectures", {"LlamaForCausalLM"}},
          {"hidden_size", d.hidden_size()},
          {"intermediate_size", ir::FfnSize(d)},
          {"num_hidden_layers", d.num_layers()},
          {"num_attention_heads", d.num_heads()},
          {"num_key_value_heads", ir::KvHeads(d)},
          {"max_position_embeddings", d.max_seq_len()},
          {"rms_norm_eps", d.norm_eps()},
          {"rope_theta", d.rope_theta()},
          {"vocab_size", ir::VocabRows(d)},
          {"tie_word_embeddings", d.tie_word_embeddings()},
          {"hidden_act", "silu"},
          {"attention_bias", d.qkv_bias()},
          {"mlp_bias", false},
          {"attention_dropout", 0.0},
          {"torch_dtype", TorchDtype(dtype)}};
}

// Phi-3's fields over the llama ones (transformers' Phi3Config): its fused projections are implied
// by model_type phi3; accel trains causal attention over at most max_seq_len tokens, which
// sliding_window = null states (the window, when the source config had one, bounded max_seq_len).
void AddPhi3(nlohmann::json& c) {
  c["model_type"] = "phi3";
  c["architectures"] = {"Phi3ForCausalLM"};
  c["sliding_window"] = nullptr;
  c["original_max_position_embeddings"] = c["max_position_embeddings"];
  c["rope_scaling"] = nullptr;
}

// Qwen3's fields over the llama ones (transformers' Qwen3Config): its head width and the per-head
// q/k norms, which model_type qwen3 implies; no sliding window.
void AddQwen3(const ir::Model& d, nlohmann::json& c) {
  c["model_type"] = "qwen3";
  c["architectures"] = {"Qwen3ForCausalLM"};
  c["use_sliding_window"] = false;
  c["sliding_window"] = nullptr;
}

// Mixture of experts: transformers' MixtralConfig or Qwen2MoeConfig / Qwen3MoeConfig fields,
// over the llama ones (intermediate_size: Mixtral's experts' width, Qwen's dense blocks').
void AddMoe(const ir::Model& d, nlohmann::json& c) {
  const ir::MixtureOfExperts& m = d.moe();
  const std::string type = HuggingFaceModelType(d);
  c["model_type"] = type;
  c["num_experts_per_tok"] = m.experts_per_token();
  c["router_aux_loss_coef"] = m.router_aux_loss_coef();
  c["output_router_logits"] = false;
  if (type == "mixtral") {
    c["architectures"] = {"MixtralForCausalLM"};
    c["num_local_experts"] = m.num_experts();
    c["intermediate_size"] = m.expert_ffn_size();
    c["sliding_window"] = nullptr;
    return;
  }
  c["architectures"] = {type == "qwen3_moe" ? "Qwen3MoeForCausalLM" : "Qwen2MoeForCausalLM"};
  c["num_experts"] = m.num_experts();
  c["moe_intermediate_size"] = m.expert_ffn_size();
  c["shared_expert_intermediate_size"] = m.num_shared_experts() * m.shared_expert_ffn_size();
  c["norm_topk_prob"] = m.norm_topk_prob();
  c["decoder_sparse_step"] = 1;
  c["mlp_only_layers"] = std::vector<int64_t>(m.dense_layers().begin(), m.dense_layers().end());
  c["qkv_bias"] = d.qkv_bias();
}

// OLMo 2's fields over the llama ones (transformers' Olmo2Config): its post-norms and full-width
// q/k norms are implied by model_type olmo2.
void AddOlmo2(nlohmann::json& c) {
  c["model_type"] = "olmo2";
  c["architectures"] = {"Olmo2ForCausalLM"};
}

// A JSON number, or null for 0 (Gemma's "no soft cap").
nlohmann::json NumberOrNull(double value) { return value > 0 ? nlohmann::json(value) : nlohmann::json(nullptr); }

// Gemma 2's / Gemma 3 text's fields over the llama ones (Gemma2Config, Gemma3TextConfig): the
// four norms, x̂·(1 + w), √h embedding scaling and GeGLU are implied by the model type; the
// scores' scale and caps, the window and (Gemma 3) the local blocks' pattern and RoPE base are
// written. Gemma 3's pattern p is the first full-attention block + 1 (blocks l with
// (l + 1) % p != 0 slide).
void AddGemma(const ir::Model& d, const std::string& type, nlohmann::json& c) {
  c["model_type"] = type;
  c["architectures"] = {type == "gemma2" ? "Gemma2ForCausalLM" : "Gemma3ForCausalLM"};
  c.erase("hidden_act");
  c["hidden_activation"] = "gelu_pytorch_tanh";
  c["query_pre_attn_scalar"] = d.query_pre_attn_scalar();
  c["attn_logit_softcapping"] = NumberOrNull(d.attn_logit_softcapping());
  c["final_logit_softcapping"] = NumberOrNull(d.final_logit_softcapping());
  c["sliding_window"] = d.sliding_window();
  if (type == "gemma3_text") {
    int64_t pattern = d.num_layers() + 1;
    for (int64_t l = 0; l < d.num_layers(); ++l) {
      if (std::find(d.sliding_window_layers().begin(), d.sliding_window_layers().end(), l) ==
          d.sliding_window_layers().end()) {
        pattern = l + 1;
        break;
      }
    }
    c["sliding_window_pattern"] = pattern;
    c["rope_local_base_freq"] = d.rope_local_theta() > 0 ? d.rope_local_theta() : d.rope_theta();
    c["rope_scaling"] = nullptr;
  }
}

}  // namespace

std::string HuggingFaceModelType(const ir::Model& model) {
  if (model.arch() == ir::ARCHITECTURE_GPT2) return "gpt2";
  if (model.moe().num_experts() == 0) {
    if (model.model_type() == "phi3") return "phi3";
    if (model.norm_placement() == ir::NORM_PLACEMENT_POST) return "olmo2";
    if (model.norm_placement() == ir::NORM_PLACEMENT_PRE_AND_POST) return model.qk_norm() ? "gemma3_text" : "gemma2";
    return model.qk_norm() ? "qwen3" : "llama";
  }
  const std::string& type = model.model_type();
  if (type == "mixtral" || type == "qwen2_moe" || type == "qwen3_moe") return type;
  const ir::MixtureOfExperts& m = model.moe();
  return m.num_shared_experts() == 0 && m.dense_layers_size() == 0 ? "mixtral" : "qwen2_moe";
}

std::string HuggingFaceConfigJson(const ir::Model& model, ir::Dtype stored_dtype) {
  nlohmann::json config = model.arch() == ir::ARCHITECTURE_GPT2 ? Gpt2Config(model, stored_dtype)
                                                                : LlamaConfig(model, stored_dtype);
  if (model.arch() != ir::ARCHITECTURE_GPT2) {
    // The head width whenever it is not h / heads, and always where q/k norms use it.
    if (model.qk_norm() || (model.head_dim() > 0 && model.head_dim() * model.num_heads() != model.hidden_size())) {
      config["head_dim"] = model.head_dim() > 0 ? model.head_dim() : model.hidden_size() / model.num_heads();
    }
    const std::string type = HuggingFaceModelType(model);
    if (model.moe().num_experts() > 0) {
      AddMoe(model, config);
    } else if (type == "olmo2") {
      AddOlmo2(config);
    } else if (type == "gemma2" || type == "gemma3_text") {
      AddGemma(model, type, config);
    } else if (model.qk_norm()) {
      AddQwen3(model, config);
    } else if (model.model_type() == "phi3") {
      AddPhi3(config);
    }
  }
  // nlohmann::json keeps object keys sorted, like json.dumps(sort_keys=True) in save_pretrained.
  return config.dump(2) + "\n";
}

}  // namespace accel::exec
