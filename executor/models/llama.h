// Llama (Touvron et al. 2023) in LibTorch with Hugging Face LlamaForCausalLM parameter names.
#ifndef ACCEL_EXECUTOR_MODELS_LLAMA_H_
#define ACCEL_EXECUTOR_MODELS_LLAMA_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>

#include "executor/models/causal_lm.h"
#include "executor/models/moe/moe_layer.h"
#include "executor/models/moe/moe_step_state.h"

namespace accel::exec {

// RMSNorm's parameter holder: weight [hidden], applied by RmsNorm (executor/models/ops/rms_norm.h).
// unit_offset (Gemma's Gemma2RMSNorm): x̂·(1 + w) computed in fp32 and cast to x's dtype, the
// weight starting at 0; else x̂·w, the weight starting at 1. group (must outlive the module):
// the width is this rank's part of one split over the group, normalized by the whole width's
// statistics (RmsNormOverGroup; OLMo 2's q/k norms under tensor parallelism); null: RmsNorm.
class RmsNormModule : public torch::nn::Module {
 public:
  RmsNormModule(int64_t hidden, double eps, bool unit_offset = false, Communicator* group = nullptr);
  // x: [..., hidden] -> same shape, in the promoted dtype of x and the weight (unit_offset: x's).
  torch::Tensor Forward(const torch::Tensor& x);

 private:
  torch::Tensor weight_;
  double eps_;
  bool unit_offset_;
  Communicator* group_;
};

// One pre-norm block: x + self_attn(input_layernorm(x)), then + mlp(post_attention_layernorm(x)),
// with rotary positions and grouped-query attention (query head i uses key/value head
// i / (heads/kv_heads)), SwiGLU MLP down(silu(gate(x)) * up(x)) (Shazeer 2020). No biases.
// With ModelConfig::qk_norm each query and key head passes an RMSNorm of head_dim weights before
// rotary (Qwen3: transformers' Qwen3Attention), shared by the heads, so under tensor parallelism
// its weights are whole on every rank with a tp-partial gradient (ir::Parameter.tp_partial_grad).
// With ModelConfig::qk_norm_full_width (OLMo 2) q and k pass one RMSNorm each over the whole
// projection before the head split (transformers' Olmo2Attention); under tensor parallelism each
// rank normalizes its heads' slice with the whole projection's statistics (RmsNormOverGroup).
// ModelConfig::block_norms places the norms: kPost (OLMo 2) h = x + post_attention_layernorm(
// attn(x)), out = h + post_feedforward_layernorm(mlp(h)); kPreAndPost (Gemma) h = x +
// post_attention_layernorm(attn(input_layernorm(x))), out = h + post_feedforward_layernorm(
// mlp(pre_feedforward_layernorm(h))). Gemma's gate is GELU(tanh) (ops/geglu.h), its scores
// scaled, soft-capped and windowed as ModelConfig says (AttentionScores).
// Under tensor parallelism q/k/v, gate and up are column-parallel (this rank's query and
// key/value heads, its slice of the MLP) and o_proj, down_proj row-parallel (Megatron-LM).
// A mixture-of-experts block (config.IsMoeLayer) has a MoeLayer as its "mlp": it routes the
// post-attention norm's output (all of the sequence, gathered under sequence parallelism),
// records its routing in moe_state and attaches its load-balancing loss to its output
// (AttachAuxLoss, weighted moe.aux_loss_coef · moe_state->objective_scale()).
class LlamaBlock : public torch::nn::Module {
 public:
  // tp and ep.group must outlive the block; moe_state is needed by MoE blocks only.
  // cp, when given, must outlive the block: attention spans it while the block is training.
  LlamaBlock(const ModelConfig& config, const TensorParallel& tp, int64_t layer = 0, ExpertParallel ep = {},
             std::shared_ptr<MoeStepState> moe_state = nullptr, const ContextParallel* cp = nullptr);
  // x: [batch, seq, hidden] ([batch, seq/tp, hidden] with sequence parallelism); cos, sin:
  // [seq, head_dim] rotary tables of the whole sequence. Returns x's shape.
  // The attention core is checkpointed, or ops' outputs kept, as `recompute` says.
  torch::Tensor Forward(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        const BlockRecompute& recompute = {});

 private:
  // q, k and v of n ([b, t, width] each, before the head split): three projections, or one fused
  // qkv_proj whose output is split (v copied, so the fused output is not kept for backward).
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> ProjectQkv(const torch::Tensor& n,
                                                                    const BlockRecompute& recompute);
  // The MLP's output (before ExitTensorParallel) on m, the MLP's input (normalized or not).
  torch::Tensor Mlp(const torch::Tensor& m, const BlockRecompute& recompute);
  // SwiGLU, or GeGLU (ModelConfig::gelu_tanh_mlp), of the gate and up projections.
  torch::Tensor Gate(const torch::Tensor& gate, const torch::Tensor& up) const;

  const TensorParallel& tp_;
  const ContextParallel* cp_;  // the model's, or null
  int64_t num_heads_;     // this rank's
  int64_t num_kv_heads_;  // this rank's
  int64_t head_dim_;
  bool fused_attention_;  // ModelConfig::fused_attention
  std::shared_ptr<RmsNormModule> q_norm_;  // ModelConfig::qk_norm, else null
  std::shared_ptr<RmsNormModule> k_norm_;
  // The block's norms by role (ModelConfig::block_norms), null where absent: on the attention's
  // input and output, on the MLP's input and output.
  std::shared_ptr<RmsNormModule> attn_in_norm_;
  std::shared_ptr<RmsNormModule> attn_out_norm_;
  std::shared_ptr<RmsNormModule> mlp_in_norm_;
  std::shared_ptr<RmsNormModule> mlp_out_norm_;
  bool qk_norm_full_width_ = false;
  bool gelu_tanh_mlp_ = false;
  AttentionScores scores_;  // this block's (sliding window in a local block)
  torch::nn::Linear qkv_proj_{nullptr};      // ModelConfig::fused_projections: instead of q, k, v
  torch::nn::Linear gate_up_proj_{nullptr};  // and instead of gate and up
  torch::nn::Linear q_proj_{nullptr};
  torch::nn::Linear k_proj_{nullptr};
  torch::nn::Linear v_proj_{nullptr};
  torch::nn::Linear o_proj_{nullptr};
  torch::nn::Linear gate_proj_{nullptr};
  torch::nn::Linear up_proj_{nullptr};
  torch::nn::Linear down_proj_{nullptr};
  std::shared_ptr<MoeLayer> moe_;  // instead of gate/up/down in a mixture-of-experts block
  std::shared_ptr<MoeStepState> moe_state_;
  double aux_loss_coef_ = 0;
};

// Llama language model: model.{embed_tokens,layers.N,norm} and lm_head (absent when
// tie_embeddings, then the head is embed_tokens.weight).
class LlamaModel : public CausalLm {
 public:
  // config must pass ValidateModelConfig with arch kLlama; tp.size() divides num_heads,
  // ffn_size and vocab_size (the padded vocabulary), and divides num_kv_heads or is a multiple
  // of it (KvHeadReplicas: each rank then holds one key/value head, replicated).
  // span: the pipeline stage to hold (CausalLm); layers keep their global names, and a tied
  // head on a stage without the embedding gets lm_head as the embedding's copy.
  // ep_group: the plan's "ep" group of a mixture-of-experts model (null: every rank holds every
  // expert); its size divides moe.num_experts.
  LlamaModel(const ModelConfig& config, TensorParallel tp, StageSpan span = {},
             std::shared_ptr<Communicator> ep_group = nullptr);
  TpSplit TensorParallelSplit(const std::string& name) const override;
  std::vector<std::string> BlockOps() const override {
    return {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.core",
            "self_attn.o_proj", "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};
  }
  std::string WordEmbeddingName() const override { return "model.embed_tokens.weight"; }
  std::pair<int64_t, int64_t> LocalExperts() const override;

 protected:
  torch::Tensor ForwardChunk(const torch::Tensor& input, int chunk, const torch::Tensor& targets) override;
  std::string BlockPath(int64_t layer) const override;
  std::string AttentionCoreSuffix() const override { return ".self_attn.core"; }

 private:
  std::shared_ptr<Communicator> ep_group_;
  torch::nn::Embedding embed_tokens_{nullptr};
  std::vector<std::shared_ptr<LlamaBlock>> layers_;  // HeldLayers(), chunk by chunk
  std::shared_ptr<RmsNormModule> norm_;
  torch::nn::Linear lm_head_{nullptr};
  // Inverse frequencies theta^(-2i/d), i in [0, d/2) (Su et al. 2021), fp32 buffer; of
  // rope_local_theta for sliding-window blocks (Gemma 3), undefined when it is 0.
  torch::Tensor inv_freq_;
  torch::Tensor inv_freq_local_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_LLAMA_H_
