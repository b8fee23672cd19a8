// GPT-2 (Radford et al. 2019) in LibTorch with Hugging Face GPT2LMHeadModel parameter names.
#ifndef ACCEL_EXECUTOR_MODELS_GPT2_H_
#define ACCEL_EXECUTOR_MODELS_GPT2_H_

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/normalization.h>

#include "executor/models/causal_lm.h"

namespace accel::exec {

// Hugging Face's Conv1D: a linear layer whose weight is stored [in_features, out_features]
// (transposed relative to torch.nn.Linear), y = x @ weight + bias.
class Conv1D : public torch::nn::Module {
 public:
  // Registers weight [in_features, out_features] and bias [out_features], both zero until
  // BuildCausalLm initializes them.
  Conv1D(int64_t in_features, int64_t out_features);
  // x: [..., in_features] -> [..., out_features].
  // The bias is added in the product's dtype (bf16 under autocast). keep: the product is a kept
  // output of a recomputed block (KeptMatmul; the bias is added again in the recompute).
  torch::Tensor Forward(const torch::Tensor& x, bool keep = false);
  // x @ weight without the bias (a row-parallel layer adds it once, after the reduction).
  torch::Tensor Project(const torch::Tensor& x, bool keep = false);
  const torch::Tensor& bias() const { return bias_; }

 private:
  torch::Tensor weight_;
  torch::Tensor bias_;
};

// One pre-norm block: x + attn(ln_1(x)), then + mlp(ln_2(x)). Children are named ln_1,
// attn.c_attn, attn.c_proj, ln_2, mlp.c_fc, mlp.c_proj as in Hugging Face. Under tensor
// parallelism c_attn and c_fc are column-parallel (this rank's heads: its slice of q, k and v)
// and the two c_proj row-parallel, their biases added once after the reduction (Megatron-LM).
class Gpt2Block : public torch::nn::Module {
 public:
  // tp, and cp when given, must outlive the block: attention spans cp while the block is training.
  Gpt2Block(const ModelConfig& config, const TensorParallel& tp, const ContextParallel* cp = nullptr);
  // x: [batch, seq, hidden] ([batch, seq/tp, hidden] with sequence parallelism) -> same shape;
  // causal self-attention, its core checkpointed or its ops' outputs kept as `recompute` says.
  torch::Tensor Forward(const torch::Tensor& x, const BlockRecompute& recompute = {});
  // `norm`'s parameters applied by LayerNorm (executor/models/ops/layer_norm.h), which keeps x in
  // its own dtype and two fp32 statistics per row for backward, also under autocast.
  static torch::Tensor Norm(const torch::nn::LayerNorm& norm, const torch::Tensor& x);

 private:
  const TensorParallel& tp_;
  const ContextParallel* cp_;  // the model's, or null
  int64_t num_heads_;  // this rank's query heads
  int64_t head_dim_;
  bool fused_attention_;  // ModelConfig::fused_attention
  torch::nn::LayerNorm ln_1_{nullptr};
  torch::nn::LayerNorm ln_2_{nullptr};
  std::shared_ptr<Conv1D> c_attn_;
  std::shared_ptr<Conv1D> attn_c_proj_;
  std::shared_ptr<Conv1D> c_fc_;
  std::shared_ptr<Conv1D> mlp_c_proj_;
};

// GPT-2 language model: transformer.{wte,wpe,h.N,ln_f}; the head is wte.weight (tied, so there is no
// separate lm_head.weight parameter, except as the copy a last pipeline stage keeps).
class Gpt2Model : public CausalLm {
 public:
  // config must pass ValidateModelConfig with arch kGpt2; tp.size() divides num_heads, ffn_size
  // and vocab_size (the padded vocabulary).
  // span: the pipeline stage to hold (CausalLm); blocks keep their global names.
  Gpt2Model(const ModelConfig& config, TensorParallel tp, StageSpan span = {});
  TpSplit TensorParallelSplit(const std::string& name) const override;
  std::vector<std::string> BlockOps() const override {
    return {"attn.c_attn", "attn.core", "attn.c_proj", "mlp.c_fc", "mlp.c_proj"};
  }
  std::string WordEmbeddingName() const override { return "transformer.wte.weight"; }

 protected:
  torch::Tensor ForwardChunk(const torch::Tensor& input, int chunk, const torch::Tensor& targets) override;
  std::string BlockPath(int64_t layer) const override;
  std::string AttentionCoreSuffix() const override { return ".attn.core"; }

 private:
  torch::nn::Embedding wte_{nullptr};
  torch::nn::Embedding wpe_{nullptr};
  std::vector<std::shared_ptr<Gpt2Block>> blocks_;  // blocks span.layer_begin … layer_end − 1
  torch::nn::LayerNorm ln_f_{nullptr};
  torch::Tensor head_copy_;  // lm_head.weight: a last stage's copy of wte (pipeline only)
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_GPT2_H_
