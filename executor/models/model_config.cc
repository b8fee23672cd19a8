#include "executor/models/model_config.h"

#include "planner/model_params.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "checkpoint/hf_config.h"
#include "ir/enum_names.h"
#include "ir/plan_access.h"

namespace accel::exec {

std::string ModelArchName(ModelArch arch) { return arch == ModelArch::kGpt2 ? "gpt2" : "llama"; }

int64_t KvHeadReplicas(const ModelConfig& config, int64_t tp) {
  return ir::KvHeadReplicas(config.num_kv_heads, tp);
}

bool ModelConfig::IsMoeLayer(int64_t layer) const {
  return moe.num_experts > 0 && std::find(moe.dense_layers.begin(), moe.dense_layers.end(), layer) == moe.dense_layers.end();
}

bool ModelConfig::IsSlidingLayer(int64_t layer) const {
  return sliding_window > 0 &&
         std::find(sliding_window_layers.begin(), sliding_window_layers.end(), layer) != sliding_window_layers.end();
}

namespace {

// The llama-family variant fields (OLMo 2, Gemma) of the plan.
void SetVariantFromPlan(const ir::Model& m, ModelConfig& c) {
  c.block_norms = m.norm_placement() == ir::NORM_PLACEMENT_POST           ? BlockNorms::kPost
                  : m.norm_placement() == ir::NORM_PLACEMENT_PRE_AND_POST ? BlockNorms::kPreAndPost
                                                                          : BlockNorms::kPre;
  c.qk_norm_full_width = m.qk_norm_full_width();
  c.norm_unit_offset = m.norm_unit_offset();
  c.embedding_scale = m.embedding_scale();
  c.gelu_tanh_mlp = m.mlp_activation() == ir::MLP_ACTIVATION_GELU_TANH;
  c.query_pre_attn_scalar = m.query_pre_attn_scalar();
  c.attn_logit_softcapping = m.attn_logit_softcapping();
  c.final_logit_softcapping = m.final_logit_softcapping();
  c.sliding_window = m.sliding_window();
  c.sliding_window_layers.assign(m.sliding_window_layers().begin(), m.sliding_window_layers().end());
  c.rope_local_theta = m.rope_local_theta();
}

// Values the variant fields must not take (the ir::Model comments).
absl::Status ValidateVariant(const ModelConfig& c) {
  const bool variant = c.block_norms != BlockNorms::kPre || c.qk_norm_full_width || c.norm_unit_offset ||
                       c.embedding_scale != 0 || c.gelu_tanh_mlp || c.query_pre_attn_scalar != 0 ||
                       c.attn_logit_softcapping != 0 || c.final_logit_softcapping != 0 || c.sliding_window != 0 ||
                       c.rope_local_theta != 0;
  if (variant && c.arch != ModelArch::kLlama) {
    return absl::InvalidArgumentError("gpt2 has none of the llama-family block variants (OLMo 2's, Gemma's)");
  }
  for (const auto& [name, value] : {std::pair<const char*, double>{"embedding_scale", c.embedding_scale},
                                    {"query_pre_attn_scalar", c.query_pre_attn_scalar},
                                    {"attn_logit_softcapping", c.attn_logit_softcapping},
                                    {"final_logit_softcapping", c.final_logit_softcapping},
                                    {"rope_local_theta", c.rope_local_theta}}) {
    if (!(value >= 0)) return absl::InvalidArgumentError(absl::StrCat("model.", name, " must be >= 0, got ", value));
  }
  if (c.sliding_window < 0) {
    return absl::InvalidArgumentError(absl::StrCat("model.sliding_window must be >= 0, got ", c.sliding_window));
  }
  if (c.qk_norm_full_width && !c.qk_norm) {
    return absl::InvalidArgumentError("model.qk_norm_full_width needs model.qk_norm");
  }
  return absl::OkStatus();
}

absl::Status ValidateMoeConfig(const ModelConfig& c) {
  const MoeConfig& m = c.moe;
  if (m.num_experts == 0) return absl::OkStatus();
  if (c.arch != ModelArch::kLlama) return absl::InvalidArgumentError("mixture-of-experts layers need the llama family");
  if (m.num_experts < 0 || m.top_k < 1 || m.top_k > m.num_experts) {
    return absl::InvalidArgumentError(absl::StrCat("model.moe: top_k ", m.top_k, " must be in [1, num_experts ",
                                                   m.num_experts, "]"));
  }
  if (m.expert_ffn_size <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("model.moe.expert_ffn_size must be > 0, got ", m.expert_ffn_size));
  }
  if (m.shared_expert_ffn_size < 0 || (m.shared_expert_gate && m.shared_expert_ffn_size == 0)) {
    return absl::InvalidArgumentError("model.moe: a shared expert gate needs shared_expert_ffn_size > 0");
  }
  return absl::OkStatus();
}

// The plan's mixture of experts (ir::MixtureOfExperts); the shared experts become one SwiGLU of
// their summed width, as the planner counts them (planner/model_params.cc).
MoeConfig MoeConfigFromPlan(const ir::MixtureOfExperts& moe) {
  MoeConfig c;
  c.num_experts = moe.num_experts();
  if (c.num_experts == 0) return c;
  c.top_k = moe.experts_per_token();
  c.expert_ffn_size = moe.expert_ffn_size();
  c.shared_expert_ffn_size = moe.num_shared_experts() * moe.shared_expert_ffn_size();
  c.shared_expert_gate = moe.shared_expert_gate();
  c.sigmoid_scoring = moe.router_scoring() == ir::ROUTER_SCORING_SIGMOID;
  c.normalize_top_k = moe.norm_topk_prob();
  c.aux_loss_coef = moe.router_aux_loss_coef();
  c.capacity_factor = moe.capacity_factor();
  c.dense_layers.assign(moe.dense_layers().begin(), moe.dense_layers().end());
  return c;
}


}  // namespace

int64_t HeadDim(const ModelConfig& c) {
  if (c.head_dim > 0) return c.head_dim;
  return c.num_heads > 0 ? c.hidden_size / c.num_heads : 0;
}

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
  if (c.head_dim < 0) return absl::InvalidArgumentError(absl::StrCat("model.head_dim must be >= 0, got ", c.head_dim));
  if (c.head_dim == 0 && c.hidden_size % c.num_heads != 0) {
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
    if (c.qk_norm || (c.head_dim != 0 && c.head_dim * c.num_heads != c.hidden_size)) {
      return absl::InvalidArgumentError("gpt2 has no q/k norm and no head_dim apart from hidden_size / num_heads");
    }
  }
  if (c.arch == ModelArch::kLlama && HeadDim(c) % 2 != 0) {
    return absl::InvalidArgumentError("llama rotary embedding needs an even head dimension");
  }
  if (absl::Status s = ValidateMoeConfig(c); !s.ok()) return s;
  if (absl::Status s = ValidateVariant(c); !s.ok()) return s;
  if (!(c.norm_eps > 0)) return absl::InvalidArgumentError("model.norm_eps must be > 0");
  if (c.arch == ModelArch::kLlama && !(c.rope_theta > 0)) {
    return absl::InvalidArgumentError("model.rope_theta must be > 0");
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelConfig> ModelConfigFromPlan(const ir::Model& m) {
  ModelConfig config;
  if (m.arch() == ir::ARCHITECTURE_GPT2) {
    config.arch = ModelArch::kGpt2;
  } else if (m.arch() == ir::ARCHITECTURE_LLAMA) {
    config.arch = ModelArch::kLlama;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("model.arch is ", std::string(ir::Name(m.arch())), ": expected gpt2 or llama"));
  }
  config.hidden_size = m.hidden_size();
  config.num_layers = m.num_layers();
  config.num_heads = m.num_heads();
  config.num_kv_heads = ir::KvHeads(m);
  config.ffn_size = ir::FfnSize(m);
  // The embedding and head have the plan's padded rows (Megatron's make-vocab-size-divisible-by);
  // tokens stay below vocab_size.
  config.vocab_size = ir::VocabRows(m);
  config.max_seq_len = m.max_seq_len();
  config.tie_embeddings = m.tie_word_embeddings();
  config.qkv_bias = m.qkv_bias();
  config.fused_attention = m.attention_kernel() == ir::ATTENTION_KERNEL_SDPA;
  config.norm_eps = m.norm_eps();
  config.rope_theta = m.rope_theta();
  // The plan states every model's head width (h / heads unless the config said otherwise).
  if (config.arch == ModelArch::kLlama && m.head_dim() > 0 && m.head_dim() * m.num_heads() != m.hidden_size()) {
    config.head_dim = m.head_dim();
  }
  config.qk_norm = m.qk_norm();
  config.fused_projections = planner::FusedProjections(m);
  SetVariantFromPlan(m, config);
  config.moe = MoeConfigFromPlan(m.moe());
  if (config.moe.num_experts > 0) config.moe.hf_model_type = HuggingFaceModelType(m);
  if (absl::Status s = ValidateModelConfig(config); !s.ok()) return s;
  return config;
}

}  // namespace accel::exec
