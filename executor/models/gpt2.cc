#include "executor/models/gpt2.h"

#include <torch/torch.h>

#include "absl/strings/match.h"
#include "executor/models/ops/gelu.h"
#include "executor/models/ops/layer_norm.h"
#include "executor/train/kept_outputs.h"
#include "executor/train/recompute.h"

namespace accel::exec {

Conv1D::Conv1D(int64_t in_features, int64_t out_features) {
  weight_ = register_parameter("weight", torch::zeros({in_features, out_features}));
  bias_ = register_parameter("bias", torch::zeros({out_features}));
}

torch::Tensor Conv1D::Forward(const torch::Tensor& x, bool keep) {
  torch::Tensor y = Project(x, keep);
  // The bias in the product's dtype: under autocast the output stays bf16 (an fp32 bias would
  // promote it, and the next op would keep the fp32 copy).
  return y + bias_.to(y.scalar_type());
}

torch::Tensor Conv1D::Project(const torch::Tensor& x, bool keep) {
  // x·W as torch::matmul under autocast, keeping the weight itself for backward (ops/linear.h).
  return KeptMatmul(x, weight_, keep);
}

Gpt2Block::Gpt2Block(const ModelConfig& config, const TensorParallel& tp, const ContextParallel* cp)
    : tp_(tp),
      cp_(cp),
      num_heads_(config.num_heads / tp.size()),
      head_dim_(config.hidden_size / config.num_heads),
      fused_attention_(config.fused_attention) {
  const int64_t h = config.hidden_size;
  const int64_t hl = h / tp.size();
  const int64_t fl = config.ffn_size / tp.size();
  auto ln_options = [&] {
    return torch::nn::LayerNormOptions({h}).eps(config.norm_eps).elementwise_affine(true);
  };
  ln_1_ = register_module("ln_1", torch::nn::LayerNorm(ln_options()));
  auto attn = register_module("attn", std::make_shared<torch::nn::Module>());
  c_attn_ = attn->register_module("c_attn", std::make_shared<Conv1D>(h, 3 * hl));
  attn_c_proj_ = attn->register_module("c_proj", std::make_shared<Conv1D>(hl, h));
  ln_2_ = register_module("ln_2", torch::nn::LayerNorm(ln_options()));
  auto mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
  c_fc_ = mlp->register_module("c_fc", std::make_shared<Conv1D>(h, fl));
  mlp_c_proj_ = mlp->register_module("c_proj", std::make_shared<Conv1D>(fl, h));
}

torch::Tensor Gpt2Block::Norm(const torch::nn::LayerNorm& norm, const torch::Tensor& x) {
  return LayerNorm(x, norm->weight, norm->bias, norm->options.eps());
}

torch::Tensor Gpt2Block::Forward(const torch::Tensor& x, const BlockRecompute& recompute) {
  torch::Tensor a = EnterTensorParallel(Norm(ln_1_, x), tp_);  // [b, t, h], every position
  const int64_t b = a.size(0);
  const int64_t t = a.size(1);
  const int64_t d = head_dim_;
  const int64_t hl = num_heads_ * d;  // this rank's heads' width
  std::vector<torch::Tensor> qkv = c_attn_->Forward(a, recompute.Keeps("attn.c_attn")).split(hl, -1);
  auto heads = [&](const torch::Tensor& y) { return y.view({b, t, num_heads_, d}).transpose(1, 2); };
  torch::Tensor y =
      AttentionCore(heads(qkv[0]), heads(qkv[1]), heads(qkv[2]), fused_attention_, recompute, "attn.core",
                    exec::ActiveContext(cp_, is_training()));
  y = y.transpose(1, 2).contiguous().view({b, t, hl});
  torch::Tensor residual =
      x + (ExitTensorParallel(attn_c_proj_->Project(y, recompute.Keeps("attn.c_proj")), tp_) + attn_c_proj_->bias());
  torch::Tensor m =
      Gelu(c_fc_->Forward(EnterTensorParallel(Norm(ln_2_, residual), tp_), recompute.Keeps("mlp.c_fc")));
  return residual +
         (ExitTensorParallel(mlp_c_proj_->Project(m, recompute.Keeps("mlp.c_proj")), tp_) + mlp_c_proj_->bias());
}

std::string Gpt2Model::BlockPath(int64_t layer) const {
  return "transformer.h." + std::to_string(layer);
}

TpSplit Gpt2Model::TensorParallelSplit(const std::string& name) const {
  // Conv1D weights are [in, out]: column-parallel splits dim 1, row-parallel dim 0; c_attn's
  // output is q, k and v laid end to end, each split by heads.
  if (absl::EndsWith(name, "attn.c_attn.weight")) return {1, 3};
  if (absl::EndsWith(name, "attn.c_attn.bias")) return {0, 3};
  if (absl::EndsWith(name, "mlp.c_fc.weight")) return {1, 1};
  if (absl::EndsWith(name, "mlp.c_fc.bias")) return {0, 1};
  if (absl::EndsWith(name, "c_proj.weight")) return {0, 1};
  if (name == "transformer.wte.weight" || name == "lm_head.weight") return {0, 1};
  return {};
}

Gpt2Model::Gpt2Model(const ModelConfig& config, TensorParallel tp, StageSpan span)
    : CausalLm(config, std::move(tp), span) {
  const int64_t h = config.hidden_size;
  const int64_t vl = config.vocab_size / tp_.size();
  auto transformer = register_module("transformer", std::make_shared<torch::nn::Module>());
  if (span_.has_embedding) {
    wte_ = transformer->register_module("wte", torch::nn::Embedding(vl, h));
    wpe_ = transformer->register_module("wpe", torch::nn::Embedding(config.max_seq_len, h));
  }
  // Blocks under their global index ("transformer.h.5" on any stage), as ModuleList names them.
  auto list = transformer->register_module("h", std::make_shared<torch::nn::Module>());
  for (int64_t i : HeldLayers()) {
    blocks_.push_back(list->register_module(std::to_string(i), std::make_shared<Gpt2Block>(config, tp_, &cp_)));
  }
  if (span_.has_head) {
    ln_f_ = transformer->register_module(
        "ln_f", torch::nn::LayerNorm(torch::nn::LayerNormOptions({h}).eps(config.norm_eps)));
    if (!span_.has_embedding) {
      auto lm_head = register_module("lm_head", std::make_shared<torch::nn::Module>());
      head_copy_ = lm_head->register_parameter("weight", torch::empty({vl, h}));
    }
  }
}

torch::Tensor Gpt2Model::ForwardChunk(const torch::Tensor& whole_input, int chunk,
                                       const torch::Tensor& targets) {
  const torch::Tensor input = LocalInput(whole_input, chunk);
  const int64_t t = StageSequenceLength(input, chunk);
  torch::Tensor x = input;
  if (EmbedsInput(chunk)) {
    // Context parallelism: the positions of this rank's chunks in the whole sequence.
    const ContextParallel* cp = ActiveContext();
    torch::Tensor positions = LocalPositions(t, cp != nullptr ? *cp : ContextParallel{}, input.options());
    EnterUnit(0);
    if (tp_.sequence_sharded()) {
      // Each rank adds the positions of its own sequence chunk (ExitTensorParallel scatters seq).
      positions = positions.narrow(0, tp_.rank() * (t / tp_.size()), t / tp_.size());
    }
    torch::Tensor tok = ExitTensorParallel(VocabParallelEmbedding(input, wte_->weight, tp_), tp_);
    x = ExitUnit(0, tok + wpe_->forward(positions).unsqueeze(0));
  }
  const auto [begin, end] = ChunkLayers(chunk);
  for (size_t j = ChunkOffset(chunk), i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i, ++j) {
    EnterUnit(static_cast<int>(i) + 1);
    // Captured by value: backward calls it again after Forward has returned.
    auto block = [b = blocks_[j], r = BlockRecomputeOf(i)](const torch::Tensor& in) { return b->Forward(in, r); };
    x = ExitUnit(static_cast<int>(i) + 1, RecomputesBlock(i) ? Recompute(block, x) : block(x));
  }
  if (!HeadFollows(chunk)) return x;
  EnterUnit(HeadUnit());
  x = EnterTensorParallel(Gpt2Block::Norm(ln_f_, x), tp_);
  // The head is tied to wte, which the embeddings unit holds (or its copy on a last pipeline
  // stage); under tensor parallelism it gives this rank's vocabulary columns.
  const torch::Tensor& head = span_.has_embedding ? wte_->weight : head_copy_;
  return ExitUnit(HeadUnit(), ApplyHead(x, head, targets));
}

}  // namespace accel::exec
