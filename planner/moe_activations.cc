#include "planner/moe_activations.h"

#include <cmath>
#include <cstdio>

#include "common/ceil_div.h"

namespace accel::planner {

int64_t RoutedRows(int64_t tokens, int64_t top_k, double margin) {
  return static_cast<int64_t>(std::ceil(static_cast<double>(tokens * top_k) * margin));
}

MoeActivationBytes MoeLayerActivationBytes(const MoeActivationShape& s) {
  MoeActivationBytes out;
  const int64_t a = s.activation_bytes;
  out.routed_rows = RoutedRows(s.tokens, s.top_k, s.margin);
  const int64_t fe = CeilDiv(s.expert_ffn, s.tp);
  const int64_t router = 4 * s.tokens * s.experts + 8 * s.tokens * s.top_k + 4 * s.tokens * s.top_k;
  out.kept = router + out.routed_rows * (2 * s.hidden * a + 2 * fe * a);
  out.transient = s.tokens * s.experts * a;
  if (s.ep > 1) out.transient += 2 * out.routed_rows * s.hidden * a + 2 * 8 * s.experts;
  return out;
}

std::string MoeActivationFormula(const MoeActivationShape& s) {
  const MoeActivationBytes b = MoeLayerActivationBytes(s);
  char margin[32];
  std::snprintf(margin, sizeof(margin), "%g", s.margin);
  const auto n = [](int64_t v) { return std::to_string(v); };
  return "router scores 4*T*E + top-k indices and probabilities 12*T*k + R rows x (permuted input "
         "h*a + gate and up 2*fe/t*a + down output h*a); T=" + n(s.tokens) + " E=" + n(s.experts) +
         " k=" + n(s.top_k) + " R=ceil(T*k*" + margin + ")=" + n(b.routed_rows) +
         " h=" + n(s.hidden) + " fe/t=" + n(CeilDiv(s.expert_ffn, s.tp)) + " a=" +
         n(s.activation_bytes);
}

}  // namespace accel::planner
