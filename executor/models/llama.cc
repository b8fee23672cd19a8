#include "executor/models/llama.h"

#include <torch/torch.h>

#include <cmath>

#include "absl/strings/match.h"
#include "checkpoint/expert_names.h"
#include "executor/models/moe/aux_loss.h"
#include "executor/models/ops/geglu.h"
#include "executor/models/ops/rms_norm.h"
#include "executor/models/ops/rotary.h"
#include "executor/models/ops/swiglu.h"
#include "executor/train/autocast.h"
#include "executor/train/kept_outputs.h"
#include "executor/train/recompute.h"
#include "executor/train/region_outputs.h"

namespace accel::exec {
namespace {

// The input several projections read, once in the matmuls' dtype and contiguous: each
// nn::Linear would otherwise make, and keep for backward, its own autocast copy (with bf16
// compute over fp32 parameters) or reshape copy (of a sequence-parallel gather's strided
// output), 3 copies for q/k/v and 2 for gate/up instead of 1.
torch::Tensor SharedMatmulInput(const torch::Tensor& x) {
  return x.to(AutocastMatmulDtype(x)).contiguous();
}

// The linear layer as block op `op`, its output kept when `recompute` says so.
torch::Tensor Project(const torch::nn::Linear& layer, const torch::Tensor& x, const BlockRecompute& recompute,
                      std::string_view op) {
  return KeptLinear(x, layer->weight, layer->bias, recompute.Keeps(op));
}

torch::nn::Linear NoBias(int64_t in, int64_t out) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(false));
}

// norm(x), or x where the block has no such norm.
torch::Tensor NormOr(const std::shared_ptr<RmsNormModule>& norm, const torch::Tensor& x) {
  return norm ? norm->Forward(x) : x;
}

// Inverse rotary frequencies theta^(-2i/d), i in [0, d/2), fp32.
torch::Tensor InverseFrequencies(double theta, int64_t d) {
  return torch::pow(theta, -torch::arange(0, d, 2, torch::kFloat64) / static_cast<double>(d)).to(torch::kFloat);
}

}  // namespace

RmsNormModule::RmsNormModule(int64_t hidden, double eps, bool unit_offset, Communicator* group)
    : eps_(eps), unit_offset_(unit_offset), group_(group) {
  weight_ = register_parameter("weight", unit_offset ? torch::zeros({hidden}) : torch::ones({hidden}));
}

torch::Tensor RmsNormModule::Forward(const torch::Tensor& x) {
  if (!unit_offset_) return RmsNormOverGroup(x, weight_, eps_, group_);
  // Gemma2RMSNorm: x̂·(1 + w) in fp32, then x's dtype.
  const at::ScalarType acc = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  return RmsNormOverGroup(x.to(acc), weight_.to(acc) + 1.0, eps_, group_).to(x.scalar_type());
}

LlamaBlock::LlamaBlock(const ModelConfig& config, const TensorParallel& tp, int64_t layer, ExpertParallel ep,
                       std::shared_ptr<MoeStepState> moe_state, const ContextParallel* cp)
    : tp_(tp),
      cp_(cp),
      num_heads_(config.num_heads / tp.size()),
      num_kv_heads_(config.num_kv_heads * KvHeadReplicas(config, tp.size()) / tp.size()),
      head_dim_(HeadDim(config)),
      fused_attention_(config.fused_attention) {
  const int64_t h = config.hidden_size;
  const int64_t q = num_heads_ * head_dim_;
  const int64_t kv = num_kv_heads_ * head_dim_;
  const int64_t ffn = config.ffn_size / tp.size();
  auto attn = register_module("self_attn", std::make_shared<torch::nn::Module>());
  auto qkv = [&](int64_t out) {
    return torch::nn::Linear(torch::nn::LinearOptions(h, out).bias(config.qkv_bias));
  };
  if (config.fused_projections) {
    qkv_proj_ = attn->register_module("qkv_proj", qkv(q + 2 * kv));
  } else {
    q_proj_ = attn->register_module("q_proj", qkv(q));
    k_proj_ = attn->register_module("k_proj", qkv(kv));
    v_proj_ = attn->register_module("v_proj", qkv(kv));
  }
  o_proj_ = attn->register_module("o_proj", NoBias(q, h));
  const bool offset = config.norm_unit_offset;
  if (config.qk_norm) {
    // Per head (Qwen3, Gemma 3), or over the whole projection, of which this rank holds its heads'
    // slice (OLMo 2).
    const bool full = config.qk_norm_full_width;
    Communicator* group = full ? tp.group.get() : nullptr;
    q_norm_ = attn->register_module(
        "q_norm", std::make_shared<RmsNormModule>(full ? q : head_dim_, config.norm_eps, offset, group));
    k_norm_ = attn->register_module(
        "k_norm", std::make_shared<RmsNormModule>(full ? kv : head_dim_, config.norm_eps, offset, group));
  }
  qk_norm_full_width_ = config.qk_norm_full_width;
  gelu_tanh_mlp_ = config.gelu_tanh_mlp;
  if (config.query_pre_attn_scalar > 0) scores_.scale = 1.0 / std::sqrt(config.query_pre_attn_scalar);
  scores_.softcap = config.attn_logit_softcapping;
  if (config.IsSlidingLayer(layer)) scores_.window = config.sliding_window;
  if (config.IsMoeLayer(layer)) {
    TORCH_CHECK(moe_state != nullptr, "a mixture-of-experts block needs the model's MoeStepState");
    moe_ = register_module("mlp", std::make_shared<MoeLayer>(config, ep, tp.size()));
    moe_state_ = std::move(moe_state);
    aux_loss_coef_ = config.moe.aux_loss_coef;
  } else {
    auto mlp = register_module("mlp", std::make_shared<torch::nn::Module>());
    if (config.fused_projections) {
      gate_up_proj_ = mlp->register_module("gate_up_proj", NoBias(h, 2 * ffn));
    } else {
      gate_proj_ = mlp->register_module("gate_proj", NoBias(h, ffn));
      up_proj_ = mlp->register_module("up_proj", NoBias(h, ffn));
    }
    down_proj_ = mlp->register_module("down_proj", NoBias(ffn, h));
  }
  auto norm = [&](const char* name) {
    return register_module(name, std::make_shared<RmsNormModule>(h, config.norm_eps, offset));
  };
  switch (config.block_norms) {
    case BlockNorms::kPre:
      attn_in_norm_ = norm("input_layernorm");
      mlp_in_norm_ = norm("post_attention_layernorm");
      break;
    case BlockNorms::kPost:
      attn_out_norm_ = norm("post_attention_layernorm");
      mlp_out_norm_ = norm("post_feedforward_layernorm");
      break;
    case BlockNorms::kPreAndPost:
      attn_in_norm_ = norm("input_layernorm");
      attn_out_norm_ = norm("post_attention_layernorm");
      mlp_in_norm_ = norm("pre_feedforward_layernorm");
      mlp_out_norm_ = norm("post_feedforward_layernorm");
      break;
  }
}

torch::Tensor LlamaBlock::Forward(const torch::Tensor& x, const torch::Tensor& cos,
                                  const torch::Tensor& sin, const BlockRecompute& recompute) {
  torch::Tensor n = SharedMatmulInput(EnterTensorParallel(NormOr(attn_in_norm_, x), tp_));
  const int64_t b = n.size(0);
  const int64_t t = n.size(1);
  // [b, t, count·d] to [b, count, t, d], through the head's norm (Qwen3) when there is one.
  auto heads = [&](const torch::Tensor& y, int64_t count, const std::shared_ptr<RmsNormModule>& norm = nullptr) {
    torch::Tensor split = y.view({b, t, count, head_dim_});
    return (norm ? norm->Forward(split) : split).transpose(1, 2);
  };
  torch::Tensor q, k, v;
  {
    // Scoped: the projections' outputs must not outlive their head views (rotary replaces q and k
    // below, freeing them), or they would add to every later transient of the block.
    auto [q_all, k_all, v_all] = ProjectQkv(n, recompute);
    if (qk_norm_full_width_) {
      q = heads(q_norm_->Forward(q_all), num_heads_);
      k = heads(k_norm_->Forward(k_all), num_kv_heads_);
    } else {
      q = heads(q_all, num_heads_, q_norm_);
      k = heads(k_all, num_kv_heads_, k_norm_);
    }
    v = heads(v_all, num_kv_heads_);
  }
  q = ApplyRotary(q, cos, sin);
  k = ApplyRotary(k, cos, sin);
  const ContextParallel* cp = exec::ActiveContext(cp_, is_training());
  torch::Tensor y = AttentionCore(q, k, v, fused_attention_, recompute, "self_attn.core", cp, scores_)
                        .transpose(1, 2)
                        .contiguous()
                        .view({b, t, -1});
  torch::Tensor residual =
      x + NormOr(attn_out_norm_, ExitTensorParallel(Project(o_proj_, y, recompute, "self_attn.o_proj"), tp_));
  torch::Tensor m = SharedMatmulInput(EnterTensorParallel(NormOr(mlp_in_norm_, residual), tp_));
  return residual + NormOr(mlp_out_norm_, ExitTensorParallel(Mlp(m, recompute), tp_));
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> LlamaBlock::ProjectQkv(const torch::Tensor& n,
                                                                              const BlockRecompute& recompute) {
  if (!qkv_proj_) {
    return {Project(q_proj_, n, recompute, "self_attn.q_proj"), Project(k_proj_, n, recompute, "self_attn.k_proj"),
            Project(v_proj_, n, recompute, "self_attn.v_proj")};
  }
  const int64_t q = num_heads_ * head_dim_, kv = num_kv_heads_ * head_dim_;
  const torch::Tensor fused = Project(qkv_proj_, n, recompute, "self_attn.qkv_proj");
  // q and k pass rotary, which writes new tensors; v is copied so that the fused output is freed.
  return {fused.narrow(-1, 0, q), fused.narrow(-1, q, kv), fused.narrow(-1, q + kv, kv).contiguous()};
}

torch::Tensor LlamaBlock::Gate(const torch::Tensor& gate, const torch::Tensor& up) const {
  return gelu_tanh_mlp_ ? GeGlu(gate, up) : SwiGlu(gate, up);
}

torch::Tensor LlamaBlock::Mlp(const torch::Tensor& m, const BlockRecompute& recompute) {
  if (gate_up_proj_) {
    // Phi-3: gate and up are the two halves of one projection; SwiGLU keeps both (one storage).
    const torch::Tensor gate_up = Project(gate_up_proj_, m, recompute, "mlp.gate_up_proj");
    const int64_t f = gate_up.size(-1) / 2;
    return Project(down_proj_, Gate(gate_up.narrow(-1, 0, f), gate_up.narrow(-1, f, f)), recompute, "mlp.down_proj");
  }
  if (moe_ == nullptr) {
    torch::Tensor gate = Project(gate_proj_, m, recompute, "mlp.gate_proj");
    torch::Tensor up = Project(up_proj_, m, recompute, "mlp.up_proj");
    return Project(down_proj_, Gate(gate, up), recompute, "mlp.down_proj");
  }
  MoeOutput out = moe_->Forward(m);
  // Training steps only (not sampling, which runs in eval mode), and a recompute's replay routes
  // the same tokens again: they are counted once.
  if (is_training() && !CurrentRegion().replay) moe_state_->Record(out.counts, out.aux_loss);
  // Every tp rank computes the same loss, and its gradient reaches the router's tp-summed
  // gradients (ir::Parameter.tp_partial_grad) and the tp-summed input gradient: 1/tp each.
  const double grad = aux_loss_coef_ * moe_state_->objective_scale() / static_cast<double>(tp_.size());
  return AttachAuxLoss(out.y, out.aux_loss, grad);
}

std::string LlamaModel::BlockPath(int64_t layer) const {
  return "model.layers." + std::to_string(layer);
}

TpSplit LlamaModel::TensorParallelSplit(const std::string& name) const {
  // nn.Linear weights are [out, in]: column-parallel splits dim 0, row-parallel dim 1.
  // Phi-3's fused projections first ("qkv_proj" ends like "v_proj", "gate_up_proj" like "up_proj"):
  // q, k, v (equal widths: num_kv_heads = num_heads under tp) and gate, up blocks, each split.
  if (absl::EndsWith(name, "qkv_proj.weight")) return {0, 3};
  if (absl::EndsWith(name, "gate_up_proj.weight")) return {0, 2};
  // OLMo 2's full-width q/k norms follow their projections' heads.
  if (config().qk_norm_full_width && absl::EndsWith(name, "q_norm.weight")) return {0, 1};
  if (config().qk_norm_full_width && absl::EndsWith(name, "k_norm.weight")) {
    return {0, 1, static_cast<int>(KvHeadReplicas(config(), tp_.size()))};
  }
  for (const char* kv : {"k_proj.weight", "v_proj.weight", "k_proj.bias", "v_proj.bias"}) {
    if (absl::EndsWith(name, kv)) return {0, 1, static_cast<int>(KvHeadReplicas(config(), tp_.size()))};
  }
  for (const char* column : {"q_proj.weight", "q_proj.bias", "gate_proj.weight", "up_proj.weight"}) {
    if (absl::EndsWith(name, column)) return {0, 1};
  }
  if (absl::EndsWith(name, "o_proj.weight") || absl::EndsWith(name, "down_proj.weight")) return {1, 1};
  // Grouped routed experts: gate/up [E, fe, h] split over fe, down [E, h, fe] too.
  if (const auto grouped = ParseGroupedExpert(name)) return {grouped->projection == "down_proj" ? 2 : 1, 1};
  if (name == "model.embed_tokens.weight" || name == "lm_head.weight") return {0, 1};
  return {};
}

std::pair<int64_t, int64_t> LlamaModel::LocalExperts() const {
  return ExpertParallel{ep_group_.get()}.LocalExperts(config_.moe.num_experts);
}

LlamaModel::LlamaModel(const ModelConfig& config, TensorParallel tp, StageSpan span,
                       std::shared_ptr<Communicator> ep_group)
    : CausalLm(config, std::move(tp), span), ep_group_(std::move(ep_group)) {
  if (config.moe.num_experts > 0) moe_state_ = std::make_shared<MoeStepState>();
  const int64_t vl = config.vocab_size / tp_.size();
  auto model = register_module("model", std::make_shared<torch::nn::Module>());
  if (span_.has_embedding) {
    embed_tokens_ =
        model->register_module("embed_tokens", torch::nn::Embedding(vl, config.hidden_size));
  }
  // Layers under their global index ("model.layers.5" on any stage), as ModuleList names them.
  auto list = model->register_module("layers", std::make_shared<torch::nn::Module>());
  for (int64_t i : HeldLayers()) {
    layers_.push_back(list->register_module(
        std::to_string(i), std::make_shared<LlamaBlock>(config, tp_, i, ExpertParallel{ep_group_.get()}, moe_state_, &cp_)));
  }
  if (span_.has_head) {
    norm_ = model->register_module(
        "norm", std::make_shared<RmsNormModule>(config.hidden_size, config.norm_eps, config.norm_unit_offset));
    // Untied, or tied on a stage without the embedding (its copy, ir::Parameter.tied_to).
    if (!config.tie_embeddings || !span_.has_embedding) {
      lm_head_ = register_module("lm_head", NoBias(config.hidden_size, vl));
    }
  }
  inv_freq_ = InverseFrequencies(config.rope_theta, HeadDim(config));
  if (config.rope_local_theta > 0) inv_freq_local_ = InverseFrequencies(config.rope_local_theta, HeadDim(config));
}

torch::Tensor LlamaModel::ForwardChunk(const torch::Tensor& whole_input, int chunk,
                                       const torch::Tensor& targets) {
  const torch::Tensor input = LocalInput(whole_input, chunk);
  const int64_t t = StageSequenceLength(input, chunk);
  torch::Tensor x = input;
  if (EmbedsInput(chunk)) {
    EnterUnit(0);
    x = ExitTensorParallel(VocabParallelEmbedding(input, embed_tokens_->weight, tp_), tp_);
    // Gemma: × √h rounded to the embeddings' dtype (transformers' normalizer).
    if (config_.embedding_scale > 0) x = x * torch::scalar_tensor(config_.embedding_scale, x.options());
    x = ExitUnit(0, x);
  }
  // Rotary tables in fp32 as Hugging Face computes them; ApplyRotary rotates in fp32 and returns
  // q's and k's dtype.
  // Context parallelism: the positions of this rank's chunks in the whole sequence.
  const ContextParallel* cp = ActiveContext();
  torch::Tensor positions =
      LocalPositions(t, cp != nullptr ? *cp : ContextParallel{}, torch::TensorOptions().device(input.device()))
          .to(torch::kFloat);
  auto tables = [&](const torch::Tensor& inv_freq) {
    torch::Tensor freqs = torch::outer(positions, inv_freq.to(input.device()));
    torch::Tensor emb = torch::cat({freqs, freqs}, -1);
    return std::pair<torch::Tensor, torch::Tensor>{emb.cos(), emb.sin()};
  };
  const auto [cos_global, sin_global] = tables(inv_freq_);
  // Gemma 3's sliding-window blocks rotate with their own base.
  const auto [cos_local, sin_local] =
      inv_freq_local_.defined() ? tables(inv_freq_local_) : std::pair<torch::Tensor, torch::Tensor>{};
  const auto [begin, end] = ChunkLayers(chunk);
  for (size_t j = ChunkOffset(chunk), i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i, ++j) {
    EnterUnit(static_cast<int>(i) + 1);
    const bool local = inv_freq_local_.defined() && config_.IsSlidingLayer(static_cast<int64_t>(i));
    const torch::Tensor& cos = local ? cos_local : cos_global;
    const torch::Tensor& sin = local ? sin_local : sin_global;
    // Captured by value: backward calls it again after Forward has returned.
    auto block = [l = layers_[j], cos, sin, r = BlockRecomputeOf(i)](const torch::Tensor& in) {
      return l->Forward(in, cos, sin, r);
    };
    x = ExitUnit(static_cast<int>(i) + 1, RecomputesBlock(i) ? Recompute(block, x) : block(x));
  }
  if (!HeadFollows(chunk)) return x;
  EnterUnit(HeadUnit());
  x = EnterTensorParallel(norm_->Forward(x), tp_);
  // A tied head reads embed_tokens, which the embeddings unit holds; under tensor parallelism
  // either head gives this rank's vocabulary columns.
  return ExitUnit(HeadUnit(), ApplyHead(x, lm_head_ ? lm_head_->weight : embed_tokens_->weight, targets));
}

}  // namespace accel::exec
