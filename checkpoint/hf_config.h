// The Hugging Face transformers config.json of a model accel trains, so an exported checkpoint
// (checkpoint/export.h) loads with AutoModelForCausalLM.from_pretrained. Torch-free.
#ifndef ACCEL_CHECKPOINT_HF_CONFIG_H_
#define ACCEL_CHECKPOINT_HF_CONFIG_H_

#include <cstdint>
#include <string>

namespace accel::exec {

// The two architectures the executor implements: GPT2LMHeadModel and LlamaForCausalLM.
enum class HfArch { kGpt2, kLlama };

// Model dimensions, as in spec::ModelSpec (spec/job_spec.h) but with no dependency on the spec.
// vocab_size must be the number of embedding rows actually stored (after any padding), since
// transformers checks the tensors' shapes against it.
struct HfModelDims {
  HfArch arch = HfArch::kGpt2;
  int64_t hidden_size = 0;      // n_embd / hidden_size
  int64_t num_layers = 0;       // n_layer / num_hidden_layers
  int64_t num_heads = 0;        // n_head / num_attention_heads
  int64_t num_kv_heads = 0;     // llama num_key_value_heads (gpt2: must equal num_heads, not written)
  int64_t ffn_hidden_size = 0;  // n_inner / intermediate_size
  int64_t vocab_size = 0;
  int64_t max_seq_len = 0;      // n_positions and n_ctx / max_position_embeddings
  bool tie_word_embeddings = true;
  double norm_eps = 1e-5;       // layer_norm_epsilon / rms_norm_eps
  double rope_theta = 10000.0;  // llama only
  bool qkv_bias = false;        // llama attention_bias (gpt2 always has biases)
  std::string torch_dtype = "float32";  // the dtype of the stored tensors, e.g. "bfloat16"
};

// config.json text (keys sorted, 2-space indent, trailing newline, as save_pretrained writes it).
// gpt2: model_type "gpt2", architectures ["GPT2LMHeadModel"], n_embd, n_layer, n_head, n_inner,
//   n_positions, n_ctx, vocab_size, layer_norm_epsilon, activation_function "gelu_new" (the tanh
//   GELU the executor uses), attn/embd/resid_pdrop 0 (the executor trains without dropout),
//   tie_word_embeddings, torch_dtype.
// llama: model_type "llama", architectures ["LlamaForCausalLM"], hidden_size, intermediate_size,
//   num_hidden_layers, num_attention_heads, num_key_value_heads, max_position_embeddings,
//   rms_norm_eps, rope_theta, vocab_size, tie_word_embeddings, hidden_act "silu", attention_bias
//   (= qkv_bias), mlp_bias false, attention_dropout 0, torch_dtype.
// Field meanings: transformers' GPT2Config and LlamaConfig. No validation: dims are the model's.
std::string HuggingFaceConfigJson(const HfModelDims& dims);

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_HF_CONFIG_H_
