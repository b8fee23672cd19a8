#include "executor/models/gpt2.h"

#include <torch/torch.h>

#include "executor/train/recompute.h"

namespace accel::exec {

Conv1D::Conv1D(int64_t in_features, int64_t out_features) {
  weight_ = register_parameter("weight", torch::zeros({in_features, out_features}));
  bias_ = register_parameter("bias", torch::zeros({out_features}));
}

torch::Tensor Conv1D::Forward(const torch::Tensor& x) {
  // matmul rather than addmm on a flattened view keeps autocast's dtype handling for both operands.
  return torch::matmul(x, weight_) + bias_;
}

Gpt2Block::Gpt2Block(const ModelConfig& config) : num_heads_(config.num_heads) {
  const int64_t h = config.hidden_size;
  auto ln_options = [&] {
    return torch::nn::LayerNormOptions({h}).eps(config.norm_eps).elementwise_affine(true);
  };
  ln_1_ = register_module("ln_1", torch::nn::LayerNorm(ln_options()));
  auto attn = register_module("attn", std::make_shared<torch::nn::Module>());
  c_attn_ = attn->register_module("c_attn", std::make_shared<Conv1D>(h, 3 * h));
  attn_c_proj_ = attn->register_module("c_proj", std::make_shared<Conv1D>(h, h));
  ln_2_ = register_module("ln_2", torch::nn::LayerNorm(ln_options()));
  auto mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
  c_fc_ = mlp->register_module("c_fc", std::make_shared<Conv1D>(h, config.ffn_size));
  mlp_c_proj_ = mlp->register_module("c_proj", std::make_shared<Conv1D>(config.ffn_size, h));
}

torch::Tensor Gpt2Block::Forward(const torch::Tensor& x, bool recompute_attention_core) {
  const int64_t b = x.size(0);
  const int64_t t = x.size(1);
  const int64_t h = x.size(2);
  const int64_t d = h / num_heads_;
  std::vector<torch::Tensor> qkv = c_attn_->Forward(ln_1_->forward(x)).split(h, -1);
  auto heads = [&](const torch::Tensor& y) { return y.view({b, t, num_heads_, d}).transpose(1, 2); };
  torch::Tensor y =
      AttentionCore(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), recompute_attention_core);
  y = y.transpose(1, 2).contiguous().view({b, t, h});
  torch::Tensor residual = x + attn_c_proj_->Forward(y);
  torch::Tensor m = torch::gelu(c_fc_->Forward(ln_2_->forward(residual)), "tanh");
  return residual + mlp_c_proj_->Forward(m);
}

std::string Gpt2Model::BlockPath(int64_t layer) const {
  return "transformer.h." + std::to_string(layer);
}

Gpt2Model::Gpt2Model(const ModelConfig& config) : CausalLm(config) {
  const int64_t h = config.hidden_size;
  auto transformer = register_module("transformer", std::make_shared<torch::nn::Module>());
  wte_ = transformer->register_module("wte", torch::nn::Embedding(config.vocab_size, h));
  wpe_ = transformer->register_module("wpe", torch::nn::Embedding(config.max_seq_len, h));
  auto list = transformer->register_module("h", torch::nn::ModuleList());
  for (int64_t i = 0; i < config.num_layers; ++i) {
    blocks_.push_back(std::make_shared<Gpt2Block>(config));
    list->push_back(blocks_.back());
  }
  ln_f_ = transformer->register_module(
      "ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({h}).eps(config.norm_eps)));
}

torch::Tensor Gpt2Model::Forward(const torch::Tensor& tokens) {
  TORCH_CHECK(tokens.dim() == 2, "tokens must be [batch, seq], got ", tokens.sizes());
  const int64_t t = tokens.size(1);
  TORCH_CHECK(t <= config_.max_seq_len, "sequence length ", t, " exceeds max_seq_len ",
              config_.max_seq_len);
  torch::Tensor positions = torch::arange(t, tokens.options().dtype(torch::kLong));
  EnterUnit(0);
  torch::Tensor x = ExitUnit(0, wte_->forward(tokens) + wpe_->forward(positions).unsqueeze(0));
  for (size_t i = 0; i < blocks_.size(); ++i) {
    EnterUnit(static_cast<int>(i) + 1);
    const bool core = RecomputesAttentionCore(i);
    // Captured by value: backward calls it again after Forward has returned.
    auto block = [b = blocks_[i], core](const torch::Tensor& in) { return b->Forward(in, core); };
    x = ExitUnit(static_cast<int>(i) + 1, RecomputesBlock(i) ? Recompute(block, x) : block(x));
  }
  EnterUnit(HeadUnit());
  x = ln_f_->forward(x);
  // The head is tied to wte, which the embeddings unit holds.
  return ExitUnit(HeadUnit(), torch::matmul(x, wte_->weight.t()));
}

}  // namespace accel::exec
