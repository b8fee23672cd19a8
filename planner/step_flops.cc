#include "planner/step_flops.h"

#include <algorithm>

namespace accel::planner {
namespace {

struct Dims {
  double h, heads, kv, d, ffn;
};

Dims DimsOf(const ir::Model& m) {
  Dims x;
  x.h = static_cast<double>(m.hidden_size());
  x.heads = static_cast<double>(m.num_heads());
  x.kv = static_cast<double>(m.num_kv_heads() > 0 ? m.num_kv_heads() : m.num_heads());
  x.d = m.head_dim() > 0 ? static_cast<double>(m.head_dim())
                         : x.h / std::max<double>(x.heads, 1);
  x.ffn = static_cast<double>(m.ffn_hidden_size() > 0 ? m.ffn_hidden_size() : 4 * m.hidden_size());
  return x;
}

}  // namespace

LayerFlops LayerForwardFlops(const ir::Model& model, int64_t seq_len, int64_t micro_batch,
                             int64_t tp, int64_t cp) {
  const Dims x = DimsOf(model);
  const double s = static_cast<double>(seq_len);
  const double bs = static_cast<double>(micro_batch) * s;
  const double split = static_cast<double>(std::max<int64_t>(tp, 1) * std::max<int64_t>(cp, 1));
  const double ad = x.heads * x.d;
  LayerFlops f;
  f.qkv = 2 * bs * x.h * (ad + 2 * x.kv * x.d) / split;
  f.attention = 2 * (2 * bs * s * ad) / split;
  f.output = 2 * bs * ad * x.h / split;
  const double mlp_matmuls = model.arch() == "llama" ? 3 : 2;
  f.mlp = mlp_matmuls * 2 * bs * x.h * x.ffn / split;
  return f;
}

double HeadForwardFlops(const ir::Model& model, int64_t seq_len, int64_t micro_batch, int64_t tp,
                        int64_t cp) {
  const double vocab = static_cast<double>(
      model.padded_vocab_size() > 0 ? model.padded_vocab_size() : model.vocab_size());
  const double split = static_cast<double>(std::max<int64_t>(tp, 1) * std::max<int64_t>(cp, 1));
  return 2.0 * static_cast<double>(micro_batch) * static_cast<double>(seq_len) *
         static_cast<double>(model.hidden_size()) * vocab / split;
}

double LayerRecomputeFlops(const LayerFlops& layer, RecomputeMode mode) {
  switch (mode) {
    case RecomputeMode::kNone: return 0;
    case RecomputeMode::kSelective: return layer.attention;
    case RecomputeMode::kFull: return layer.Total();
  }
  return 0;
}

}  // namespace accel::planner
