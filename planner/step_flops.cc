#include "planner/step_flops.h"

#include <algorithm>

#include "ir/plan_access.h"
#include "planner/recompute_policy.h"

namespace accel::planner {
namespace {

struct Dims {
  double h, heads, kv, d, ffn;
};

Dims DimsOf(const ir::Model& m) {
  const AttentionHeads a = AttentionHeadsOf(m);
  Dims x;
  x.h = static_cast<double>(m.hidden_size());
  x.heads = static_cast<double>(a.heads);
  x.kv = static_cast<double>(a.kv);
  x.d = static_cast<double>(a.head_dim);
  x.ffn = static_cast<double>(ir::FfnSize(m));
  return x;
}

// The MLP of an MoE block (docs/planner-facts.md §9), the active parameters' products: the
// router [t×h]·[h×E]; the routed experts as grouped matmuls over the t·k routed rows (each
// token's k experts; the imbalance margin moves rows between ranks, not FLOPs), gate and up
// [t·k×h]·[h×fe/tp] and down [t·k×fe/tp]·[fe/tp×h]; the shared experts as a dense SwiGLU of
// width S·fs. All NT (weights [out×in]); recomputed in full by per-op recompute.
void AddMoeMlpGemms(const ir::Model& model, int64_t tokens, int64_t tp, std::vector<Gemm>& gemms) {
  const ir::MixtureOfExperts& moe = model.moe();
  const int64_t h = model.hidden_size();
  const int64_t routed = tokens * moe.experts_per_token();
  const int64_t fe = moe.expert_ffn_size() / tp;
  const ir::MatmulLayout nt = ir::MATMUL_LAYOUT_NT;
  gemms.push_back({tokens, moe.num_experts(), h, 1, false, nt});
  gemms.push_back({routed, fe, h, 2, false, nt});
  gemms.push_back({routed, h, fe, 1, false, nt});
  const int64_t shared = moe.num_shared_experts() * moe.shared_expert_ffn_size() / tp;
  if (shared > 0) {
    gemms.push_back({tokens, shared, h, 2, false, nt});
    gemms.push_back({tokens, h, shared, 1, false, nt});
  }
}

}  // namespace

AttentionHeads AttentionHeadsOf(const ir::Model& model) {
  AttentionHeads a;
  a.heads = model.num_heads();
  a.kv = ir::KvHeads(model) *
         std::max<int64_t>(model.kv_head_replicas(), 1);
  a.head_dim = model.head_dim() > 0 ? model.head_dim()
                                    : model.hidden_size() / std::max<int64_t>(a.heads, 1);
  return a;
}

LayerFlops LayerForwardFlops(const ir::Model& model, int64_t seq_len, int64_t micro_batch,
                             int64_t tp, int64_t cp, bool moe_block) {
  const Dims x = DimsOf(model);
  const double s = static_cast<double>(seq_len);
  const double bs = static_cast<double>(micro_batch) * s;
  const double split = static_cast<double>(std::max<int64_t>(tp, 1) * std::max<int64_t>(cp, 1));
  const double ad = x.heads * x.d;
  LayerFlops f;
  f.qkv = 2 * bs * x.h * (ad + 2 * x.kv * x.d) / split;
  f.attention = 2 * (2 * bs * s * ad) / split;
  f.output = 2 * bs * ad * x.h / split;
  const double mlp_matmuls = model.arch() == ir::ARCHITECTURE_LLAMA ? 3 : 2;
  f.mlp = mlp_matmuls * 2 * bs * x.h * x.ffn / split;
  const std::vector<Gemm> gemms = LayerForwardGemms(model, seq_len, micro_batch, tp, cp, moe_block);
  if (moe_block && model.moe().num_experts() > 0) {
    // The MoE MLP: router, routed experts of the top-k and shared experts (the products after
    // the output projection, see MoeMlpGemms).
    f.mlp = 0;
    for (size_t i = 4; i < gemms.size(); ++i) f.mlp += gemms[i].Flops();
  }
  for (const Gemm& g : gemms) {
    if (!g.attention) f.op_recomputed += g.Flops() * g.op_recomputed;
  }
  return f;
}

std::vector<Gemm> LayerForwardGemms(const ir::Model& model, int64_t seq_len, int64_t micro_batch,
                                    int64_t tp, int64_t cp, bool moe_block) {
  const int64_t t = std::max<int64_t>(tp, 1);
  const int64_t c = std::max<int64_t>(cp, 1);
  const auto [heads, kv, d] = AttentionHeadsOf(model);
  const int64_t h = model.hidden_size();
  const int64_t ffn = ir::FfnSize(model);
  const int64_t tokens = micro_batch * seq_len / c;
  const int64_t q_len = seq_len / c;
  const bool llama = model.arch() == ir::ARCHITECTURE_LLAMA;
  const ir::MatmulLayout linear = llama ? ir::MATMUL_LAYOUT_NT : ir::MATMUL_LAYOUT_NN;
  // Grouped keys are repeated to every query head by repeat_interleave, which leaves them
  // contiguous: Kᵀ is then a transposed view, not a copy.
  const ir::MatmulLayout scores =
      llama && kv != heads ? ir::MATMUL_LAYOUT_NT : ir::MATMUL_LAYOUT_NN;
  const bool gpt2 = !llama;
  auto again = [gpt2](const char* op) { return OpPolicyRecomputedShare(gpt2, op); };
  const double qkv_again =
      llama ? (again("self_attn.q_proj") * heads + (again("self_attn.k_proj") + again("self_attn.v_proj")) * kv) /
                  static_cast<double>(heads + 2 * kv)
            : again("attn.c_attn");
  std::vector<Gemm> gemms;
  gemms.push_back({tokens, (heads + 2 * kv) * d / t, h, 1, false, linear, qkv_again});
  gemms.push_back({q_len, seq_len, d, micro_batch * heads / t, true, scores});
  gemms.push_back({q_len, d, seq_len, micro_batch * heads / t, true, ir::MATMUL_LAYOUT_NN});
  gemms.push_back({tokens, h, heads * d / t, 1, false, linear, again(llama ? "self_attn.o_proj" : "attn.c_proj")});
  if (moe_block && model.moe().num_experts() > 0) {
    AddMoeMlpGemms(model, tokens, t, gemms);
    return gemms;
  }
  gemms.push_back({tokens, ffn / t, h, llama ? 2 : 1, false, linear,
                   llama ? (again("mlp.gate_proj") + again("mlp.up_proj")) / 2 : again("mlp.c_fc")});
  gemms.push_back({tokens, h, ffn / t, 1, false, linear, again(llama ? "mlp.down_proj" : "mlp.c_proj")});
  return gemms;
}

Gemm HeadForwardGemm(const ir::Model& model, int64_t seq_len, int64_t micro_batch, int64_t tp,
                     int64_t cp) {
  const int64_t vocab = ir::VocabRows(model);
  return {micro_batch * seq_len / std::max<int64_t>(cp, 1), vocab / std::max<int64_t>(tp, 1),
          model.hidden_size(), 1, false, ir::MATMUL_LAYOUT_NT};
}

std::array<Gemm, 2> BackwardGemms(const Gemm& f) {
  if (f.layout == ir::MATMUL_LAYOUT_NT) {
    const Gemm weight = f.attention ? Gemm{f.k, f.n, f.m, f.count, true, ir::MATMUL_LAYOUT_TN}
                                    : Gemm{f.n, f.k, f.m, f.count, false, ir::MATMUL_LAYOUT_TN};
    return {Gemm{f.m, f.k, f.n, f.count, f.attention, ir::MATMUL_LAYOUT_NN}, weight};
  }
  return {Gemm{f.m, f.k, f.n, f.count, f.attention, ir::MATMUL_LAYOUT_NT},
          Gemm{f.k, f.n, f.m, f.count, f.attention, ir::MATMUL_LAYOUT_TN}};
}

double HeadForwardFlops(const ir::Model& model, int64_t seq_len, int64_t micro_batch, int64_t tp,
                        int64_t cp) {
  const double vocab = static_cast<double>(
      ir::VocabRows(model));
  const double split = static_cast<double>(std::max<int64_t>(tp, 1) * std::max<int64_t>(cp, 1));
  return 2.0 * static_cast<double>(micro_batch) * static_cast<double>(seq_len) *
         static_cast<double>(model.hidden_size()) * vocab / split;
}

double LayerRecomputeFlops(const LayerFlops& layer, RecomputeMode mode) {
  switch (mode) {
    case RecomputeMode::kNone: return 0;
    case RecomputeMode::kSelective: return layer.attention;
    case RecomputeMode::kOp: return layer.attention + layer.op_recomputed;
    case RecomputeMode::kFull: return layer.Total();
  }
  return 0;
}

}  // namespace accel::planner
