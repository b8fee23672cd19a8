// Dimensions of the decoder-only transformers the executor builds. Torch-free so the
// planner-facing code and tests can use it cheaply. Parameter counts are the plan's
// (accel.ir Model.parameters, planner::CountParameters), never recomputed here.
#ifndef ACCEL_EXECUTOR_MODELS_MODEL_CONFIG_H_
#define ACCEL_EXECUTOR_MODELS_MODEL_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// Model family. kGpt2: learned positions, LayerNorm, GELU(tanh) MLP, Conv1D weights, tied head
// (Radford et al. 2019; Hugging Face GPT2LMHeadModel). kLlama: RMSNorm, rotary positions, SwiGLU MLP,
// grouped-query attention, untied head (Touvron et al. 2023; Hugging Face LlamaForCausalLM).
enum class ModelArch { kGpt2, kLlama };

// "gpt2" or "llama".
std::string ModelArchName(ModelArch arch);

// The mixture-of-experts layers of a llama-family model (Mixtral, Jiang et al. 2024; Qwen2-MoE,
// Qwen3-MoE): every block but the dense ones replaces its MLP with num_experts SwiGLU experts, of
// which a router picks top_k per token, plus optional shared experts every token passes through.
struct MoeConfig {
  // Routed experts E; 0: a dense model (no MoE layers).
  int64_t num_experts = 0;
  // Experts per token k, in [1, E].
  int64_t top_k = 2;
  // Each expert's SwiGLU inner width.
  int64_t expert_ffn_size = 0;
  // Inner width of the shared experts every token also passes through, as one SwiGLU (the plan's
  // num_shared_experts · shared_expert_ffn_size; Qwen2-MoE's shared_expert_intermediate_size); 0: none.
  int64_t shared_expert_ffn_size = 0;
  // The shared expert's output is scaled by sigmoid(x·w) with w [1, h] (Qwen2-MoE).
  bool shared_expert_gate = false;
  // Router scores by an independent sigmoid per expert (DeepSeek-V3) instead of a softmax.
  bool sigmoid_scoring = false;
  // The k chosen probabilities are divided by their sum (Mixtral; Qwen's norm_topk_prob).
  bool normalize_top_k = true;
  // Weight of the load-balancing loss added to the language-model loss (router_aux_loss_coef).
  double aux_loss_coef = 0.0;
  // Slots each expert takes from one rank's micro-batch, as a multiple of the even share T·k/E
  // (rounded up); the rest are dropped (TokenDispatch). 0: dropless.
  double capacity_factor = 0.0;
  // Blocks (global indices) that keep the dense MLP (mlp_only_layers, first_k_dense_replace, ...).
  std::vector<int64_t> dense_layers;
  // The transformers model_type whose tensor names checkpoints use (checkpoint/hf_config.h
  // HuggingFaceModelType; checkpoint/expert_names.h): "mixtral", "qwen2_moe" or "qwen3_moe".
  std::string hf_model_type;
};

// Where a llama-family block's RMSNorms sit (ir::NormPlacement): kPre x + attn(norm(x)) (Llama),
// kPost x + norm(attn(x)) (OLMo 2), kPreAndPost x + norm(attn(norm(x))) (Gemma 2/3); the MLP alike.
enum class BlockNorms { kPre, kPost, kPreAndPost };

// Dimensions of a model. Counts are plain integers; lengths are in tokens.
struct ModelConfig {
  ModelArch arch = ModelArch::kGpt2;
  // Model width h (embedding and residual size).
  int64_t hidden_size = 256;
  // Number of transformer blocks L.
  int64_t num_layers = 4;
  // Number of query heads; divides hidden_size.
  int64_t num_heads = 4;
  // Number of key/value heads (Llama grouped-query attention); divides num_heads. GPT-2 requires
  // num_kv_heads == num_heads.
  int64_t num_kv_heads = 4;
  // MLP inner width. GPT-2 uses 4h by convention; Llama's intermediate_size.
  int64_t ffn_size = 1024;
  // Vocabulary size V (256 for the byte tokenizer).
  int64_t vocab_size = 256;
  // Longest sequence P the model accepts (GPT-2's position table size; RoPE cache length).
  int64_t max_seq_len = 256;
  // Whether the output head reuses the token embedding (always true for GPT-2).
  bool tie_embeddings = true;
  // Llama family: q/k/v projections carry a bias (Qwen2's attention_bias).
  bool qkv_bias = false;
  // Epsilon of LayerNorm (GPT-2, 1e-5) or RMSNorm (Llama, 1e-5/1e-6).
  double norm_eps = 1e-5;
  // RoPE base theta (Llama; Su et al. 2021), ignored by GPT-2.
  double rope_theta = 10000.0;
  // Llama family: the width d of one attention head when the config states it apart from the
  // hidden size (Qwen3's head_dim: q_proj is [heads·d, h], o_proj [h, heads·d]); 0: h / heads.
  // Read through HeadDim.
  int64_t head_dim = 0;
  // Llama family: each query and key head passes an RMSNorm of d weights before rotary
  // (self_attn.{q,k}_norm; Qwen3, Qwen3-MoE: transformers' Qwen3Attention).
  bool qk_norm = false;
  // Llama family: q/k/v fused into self_attn.qkv_proj and gate/up into mlp.gate_up_proj, as Phi-3
  // names them (planner::FusedProjections). Needs num_kv_heads = num_heads under tensor parallelism.
  bool fused_projections = false;
  // Attention through LibTorch's fused scaled_dot_product_attention (the plan's
  // ATTENTION_KERNEL_SDPA; needs LibTorch 2.0+), else as separate operators (ATTENTION_KERNEL_MATH).
  bool fused_attention = false;
  // Mixture-of-experts layers (llama family only); none when moe.num_experts is 0.
  MoeConfig moe;
  // Llama family variants (the ir::Model fields of the same names; OLMo 2, Gemma 2/3):
  // where the block's RMSNorms sit (kPre: Llama's input + post-attention norms).
  BlockNorms block_norms = BlockNorms::kPre;
  // q/k norms (qk_norm) over the whole projection, [heads·d] and [kv_heads·d] (OLMo 2).
  bool qk_norm_full_width = false;
  // Every RMSNorm computes x̂·(1 + w) in fp32, its weights starting at 0 (Gemma).
  bool norm_unit_offset = false;
  // Token embeddings × this factor (Gemma: √h in the compute dtype); 0: not scaled.
  double embedding_scale = 0.0;
  // The MLP gate is GELU(tanh) (GeGLU, Gemma) instead of SiLU.
  bool gelu_tanh_mlp = false;
  // Scores × query_pre_attn_scalar^(-1/2) (Gemma); 0: d^(-1/2).
  double query_pre_attn_scalar = 0.0;
  // cap·tanh(x/cap) on the attention scores (before the mask) and on the final logits; 0: none.
  double attn_logit_softcapping = 0.0;
  double final_logit_softcapping = 0.0;
  // Blocks in sliding_window_layers (global indices, ascending) attend to the last
  // sliding_window positions only; 0: none.
  int64_t sliding_window = 0;
  std::vector<int64_t> sliding_window_layers;
  // RoPE base of the sliding-window blocks (Gemma 3); 0: rope_theta.
  double rope_local_theta = 0.0;
  // Whether block `layer` is a mixture-of-experts block.
  bool IsMoeLayer(int64_t layer) const;
  // Whether block `layer` attends through a sliding window (sliding_window > 0 and listed).
  bool IsSlidingLayer(int64_t layer) const;
};

// The width of one attention head: config.head_dim when set, else hidden_size / num_heads.
int64_t HeadDim(const ModelConfig& config);

// Checks the invariants documented on ModelConfig. Errors: InvalidArgument naming the field.
absl::Status ValidateModelConfig(const ModelConfig& config);

// The dimensions the plan's model message gives (accel.ir Model): arch GPT2 or LLAMA (the
// llama family: llama, mistral, qwen2), unset num_kv_heads = num_heads, unset ffn_hidden_size =
// 4h, and the embedding/head rows of padded_vocab_size when set (Megatron's vocabulary padding;
// tokens stay below vocab_size), and the plan's mixture of experts (Model.moe: top-k, widths, the
// shared experts as one SwiGLU of num_shared · shared_expert_ffn_size, router scoring and
// normalization, the aux-loss weight, the dense blocks). Errors: InvalidArgument "model.arch is
// unspecified: expected gpt2 or llama" (or another value's name) and those of ValidateModelConfig.
absl::StatusOr<ModelConfig> ModelConfigFromPlan(const ir::Model& m);

// Tensor-parallel ranks holding each key/value head under tensor degree tp: ir::KvHeadReplicas
// (the rule the plan's Model.kv_head_replicas follows) of num_kv_heads; every rank then holds
// the one head its query heads use.
int64_t KvHeadReplicas(const ModelConfig& config, int64_t tp);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_MODEL_CONFIG_H_
