#include "planner/elementwise_ops.h"

#include <algorithm>

#include "ir/plan_access.h"
#include "planner/step_flops.h"
#include "spec/device_profile_file.h"

namespace accel::planner {
namespace {

// The profile file's names are the one list (spec/device_profile_file.h).
constexpr const auto& kNames = spec::kElementwiseOpNames;
static_assert(kNames.size() == kElementwiseOpCount);

int Index(ElementwiseOp op) { return static_cast<int>(op); }

// Tokens one rank normalizes: t = b·s/cp, split over tp with sequence parallelism.
double NormTokens(int64_t seq_len, int64_t micro_batch, int64_t tp, int64_t cp, bool sp) {
  const double t = static_cast<double>(micro_batch * seq_len / std::max<int64_t>(cp, 1));
  return sp ? t / static_cast<double>(std::max<int64_t>(tp, 1)) : t;
}

ElementwiseOp NormOf(const ir::Model& model) {
  return model.arch() == ir::ARCHITECTURE_LLAMA ? ElementwiseOp::kRmsNorm : ElementwiseOp::kLayerNorm;
}

}  // namespace

std::string_view ElementwiseOpName(ElementwiseOp op) { return kNames[Index(op)]; }

std::optional<ElementwiseOp> ElementwiseOpByName(std::string_view name) {
  for (int i = 0; i < kElementwiseOpCount; ++i) {
    if (kNames[i] == name) return static_cast<ElementwiseOp>(i);
  }
  return std::nullopt;
}

ElementwiseElements BlockElementwiseElements(const ir::Model& model, int64_t seq_len,
                                             int64_t micro_batch, int64_t tp, int64_t cp,
                                             bool sequence_parallel) {
  ElementwiseElements e{};
  const double t_tp = static_cast<double>(std::max<int64_t>(tp, 1));
  const double h = static_cast<double>(model.hidden_size());
  const double ffn = static_cast<double>(ir::FfnSize(model));
  const double tokens = static_cast<double>(micro_batch * seq_len / std::max<int64_t>(cp, 1));
  e[Index(NormOf(model))] = 2 * NormTokens(seq_len, micro_batch, tp, cp, sequence_parallel) * h;
  const ElementwiseOp mlp =
      model.arch() == ir::ARCHITECTURE_LLAMA ? ElementwiseOp::kSiluMul : ElementwiseOp::kGeluTanh;
  e[Index(mlp)] = tokens * ffn / t_tp;
  e[Index(ElementwiseOp::kCausalSoftmax)] =
      static_cast<double>(micro_batch) * static_cast<double>(model.num_heads()) / t_tp *
      (static_cast<double>(seq_len) / static_cast<double>(std::max<int64_t>(cp, 1))) *
      static_cast<double>(seq_len);
  const double stream = NormTokens(seq_len, micro_batch, tp, cp, sequence_parallel) * h;
  e[Index(ElementwiseOp::kResidualAdd)] = 2 * stream;
  if (model.arch() == ir::ARCHITECTURE_LLAMA) {
    const AttentionHeads a = AttentionHeadsOf(model);
    e[Index(ElementwiseOp::kRotary)] =
        tokens * static_cast<double>((a.heads + a.kv) * a.head_dim) / t_tp;
  } else {
    e[Index(ElementwiseOp::kBiasAdd)] = tokens * (3 * h + ffn) / t_tp + 2 * stream;
  }
  return e;
}

ElementwiseElements HeadElementwiseElements(const ir::Model& model, int64_t seq_len,
                                            int64_t micro_batch, int64_t tp, int64_t cp,
                                            bool sequence_parallel) {
  ElementwiseElements e{};
  const double vocab = static_cast<double>(
      ir::VocabRows(model));
  const double tokens = static_cast<double>(micro_batch * seq_len / std::max<int64_t>(cp, 1));
  e[Index(NormOf(model))] = NormTokens(seq_len, micro_batch, tp, cp, sequence_parallel) *
                            static_cast<double>(model.hidden_size());
  e[Index(ElementwiseOp::kCrossEntropy)] =
      tokens * vocab / static_cast<double>(std::max<int64_t>(tp, 1));
  return e;
}

const ir::ElementwiseCost* FindElementwiseCost(const ir::DeviceProfile& profile, ElementwiseOp op,
                                               ir::Dtype dtype) {
  const ir::Dtype wanted = dtype == ir::DTYPE_UNSPECIFIED ? ir::DTYPE_FP32 : dtype;
  for (const ir::ElementwiseCost& c : profile.elementwise_costs()) {
    if (c.op() == ElementwiseOpName(op) && c.dtype() == wanted) return &c;
  }
  return nullptr;
}

}  // namespace accel::planner
