// The Hugging Face transformers config.json of a model accel trains, so an exported checkpoint
// (checkpoint/export.h) loads with AutoModelForCausalLM.from_pretrained. Torch-free.
#ifndef ACCEL_CHECKPOINT_HF_CONFIG_H_
#define ACCEL_CHECKPOINT_HF_CONFIG_H_

#include <string>

#include "ir/plan.pb.h"

namespace accel::exec {

// config.json text (keys sorted, 2-space indent, trailing newline, as save_pretrained writes it).
// gpt2: model_type "gpt2", architectures ["GPT2LMHeadModel"], n_embd, n_layer, n_head, n_inner,
//   n_positions, n_ctx, vocab_size, layer_norm_epsilon, activation_function "gelu_new" (the tanh
//   GELU the executor uses), attn/embd/resid_pdrop 0 (the executor trains without dropout),
//   tie_word_embeddings, torch_dtype.
// llama: model_type "llama", architectures ["LlamaForCausalLM"], hidden_size, intermediate_size,
//   num_hidden_layers, num_attention_heads, num_key_value_heads, max_position_embeddings,
//   rms_norm_eps, rope_theta, vocab_size, tie_word_embeddings, hidden_act "silu", attention_bias
//   (= qkv_bias), mlp_bias false, attention_dropout 0, torch_dtype.
// Field meanings: transformers' GPT2Config and LlamaConfig. The dimensions are the plan's model
// (arch GPT2, else the llama family), read as the executor builds it: vocab_size is
// padded_vocab_size when set (the embedding rows stored; transformers checks the tensors' shapes
// against it), an unset num_kv_heads is num_heads and an unset ffn_hidden_size 4h. torch_dtype is
// `stored_dtype` ("float32", "bfloat16" or "float16"). No validation: dims are the model's.
// A mixture-of-experts llama (model.moe) is written as transformers' model_type of
// HuggingFaceModelType with its fields: mixtral (MixtralForCausalLM: num_local_experts,
// num_experts_per_tok, intermediate_size = the experts' width, router_aux_loss_coef) or
// qwen2_moe / qwen3_moe (num_experts, num_experts_per_tok, moe_intermediate_size,
// shared_expert_intermediate_size, norm_topk_prob, decoder_sparse_step 1, mlp_only_layers = the
// dense blocks, router_aux_loss_coef). A dense llama with q/k norms (ir::Model.qk_norm) is
// written as model_type "qwen3" (Qwen3ForCausalLM, use_sliding_window false); head_dim is written
// whenever the model has q/k norms or a head width other than hidden_size / num_heads. OLMo 2 and
// Gemma (ir::Model.norm_placement) are written as olmo2, gemma2 or gemma3_text with their own
// fields (query_pre_attn_scalar, the soft caps, null when 0, sliding_window, Gemma 3's
// sliding_window_pattern and rope_local_base_freq).
std::string HuggingFaceConfigJson(const ir::Model& model, ir::Dtype stored_dtype);

// The transformers model_type a model's checkpoints are named and configured as: "gpt2",
// "llama" ("qwen3" with q/k norms, "phi3" for a model read as phi3: fused projections; "olmo2"
// with norms after attention and MLP only, "gemma2" with norms before and after, "gemma3_text"
// with those and q/k norms), or for a
// mixture of experts the model_type it was read from (mixtral, qwen2_moe,
// qwen3_moe), else "mixtral" when every block routes and none has shared experts (Mixtral's
// block), else "qwen2_moe" (shared experts, dense blocks).
std::string HuggingFaceModelType(const ir::Model& model);

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_HF_CONFIG_H_
