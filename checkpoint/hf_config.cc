#include "checkpoint/hf_config.h"

#include <nlohmann/json.hpp>

namespace accel::exec {
namespace {

nlohmann::json Gpt2Config(const HfModelDims& d) {
  return {{"model_type", "gpt2"},
          {"architectures", {"GPT2LMHeadModel"}},
          {"n_embd", d.hidden_size},
          {"n_layer", d.num_layers},
          {"n_head", d.num_heads},
          {"n_inner", d.ffn_hidden_size},
          {"n_positions", d.max_seq_len},
          {"n_ctx", d.max_seq_len},
          {"vocab_size", d.vocab_size},
          {"layer_norm_epsilon", d.norm_eps},
          {"activation_function", "gelu_new"},
          {"attn_pdrop", 0.0},
          {"embd_pdrop", 0.0},
          {"resid_pdrop", 0.0},
          {"tie_word_embeddings", d.tie_word_embeddings},
          {"torch_dtype", d.torch_dtype}};
}

nlohmann::json LlamaConfig(const HfModelDims& d) {
  return {{"model_type", "llama"},
          {"architectures", {"LlamaForCausalLM"}},
          {"hidden_size", d.hidden_size},
          {"intermediate_size", d.ffn_hidden_size},
          {"num_hidden_layers", d.num_layers},
          {"num_attention_heads", d.num_heads},
          {"num_key_value_heads", d.num_kv_heads},
          {"max_position_embeddings", d.max_seq_len},
          {"rms_norm_eps", d.norm_eps},
          {"rope_theta", d.rope_theta},
          {"vocab_size", d.vocab_size},
          {"tie_word_embeddings", d.tie_word_embeddings},
          {"hidden_act", "silu"},
          {"attention_bias", d.qkv_bias},
          {"mlp_bias", false},
          {"attention_dropout", 0.0},
          {"torch_dtype", d.torch_dtype}};
}

}  // namespace

std::string HuggingFaceConfigJson(const HfModelDims& dims) {
  const nlohmann::json config = dims.arch == HfArch::kGpt2 ? Gpt2Config(dims) : LlamaConfig(dims);
  // nlohmann::json keeps object keys sorted, like json.dumps(sort_keys=True) in save_pretrained.
  return config.dump(2) + "\n";
}

}  // namespace accel::exec
