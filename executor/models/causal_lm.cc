#include "executor/models/causal_lm.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "checkpoint/expert_names.h"
#include "executor/communicator.h"
#include "executor/models/context/context_attention.h"
#include "executor/models/gpt2.h"
#include "executor/models/llama.h"
#include "executor/models/ops/chunked_cross_entropy.h"
#include "executor/train/kept_outputs.h"
#include "executor/train/recompute.h"

namespace accel::exec {

bool SdpaAvailable() { return TORCH_VERSION_MAJOR >= 2; }

namespace {

// Query i may not see key j: j > i, or j ≤ i − window when window > 0. [t, t] bool.
torch::Tensor HiddenKeys(int64_t t, int64_t window, const torch::Device& device) {
  const torch::Tensor ones = torch::ones({t, t}, torch::TensorOptions().dtype(torch::kBool).device(device));
  torch::Tensor hidden = ones.triu(/*diagonal=*/1);
  if (window > 0 && window < t) hidden.logical_or_(ones.tril(/*diagonal=*/-window));
  return hidden;
}

}  // namespace

torch::Tensor CausalAttention(const torch::Tensor& q_in, const torch::Tensor& k, const torch::Tensor& v,
                              bool fused, const AttentionScores& options) {
  TORCH_CHECK(k.size(1) > 0 && q_in.size(1) % k.size(1) == 0, "query heads ", q_in.size(1),
              " are not a multiple of key/value heads ", k.size(1));
  const int64_t group = q_in.size(1) / k.size(1);
  const double default_scale = 1.0 / std::sqrt(static_cast<double>(q_in.size(-1)));
  if (fused) {
    TORCH_CHECK(options.softcap == 0 && (options.window == 0 || options.window >= q_in.size(-2)),
                "the fused attention kernel has no score soft-capping and no sliding window");
    // A scale other than 1/sqrt(d) goes into q (LibTorch 1.13-2.0 SDPA has no scale argument).
    const torch::Tensor q = options.scale > 0 ? q_in * (options.scale / default_scale) : q_in;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
    return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, /*dropout_p=*/0.0,
                                            /*is_causal=*/true, /*scale=*/c10::nullopt,
                                            /*enable_gqa=*/group > 1);
#elif TORCH_VERSION_MAJOR >= 2
    // No enable_gqa before 2.5: the repeats are materialized (and kept) on this path only.
    return at::scaled_dot_product_attention(q, group > 1 ? k.repeat_interleave(group, 1) : k,
                                            group > 1 ? v.repeat_interleave(group, 1) : v,
                                            /*attn_mask=*/{}, /*dropout_p=*/0.0, /*is_causal=*/true);
#else
    TORCH_CHECK(false, "scaled_dot_product_attention needs LibTorch 2.0 or later");
#endif
  }
  // Grouped-query attention without repeating k and v: the `group` query heads that share a
  // key/value head are stacked along the rows, [b, kv, group·t, d], so one matmul per key/value
  // head serves them all and autograd keeps k and v once.
  const torch::Tensor& q = q_in;
  const int64_t b = q.size(0), heads = q.size(1), t = q.size(-2), d = q.size(-1);
  const double scale = options.scale > 0 ? options.scale : default_scale;
  const torch::Tensor grouped = q.reshape({b, k.size(1), group * t, d});
  torch::Tensor scores = torch::matmul(grouped, k.transpose(-2, -1)) * scale;
  // Gemma 2's soft cap: tanh keeps its output for backward (one more b·a·s² tensor).
  if (options.softcap > 0) scores = torch::tanh(scores / options.softcap) * options.softcap;
  const torch::Tensor hidden = HiddenKeys(t, options.window, q.device());
  scores = scores.view({b, k.size(1), group, t, t}).masked_fill(hidden, -std::numeric_limits<double>::infinity());
  torch::Tensor probs = torch::softmax(scores, -1).view({b, k.size(1), group * t, t});
  return torch::matmul(probs, v).view({b, heads, t, d});
}

torch::Tensor AttentionCore(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                            bool fused, const BlockRecompute& recompute, std::string_view op,
                            const ContextParallel* cp, const AttentionScores& scores) {
  TORCH_CHECK(cp == nullptr || (scores.scale == 0 && scores.softcap == 0 && scores.window == 0),
              "context-parallel attention has no score scale, soft-capping or sliding window");
  // The context's address is captured: a recompute replays the core during backward, while the
  // model (which owns it) is alive.
  auto core = [fused, cp, scores](const std::vector<torch::Tensor>& in) {
    if (cp != nullptr) return std::vector<torch::Tensor>{ContextParallelAttention(in[0], in[1], in[2], *cp, fused)};
    return std::vector<torch::Tensor>{CausalAttention(in[0], in[1], in[2], fused, scores)};
  };
  if (recompute.attention_core) return RecomputeMany(core, {q, k, v}).front();
  return KeptOutputs(core, {q, k, v}, recompute.Keeps(op)).front();
}

torch::Tensor CausalLm::Forward(const torch::Tensor& tokens) {
  TORCH_CHECK(span_.Whole(config_.num_layers), "Forward needs the whole model; this one holds blocks ",
              span_.layer_begin, "..", span_.layer_end - 1, " of a pipeline (use ForwardStage)");
  return ForwardStage(tokens);
}

torch::Tensor CausalLm::ForwardStage(const torch::Tensor& input, int chunk) {
  TORCH_CHECK(chunk >= 0 && chunk < span_.NumChunks(), "model chunk ", chunk, " of a stage with ",
              span_.NumChunks());
  return ForwardChunk(input, chunk, torch::Tensor());
}

torch::Tensor CausalLm::ForwardLoss(const torch::Tensor& input, int chunk, const torch::Tensor& targets) {
  TORCH_CHECK(chunk >= 0 && chunk < span_.NumChunks() && HeadFollows(chunk), "model chunk ", chunk,
              " of a stage with ", span_.NumChunks(), " is not followed by the head");
  TORCH_CHECK(targets.defined() && targets.dim() == 2, "targets must be [batch, seq]");
  return ForwardChunk(input, chunk, targets);
}

int64_t CausalLm::loss_chunks() const {
  if (loss_chunks_ > 0) return loss_chunks_;
  return DefaultLossChunks(config_.vocab_size / tp_.size(), config_.hidden_size);
}

torch::Tensor CausalLm::ApplyHead(const torch::Tensor& x, const torch::Tensor& weight,
                                  const torch::Tensor& targets) const {
  const double cap = config_.final_logit_softcapping;
  if (!targets.defined()) {
    torch::Tensor logits = torch::matmul(x, weight.t());
    return cap > 0 ? torch::tanh(logits / cap) * cap : logits;
  }
  // Context parallelism: the targets come whole; this rank's tokens are its chunks.
  const ContextParallel* cp = ActiveContext();
  const torch::Tensor local = cp != nullptr ? LocalChunks(targets, *cp) : targets;
  TORCH_CHECK(local.size(0) == x.size(0) && local.size(1) == x.size(1), "targets ", local.sizes(),
              " for hidden states ", x.sizes());
  return ChunkedCrossEntropy(x.reshape({-1, x.size(-1)}), weight, local.reshape({-1}), loss_chunks(), tp_, cap);
}

std::vector<int64_t> CausalLm::HeldLayers() const {
  std::vector<int64_t> layers;
  for (int c = 0; c < span_.NumChunks(); ++c) {
    const auto [begin, end] = ChunkLayers(c);
    for (int64_t l = begin; l < end; ++l) layers.push_back(l);
  }
  return layers;
}

size_t CausalLm::ChunkOffset(int chunk) const {
  size_t offset = 0;
  for (int c = 0; c < chunk; ++c) {
    const auto [begin, end] = ChunkLayers(c);
    offset += static_cast<size_t>(end - begin);
  }
  return offset;
}

torch::Tensor CausalLm::LocalInput(const torch::Tensor& input, int chunk) const {
  const ContextParallel* cp = ActiveContext();
  return cp != nullptr && EmbedsInput(chunk) ? LocalChunks(input, *cp) : input;
}

int64_t CausalLm::StageSequenceLength(const torch::Tensor& input, int chunk) const {
  if (EmbedsInput(chunk)) {
    TORCH_CHECK(input.dim() == 2, "tokens must be [batch, seq], got ", input.sizes());
    TORCH_CHECK(input.size(1) <= config_.max_seq_len, "sequence length ", input.size(1),
                " exceeds max_seq_len ", config_.max_seq_len);
    return input.size(1);
  }
  TORCH_CHECK(input.dim() == 3 && input.size(2) == config_.hidden_size,
              "hidden states must be [batch, seq, ", config_.hidden_size, "], got ", input.sizes());
  return input.size(1) * (tp_.sequence_sharded() ? tp_.size() : 1);
}

absl::Status CausalLm::SetRecomputeModules(const std::vector<std::string>& modules,
                                           const std::vector<std::string>& kept_outputs) {
  const size_t layers = static_cast<size_t>(config_.num_layers);
  std::map<std::string, std::pair<size_t, bool>> known;  // path -> (layer, is attention core)
  for (size_t l = 0; l < layers; ++l) {
    known[BlockPath(static_cast<int64_t>(l))] = {l, false};
    known[BlockPath(static_cast<int64_t>(l)) + AttentionCoreSuffix()] = {l, true};
  }
  std::vector<bool> blocks(layers, false), cores(layers, false);
  for (const std::string& module : modules) {
    auto it = known.find(module);
    if (it == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "recompute module ", module, " is not a block or attention core of this ",
          ModelArchName(config_.arch), " model (blocks ", BlockPath(0), " … ",
          BlockPath(config_.num_layers - 1), ")"));
    }
    (it->second.second ? cores : blocks)[it->second.first] = true;
  }
  const std::vector<std::string> ops = BlockOps();
  for (const std::string& op : kept_outputs) {
    if (std::find(ops.begin(), ops.end(), op) == ops.end()) {
      return absl::InvalidArgumentError(absl::StrCat("recompute kept output ", op, " is not an op of a ",
                                                     ModelArchName(config_.arch), " block (",
                                                     absl::StrJoin(ops, ", "), ")"));
    }
  }
  recompute_block_ = std::move(blocks);
  recompute_core_ = std::move(cores);
  kept_outputs_ = std::make_shared<const std::set<std::string, std::less<>>>(kept_outputs.begin(), kept_outputs.end());
  return absl::OkStatus();
}

BlockRecompute CausalLm::BlockRecomputeOf(size_t layer) const {
  BlockRecompute r;
  r.attention_core = layer < recompute_core_.size() && recompute_core_[layer];
  if (RecomputesBlock(layer)) r.kept_outputs = kept_outputs_;
  return r;
}

namespace {

std::shared_ptr<CausalLm> MakeModel(const ModelConfig& config, const TensorParallel& tp,
                                    const StageSpan& span = {}, std::shared_ptr<Communicator> ep_group = nullptr) {
  if (config.arch == ModelArch::kGpt2) return std::make_shared<Gpt2Model>(config, tp, span);
  return std::make_shared<LlamaModel>(config, tp, span, std::move(ep_group));
}


absl::Status CheckSpan(const ModelConfig& c, const StageSpan& span) {
  for (int chunk = 0; chunk < span.NumChunks(); ++chunk) {
    const auto [begin, end] = span.Chunk(chunk, c.num_layers);
    if (begin < 0 || end > c.num_layers || begin > end) {
      return absl::InvalidArgumentError(absl::StrCat("pipeline stage blocks [", begin, ", ", end,
                                                     ") are not within the model's ", c.num_layers));
    }
  }
  return absl::OkStatus();
}

void InitializeParameters(CausalLm& model, const ModelConfig& config, uint64_t seed) {
  torch::NoGradGuard no_grad;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  const double proj_std = 0.02 / std::sqrt(2.0 * static_cast<double>(config.num_layers));
  for (auto& item : model.named_parameters()) {
    const std::string& name = item.key();
    torch::Tensor& p = item.value();
    // LayerNorm and RMSNorm weights (q/k norms too): 1, or 0 where norms compute x̂·(1 + w) (Gemma).
    const bool is_norm = absl::StrContains(name, "ln_") || absl::StrContains(name, "layernorm") ||
                         absl::StrContains(name, ".norm.") || absl::StrContains(name, "_norm.");
    if (is_norm) {
      p.fill_(absl::EndsWith(name, ".bias") || config.norm_unit_offset ? 0.0 : 1.0);
    } else if (absl::EndsWith(name, ".bias")) {
      p.zero_();
    } else if (config.arch == ModelArch::kGpt2 && absl::EndsWith(name, "c_proj.weight")) {
      p.normal_(0.0, proj_std, gen);
    } else {
      p.normal_(0.0, 0.02, gen);
    }
  }
}

absl::Status CheckTensorParallelDegree(const ModelConfig& c, int64_t tp) {
  if (c.num_kv_heads % tp != 0 && KvHeadReplicas(c, tp) == 1) {
    return absl::InvalidArgumentError(absl::StrCat("tensor-parallel degree ", tp,
                                                   " neither divides model.num_kv_heads ", c.num_kv_heads,
                                                   " nor is a multiple of it"));
  }
  for (auto [name, value] : {std::pair<const char*, int64_t>{"num_heads", c.num_heads},
                             {"ffn_size", c.ffn_size},
                             {"vocab_size", c.vocab_size}}) {
    if (value % tp != 0) {
      return absl::InvalidArgumentError(absl::StrCat("tensor-parallel degree ", tp,
                                                     " does not divide model.", name, " ", value));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<CausalLm>> BuildCausalLm(const ModelConfig& config, uint64_t seed,
                                                        const TensorParallel& tp,
                                                        const ModelInitializer& initialize,
                                                        const StageSpan& span,
                                                        std::shared_ptr<Communicator> ep_group) {
  if (absl::Status s = ValidateModelConfig(config); !s.ok()) return s;
  if (absl::Status s = CheckTensorParallelDegree(config, tp.size()); !s.ok()) return s;
  if (absl::Status s = CheckSpan(config, span); !s.ok()) return s;
  const int64_t ep = ep_group == nullptr ? 1 : ep_group->Size();
  if (config.moe.num_experts > 0 && config.moe.num_experts % ep != 0) {
    return absl::InvalidArgumentError(absl::StrCat("expert-parallel degree ", ep,
                                                   " does not divide model.moe.num_experts ", config.moe.num_experts));
  }
  try {
    std::shared_ptr<CausalLm> full = MakeModel(config, TensorParallel{});
    InitializeParameters(*full, config, seed);
    if (!tp.enabled() && ep == 1 && span.Whole(config.num_layers)) {
      if (initialize) {
        if (absl::Status s = initialize(*full); !s.ok()) return s;
      }
      return full;
    }
    std::shared_ptr<CausalLm> model = MakeModel(config, tp, span, ep > 1 ? ep_group : nullptr);
    const auto [first_expert, end_expert] = model->LocalExperts();
    {
      torch::NoGradGuard no_grad;
      const auto whole = full->named_parameters();
      for (auto& item : model->named_parameters()) {
        // A tied head's copy (a stage without the embedding) starts as the word embedding.
        const torch::Tensor* source = whole.find(item.key());
        if (source == nullptr) source = whole.find(model->WordEmbeddingName());
        TORCH_CHECK(source != nullptr, "parameter ", item.key(), " is not in the whole model");
        torch::Tensor slice = TpSlice(*source, model->TensorParallelSplit(item.key()), tp.rank(), tp.size());
        if (ParseGroupedExpert(item.key())) slice = slice.narrow(0, first_expert, end_expert - first_expert);
        item.value().copy_(slice);
      }
    }
    full.reset();  // before the initializer, which may read a checkpoint
    // On the kept model, so that it reads only this rank's part (LoadPretrained).
    if (initialize) {
      if (absl::Status s = initialize(*model); !s.ok()) return s;
    }
    return model;
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("building ", ModelArchName(config.arch), " failed: ", e.what()));
  }
}

}  // namespace accel::exec
