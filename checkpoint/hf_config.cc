#include "checkpoint/hf_config.h"

#include <nlohmann/json.hpp>

namespace accel::exec {
namespace {

int64_t Vocab(const ir::Model& m) { return m.padded_vocab_size() > 0 ? m.padded_vocab_size() : m.vocab_size(); }
int64_t KvHeads(const ir::Model& m) { return m.num_kv_heads() > 0 ? m.num_kv_heads() : m.num_heads(); }
int64_t Ffn(const ir::Model& m) { return m.ffn_hidden_size() > 0 ? m.ffn_hidden_size() : 4 * m.hidden_size(); }

const char* TorchDtype(ir::Dtype dtype) {
  return dtype == ir::DTYPE_BF16 ? "bfloat16" : dtype == ir::DTYPE_FP16 ? "float16" : "float32";
}

nlohmann::json Gpt2Config(const ir::Model& d, ir::Dtype dtype) {
  return {{"model_type", "gpt2"},
          {"architectures", {"GPT2LMHeadModel"}},
          {"n_embd", d.hidden_size()},
          {"n_layer", d.num_layers()},
          {"n_head", d.num_heads()},
          {"n_inner", Ffn(d)},
          {"n_positions", d.max_seq_len()},
          {"n_ctx", d.max_seq_len()},
          {"vocab_size", Vocab(d)},
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
          {"intermediate_size", Ffn(d)},
          {"num_hidden_layers", d.num_layers()},
          {"num_attention_heads", d.num_heads()},
          {"num_key_value_heads", KvHeads(d)},
          {"max_position_embeddings", d.max_seq_len()},
          {"rms_norm_eps", d.norm_eps()},
          {"rope_theta", d.rope_theta()},
          {"vocab_size", Vocab(d)},
          {"tie_word_embeddings", d.tie_word_embeddings()},
          {"hidden_act", "silu"},
          {"attention_bias", d.qkv_bias()},
          {"mlp_bias", false},
          {"attention_dropout", 0.0},
          {"torch_dtype", TorchDtype(dtype)}};
}

}  // namespace

std::string HuggingFaceConfigJson(const ir::Model& model, ir::Dtype stored_dtype) {
  const nlohmann::json config = model.arch() == ir::ARCHITECTURE_GPT2 ? Gpt2Config(model, stored_dtype)
                                                                      : LlamaConfig(model, stored_dtype);
  // nlohmann::json keeps object keys sorted, like json.dumps(sort_keys=True) in save_pretrained.
  return config.dump(2) + "\n";
}

}  // namespace accel::exec
