#include "planner/model_params.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/ceil_div.h"
#include "ir/plan_access.h"
#include "planner/ir_enums.h"
#include "planner/moe_layers.h"
#include "planner/recompute_policy.h"

namespace accel::planner {
namespace {

// Resolved dimensions with the documented defaults applied once.
struct Dims {
  bool gpt2 = true;
  int64_t h = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0;
  int64_t vocab = 0, positions = 0;
  bool tied = true, qkv_bias = false, qk_norm = false;
  bool qk_norm_full_width = false;  // OLMo 2: q_norm [a·d], k_norm [kv·d]
  int64_t block_norms = 2;          // RMSNorms [h] per block (Gemma: 4)
};

}  // namespace

bool FusedProjections(const ir::Model& model) {
  return model.arch() == ir::ARCHITECTURE_LLAMA && model.model_type() == "phi3";
}

namespace {

Dims ResolveDims(const ir::Model& m) {
  Dims d;
  d.gpt2 = m.arch() != ir::ARCHITECTURE_LLAMA;
  d.h = m.hidden_size();
  d.layers = m.num_layers();
  d.heads = m.num_heads();
  d.kv_heads = ir::KvHeads(m);
  d.head_dim = m.head_dim() > 0 ? m.head_dim() : (m.num_heads() > 0 ? m.hidden_size() / m.num_heads() : 0);
  d.ffn = ir::FfnSize(m);
  d.vocab = m.vocab_size();
  d.positions = m.max_seq_len();
  d.tied = m.tie_word_embeddings();
  d.qkv_bias = m.qkv_bias();
  d.qk_norm = m.qk_norm();
  d.qk_norm_full_width = m.qk_norm_full_width();
  d.block_norms = m.norm_placement() == ir::NORM_PLACEMENT_PRE_AND_POST ? 4 : 2;
  return d;
}

// Builds one entry. A split dimension keeps ceil(size / tp) rows per rank, so uneven splits
// (which validate-spec rejects for heads) still never undercount.
ParamInfo Make(std::string name, std::vector<int64_t> shape, int tp_dim, int64_t tp) {
  ParamInfo p;
  p.name = std::move(name);
  p.count = 1;
  for (int64_t s : shape) p.count *= s;
  p.tp_dim = tp_dim;
  p.local_count = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    p.local_count *= static_cast<int>(i) == tp_dim ? CeilDiv(shape[i], tp) : shape[i];
  }
  p.shape = std::move(shape);
  return p;
}

// A key/value projection [kv·d, h] or its bias [kv·d]: split over tp like any column-parallel
// tensor, or, with `replicas` R > 1, cut into tp / R slices of one head each (tp rank r holding
// slice r div R).
ParamInfo MakeKv(std::string name, std::vector<int64_t> shape, int64_t tp, int64_t replicas) {
  ParamInfo p = Make(std::move(name), std::move(shape), 0, tp / replicas);
  p.tp_replicas = static_cast<int>(replicas);
  return p;
}

// Parameters of the q/k norms: per head, [d] each, shared by the heads tp splits (each rank's
// gradient is its heads' part); OLMo 2's full-width [a·d] and [kv·d], split with the heads (k's
// as the key/value heads are).
void AddQkNorms(const std::string& p, const Dims& d, int64_t tp, int64_t replicas, std::vector<ParamInfo>& block) {
  if (d.qk_norm_full_width) {
    block.push_back(Make(p + "self_attn.q_norm.weight", {d.heads * d.head_dim}, 0, tp));
    block.push_back(MakeKv(p + "self_attn.k_norm.weight", {d.kv_heads * d.head_dim}, tp, replicas));
    return;
  }
  for (const char* norm : {"self_attn.q_norm.weight", "self_attn.k_norm.weight"}) {
    ParamInfo param = Make(p + norm, {d.head_dim}, -1, tp);
    param.tp_partial_grad = tp > 1;
    block.push_back(param);
  }
}

// A vocabulary-parallel tensor [V, h]: the full count uses V, the per-rank count the padded
// rows (Megatron's VocabParallelEmbedding and the column-parallel output layer).
ParamInfo MakeVocab(std::string name, int64_t vocab, int64_t padded, int64_t h, int64_t tp) {
  ParamInfo p = Make(std::move(name), {vocab, h}, 0, tp);
  p.local_count = padded / tp * h;
  return p;
}

// Phi-3's block (FusedProjections): fused qkv_proj and gate_up_proj, column-parallel as 3 and 2
// equal blocks, o_proj and down_proj row-parallel, and the two norms.
void AddFusedPhi3Block(const std::string& p, const Dims& d, int64_t tp, std::vector<ParamInfo>& block) {
  const int64_t q_out = d.heads * d.head_dim, kv_out = d.kv_heads * d.head_dim;
  block.push_back(Make(p + "self_attn.qkv_proj.weight", {q_out + 2 * kv_out, d.h}, 0, tp));
  block.back().tp_parts = 3;
  block.push_back(Make(p + "self_attn.o_proj.weight", {d.h, q_out}, 1, tp));
  block.push_back(Make(p + "mlp.gate_up_proj.weight", {2 * d.ffn, d.h}, 0, tp));
  block.back().tp_parts = 2;
  block.push_back(Make(p + "mlp.down_proj.weight", {d.h, d.ffn}, 1, tp));
  block.push_back(Make(p + "input_layernorm.weight", {d.h}, -1, tp));
  block.push_back(Make(p + "post_attention_layernorm.weight", {d.h}, -1, tp));
}

// A SwiGLU MLP of inner width `ffn`: {prefix}{gate,up}_proj.weight [ffn, h] column-parallel,
// {prefix}down_proj.weight [h, ffn] row-parallel.
void AddSwiGlu(const std::string& prefix, int64_t ffn, int64_t h, int64_t tp,
               std::vector<ParamInfo>& block) {
  block.push_back(Make(prefix + "gate_proj.weight", {ffn, h}, 0, tp));
  block.push_back(Make(prefix + "up_proj.weight", {ffn, h}, 0, tp));
  block.push_back(Make(prefix + "down_proj.weight", {h, ffn}, 1, tp));
}

// The MLP of an MoE block (ir::MixtureOfExperts): the router mlp.gate.weight [E, h], whole on
// every tp rank; the grouped routed experts mlp.experts.{gate,up}_proj [E, fe, h] and
// mlp.experts.down_proj [E, h, fe], fe split over tp like the dense MLP's (torchtitan's expert
// tensor parallel = tp) and E over ep (each rank holds E / ep experts); the shared experts as one
// SwiGLU of width num_shared · shared_ffn and their gate mlp.shared_expert_gate.weight [1, h].
void AddMoeMlp(const ir::Model& model, const std::string& p, int64_t tp,
               std::vector<ParamInfo>& block) {
  const ir::MixtureOfExperts& moe = model.moe();
  const int64_t h = model.hidden_size(), experts = moe.num_experts(), fe = moe.expert_ffn_size();
  const int64_t ep = ExpertParallel(model);
  // The router and the shared gate weight tp-partial expert outputs (ir::Parameter.tp_partial_grad).
  auto partial = [tp](ParamInfo param) {
    param.tp_partial_grad = tp > 1;
    return param;
  };
  block.push_back(partial(Make(p + "mlp.gate.weight", {experts, h}, -1, tp)));
  auto routed = [&](const char* name, std::vector<int64_t> shape, int tp_dim) {
    ParamInfo param = Make(p + "mlp.experts." + name, std::move(shape), tp_dim, tp);
    param.local_count = param.local_count / experts * CeilDiv(experts, ep);
    param.routed_expert = true;
    block.push_back(std::move(param));
  };
  routed("gate_proj", {experts, fe, h}, 1);
  routed("up_proj", {experts, fe, h}, 1);
  routed("down_proj", {experts, h, fe}, 2);
  if (moe.num_shared_experts() > 0) {
    AddSwiGlu(p + "mlp.shared_expert.", moe.num_shared_experts() * moe.shared_expert_ffn_size(), h,
              tp, block);
  }
  if (moe.shared_expert_gate()) {
    block.push_back(partial(Make(p + "mlp.shared_expert_gate.weight", {1, h}, -1, tp)));
  }
}

// Mixture-of-experts counts of a finished table: the routed experts' parameters, those a token
// does not use (E − k of E in every MoE block), an MoE block's and a dense block's counts.
void SetMoeCounts(const ir::Model& model, const ModelParams& table, ir::ParameterCount& c) {
  if (!HasMoe(model)) return;
  const ir::MixtureOfExperts& moe = model.moe();
  int64_t routed = 0;
  for (size_t l = 0; l < table.layers.size(); ++l) {
    for (const ParamInfo& p : table.layers[l]) routed += p.routed_expert ? p.count : 0;
    const int64_t count = FullCount(table.layers[l]);
    if (IsMoeBlock(model, static_cast<int64_t>(l))) {
      c.set_per_layer_count(count);
    } else {
      c.set_dense_per_layer_count(count);
    }
  }
  c.set_routed_expert_count(routed);
  const int64_t unused = routed / moe.num_experts() * (moe.num_experts() - moe.experts_per_token());
  c.set_active_count(c.total_count() - unused);
}

}  // namespace

int64_t PaddedVocabSize(int64_t vocab_size, int64_t tp) {
  const int64_t multiple = 128 * std::max<int64_t>(tp, 1);
  return CeilDiv(vocab_size, multiple) * multiple;
}

std::string BlockModulePath(const ir::Model& model, int64_t layer) {
  const bool llama = model.arch() == ir::ARCHITECTURE_LLAMA;
  return (llama ? "model.layers." : "transformer.h.") + std::to_string(layer);
}

std::vector<std::string> RecomputeModules(const ir::Model& model, ir::Recompute mode) {
  std::vector<std::string> modules;
  if (mode != ir::RECOMPUTE_FULL && mode != ir::RECOMPUTE_OP && mode != ir::RECOMPUTE_SELECTIVE) return modules;
  const bool llama = model.arch() == ir::ARCHITECTURE_LLAMA;
  const std::string core = mode != ir::RECOMPUTE_SELECTIVE ? "" : llama ? ".self_attn.core" : ".attn.core";
  for (int64_t l = 0; l < model.num_layers(); ++l) modules.push_back(BlockModulePath(model, l) + core);
  return modules;
}

std::vector<std::string> RecomputeKeptOutputs(const ir::Model& model, ir::Recompute mode) {
  if (mode != ir::RECOMPUTE_OP) return {};
  return OpPolicyKeptOutputs(model.arch() != ir::ARCHITECTURE_LLAMA);
}

ModelParams BuildModelParams(const ir::Model& model, int64_t tp) {
  tp = std::max<int64_t>(tp, 1);
  const Dims d = ResolveDims(model);
  int64_t padded = model.padded_vocab_size();
  if (padded < d.vocab || padded % tp != 0) padded = PaddedVocabSize(d.vocab, tp);

  ModelParams out;
  const int64_t h = d.h;
  if (d.gpt2) {
    out.embedding.push_back(MakeVocab("transformer.wte.weight", d.vocab, padded, h, tp));
    // Megatron keeps learned position embeddings whole on every tp rank.
    out.embedding.push_back(Make("transformer.wpe.weight", {d.positions, h}, -1, tp));
    for (int64_t l = 0; l < d.layers; ++l) {
      const std::string p = BlockModulePath(model, l) + ".";
      std::vector<ParamInfo> block;
      block.push_back(Make(p + "ln_1.weight", {h}, -1, tp));
      block.push_back(Make(p + "ln_1.bias", {h}, -1, tp));
      // Conv1D weights are [in, out]: column-parallel splits dim 1, row-parallel dim 0.
      block.push_back(Make(p + "attn.c_attn.weight", {h, 3 * h}, 1, tp));
      block.back().tp_parts = 3;
      block.push_back(Make(p + "attn.c_attn.bias", {3 * h}, 0, tp));
      block.back().tp_parts = 3;
      block.push_back(Make(p + "attn.c_proj.weight", {h, h}, 0, tp));
      block.push_back(Make(p + "attn.c_proj.bias", {h}, -1, tp));
      block.push_back(Make(p + "ln_2.weight", {h}, -1, tp));
      block.push_back(Make(p + "ln_2.bias", {h}, -1, tp));
      block.push_back(Make(p + "mlp.c_fc.weight", {h, d.ffn}, 1, tp));
      block.push_back(Make(p + "mlp.c_fc.bias", {d.ffn}, 0, tp));
      block.push_back(Make(p + "mlp.c_proj.weight", {d.ffn, h}, 0, tp));
      block.push_back(Make(p + "mlp.c_proj.bias", {h}, -1, tp));
      out.layers.push_back(std::move(block));
    }
    out.head.push_back(Make("transformer.ln_f.weight", {h}, -1, tp));
    out.head.push_back(Make("transformer.ln_f.bias", {h}, -1, tp));
  } else {
    out.embedding.push_back(MakeVocab("model.embed_tokens.weight", d.vocab, padded, h, tp));
    const int64_t q_out = d.heads * d.head_dim;
    const int64_t kv_out = d.kv_heads * d.head_dim;
    const int64_t replicas = ir::KvHeadReplicas(d.kv_heads, tp);
    for (int64_t l = 0; l < d.layers; ++l) {
      const std::string p = BlockModulePath(model, l) + ".";
      std::vector<ParamInfo> block;
      // nn.Linear weights are [out, in]: column-parallel splits dim 0, row-parallel dim 1.
      if (FusedProjections(model)) {
        AddFusedPhi3Block(p, d, tp, block);
        out.layers.push_back(std::move(block));
        continue;
      }
      block.push_back(Make(p + "self_attn.q_proj.weight", {q_out, h}, 0, tp));
      if (d.qkv_bias) block.push_back(Make(p + "self_attn.q_proj.bias", {q_out}, 0, tp));
      block.push_back(MakeKv(p + "self_attn.k_proj.weight", {kv_out, h}, tp, replicas));
      if (d.qkv_bias) block.push_back(MakeKv(p + "self_attn.k_proj.bias", {kv_out}, tp, replicas));
      block.push_back(MakeKv(p + "self_attn.v_proj.weight", {kv_out, h}, tp, replicas));
      if (d.qkv_bias) block.push_back(MakeKv(p + "self_attn.v_proj.bias", {kv_out}, tp, replicas));
      block.push_back(Make(p + "self_attn.o_proj.weight", {h, q_out}, 1, tp));
      if (d.qk_norm) AddQkNorms(p, d, tp, replicas, block);
      if (IsMoeBlock(model, l)) {
        AddMoeMlp(model, p, tp, block);
      } else {
        AddSwiGlu(p + "mlp.", d.ffn, h, tp, block);
      }
      for (const std::string& norm : BlockNormNames(model)) block.push_back(Make(p + norm + ".weight", {h}, -1, tp));
      out.layers.push_back(std::move(block));
    }
    out.head.push_back(Make("model.norm.weight", {h}, -1, tp));
  }
  if (!d.tied) out.head.push_back(MakeVocab("lm_head.weight", d.vocab, padded, h, tp));

  // Counts from the table itself, so the closed form is checked against it in tests.
  ir::ParameterCount& c = out.counts;
  c.set_embedding_count(out.embedding.front().count);
  c.set_position_embedding_count(d.gpt2 ? out.embedding.back().count : 0);
  c.set_per_layer_count(out.layers.empty() ? 0 : FullCount(out.layers.front()));
  int64_t layers_total = 0;
  for (const auto& block : out.layers) layers_total += FullCount(block);
  c.set_layers_count(layers_total);
  c.set_final_norm_count(d.gpt2 ? 2 * h : h);
  c.set_lm_head_count(d.tied ? 0 : d.vocab * h);
  c.set_total_count(FullCount(out.embedding) + layers_total + FullCount(out.head));
  SetMoeCounts(model, out, c);
  return out;
}

const ModelParams& ModelParamsCache::Get(const ir::Model& model, int64_t tp) {
  tp = std::max<int64_t>(tp, 1);
  std::string key = model.SerializeAsString();
  std::lock_guard<std::mutex> lock(mu_);
  for (const std::unique_ptr<Entry>& e : entries_) {
    if (e->tp == tp && e->model == key) return e->params;
  }
  // Built under the lock: a search asks for a handful of tensor degrees, each once.
  entries_.push_back(
      std::make_unique<Entry>(Entry{std::move(key), tp, BuildModelParams(model, tp)}));
  return entries_.back()->params;
}

namespace {

// Closed-form mixture-of-experts counts: an MoE block is `attention` (everything but the MLP)
// + router E·h + routed experts 3·E·h·fe + shared 3·h·S·fs (+ h with the shared gate); a dense
// block keeps the dense MLP's 3·h·ffn. Sets the block counts and layers_count; active_count and
// routed_expert_count follow once total_count is known (CountParameters).
void CountMoeBlocks(const ir::Model& model, int64_t attention, ir::ParameterCount& c) {
  const ir::MixtureOfExperts& moe = model.moe();
  const int64_t h = model.hidden_size(), e = moe.num_experts();
  const int64_t routed = 3 * e * h * moe.expert_ffn_size();
  const int64_t shared = 3 * h * moe.num_shared_experts() * moe.shared_expert_ffn_size() +
                         (moe.shared_expert_gate() ? h : 0);
  const int64_t moe_block = attention + e * h + routed + shared;
  const int64_t dense_block = attention + 3 * h * ir::FfnSize(model);
  const int64_t moe_blocks = MoeBlocksIn(model, 0, model.num_layers());
  const int64_t dense_blocks = model.num_layers() - moe_blocks;
  c.set_per_layer_count(moe_block);
  c.set_dense_per_layer_count(dense_blocks > 0 ? dense_block : 0);
  c.set_layers_count(moe_blocks * moe_block + dense_blocks * dense_block);
  c.set_routed_expert_count(moe_blocks * routed);
}

}  // namespace

ir::ParameterCount CountParameters(const ir::Model& model) {
  const Dims d = ResolveDims(model);
  const int64_t h = d.h;
  ir::ParameterCount c;
  c.set_embedding_count(d.vocab * h);
  int64_t block = 0;
  if (d.gpt2) {
    c.set_position_embedding_count(d.positions * h);
    // c_attn 3h²+3h, c_proj h²+h, c_fc h·f+f, mlp c_proj f·h+h, two LayerNorms 4h.
    block = 4 * h * h + 2 * h * d.ffn + d.ffn + 9 * h;
    c.set_final_norm_count(2 * h);
  } else {
    c.set_position_embedding_count(0);
    const int64_t q_out = d.heads * d.head_dim;
    const int64_t kv_out = d.kv_heads * d.head_dim;
    // q and o, k and v, gate/up/down, two (Gemma: four) RMSNorms, optional q/k/v biases and
    // q/k norms (per head or full width).
    const int64_t qk_norms = !d.qk_norm ? 0 : d.qk_norm_full_width ? q_out + kv_out : 2 * d.head_dim;
    block = 2 * h * q_out + 2 * h * kv_out + 3 * h * d.ffn + d.block_norms * h +
            (d.qkv_bias ? q_out + 2 * kv_out : 0) + qk_norms;
    c.set_final_norm_count(h);
  }
  c.set_per_layer_count(block);
  c.set_layers_count(d.layers * block);
  if (HasMoe(model)) CountMoeBlocks(model, block - 3 * h * d.ffn, c);
  c.set_lm_head_count(d.tied ? 0 : d.vocab * h);
  c.set_total_count(c.embedding_count() + c.position_embedding_count() + c.layers_count() +
                    c.final_norm_count() + c.lm_head_count());
  if (HasMoe(model)) {
    const ir::MixtureOfExperts& moe = model.moe();
    c.set_active_count(c.total_count() - c.routed_expert_count() / moe.num_experts() *
                                             (moe.num_experts() - moe.experts_per_token()));
  }
  return c;
}

int64_t HeadDimOf(const spec::ModelSpec& m) {
  if (m.head_dim > 0) return m.head_dim;
  return m.num_heads > 0 ? m.hidden_size / m.num_heads : 0;
}

ir::Model ModelFromSpec(const spec::ModelSpec& m) {
  ir::Model model;
  model.set_arch(ToIr(m.arch));
  model.set_model_type(m.model_type);
  model.set_hidden_size(m.hidden_size);
  model.set_num_layers(m.num_layers);
  model.set_num_heads(m.num_heads);
  model.set_num_kv_heads(m.num_kv_heads > 0 ? m.num_kv_heads : m.num_heads);
  model.set_head_dim(HeadDimOf(m));
  model.set_ffn_hidden_size(m.ffn_hidden_size);
  model.set_vocab_size(m.vocab_size);
  model.set_padded_vocab_size(m.vocab_size);
  model.set_max_seq_len(m.max_seq_len);
  model.set_tie_word_embeddings(m.tie_word_embeddings);
  model.set_qkv_bias(m.qkv_bias);
  model.set_norm_eps(m.norm_eps);
  model.set_rope_theta(m.rope_theta);
  model.set_qk_norm(m.qk_norm);
  SetDecoderVariant(m, model);
  if (m.moe.num_experts > 0) *model.mutable_moe() = MoeFromSpec(m.moe, m.num_layers);
  *model.mutable_parameters() = CountParameters(model);
  return model;
}

void SetDecoderVariant(const spec::ModelSpec& m, ir::Model& model) {
  if (m.arch != spec::Arch::kLlama) return;
  const spec::DecoderVariantSpec& v = m.variant;
  model.set_norm_placement(v.norm_placement == spec::NormPlacement::kPost         ? ir::NORM_PLACEMENT_POST
                           : v.norm_placement == spec::NormPlacement::kPreAndPost ? ir::NORM_PLACEMENT_PRE_AND_POST
                                                                                 : ir::NORM_PLACEMENT_UNSPECIFIED);
  model.set_qk_norm_full_width(v.qk_norm_full_width);
  model.set_norm_unit_offset(v.norm_unit_offset);
  model.set_embedding_scale(v.scale_embeddings ? std::sqrt(static_cast<double>(m.hidden_size)) : 0.0);
  model.set_mlp_activation(v.mlp_activation == spec::MlpActivation::kGeluTanh ? ir::MLP_ACTIVATION_GELU_TANH
                                                                             : ir::MLP_ACTIVATION_UNSPECIFIED);
  model.set_query_pre_attn_scalar(v.query_pre_attn_scalar);
  model.set_attn_logit_softcapping(v.attn_logit_softcapping);
  model.set_final_logit_softcapping(v.final_logit_softcapping);
  if (v.sliding_window > 0 && v.sliding_window_pattern > 0) {
    model.set_sliding_window(v.sliding_window);
    for (int64_t l = 0; l < m.num_layers; ++l) {
      if ((l + 1) % v.sliding_window_pattern != 0) model.add_sliding_window_layers(l);
    }
  }
  model.set_rope_local_theta(v.rope_local_theta);
}

std::vector<std::string> BlockNormNames(const ir::Model& model) {
  switch (model.norm_placement()) {
    case ir::NORM_PLACEMENT_POST:
      return {"post_attention_layernorm", "post_feedforward_layernorm"};
    case ir::NORM_PLACEMENT_PRE_AND_POST:
      return {"input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
              "post_feedforward_layernorm"};
    default:
      return {"input_layernorm", "post_attention_layernorm"};
  }
}

int64_t LocalCount(const std::vector<ParamInfo>& params) {
  int64_t total = 0;
  for (const ParamInfo& p : params) total += p.local_count;
  return total;
}

int64_t FullCount(const std::vector<ParamInfo>& params) {
  int64_t total = 0;
  for (const ParamInfo& p : params) total += p.count;
  return total;
}

int64_t LargestModuleParameterCount(const ModelParams& params) {
  // A module is the name without its final ".weight"/".bias"; the table is ordered, so one
  // ordered map per block is enough and keeps this deterministic.
  int64_t largest = 0;
  auto scan = [&largest](const std::vector<ParamInfo>& list) {
    std::map<std::string, int64_t> modules;
    for (const ParamInfo& p : list) {
      modules[p.name.substr(0, p.name.rfind('.'))] += p.count;
    }
    for (const auto& [name, count] : modules) largest = std::max(largest, count);
  };
  scan(params.embedding);
  for (const auto& block : params.layers) scan(block);
  scan(params.head);
  return largest;
}

int64_t LargestLayerParameterCount(const ModelParams& params) {
  int64_t largest = 0;
  for (const ParamInfo& p : params.embedding) largest = std::max(largest, p.count);
  for (const auto& block : params.layers) largest = std::max(largest, FullCount(block));
  // Final norm weight and bias belong to one module; lm_head is its own.
  std::map<std::string, int64_t> head_modules;
  for (const ParamInfo& p : params.head) head_modules[p.name.substr(0, p.name.rfind('.'))] += p.count;
  for (const auto& [name, count] : head_modules) largest = std::max(largest, count);
  return largest;
}

}  // namespace accel::planner
