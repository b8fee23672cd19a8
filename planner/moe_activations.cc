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
  const int64_t a = s.activation_bytes, t = s.tokens, tk = s.tokens * s.top_k;
  // One rank holding every expert receives exactly its T·k rows: no imbalance to allow for.
  out.routed_rows = s.ep > 1 ? RoutedRows(t, s.top_k, s.margin) : tk;
  const int64_t r = out.routed_rows;
  const int64_t fe = CeilDiv(s.expert_ffn, s.tp);
  const int64_t router = 4 * t * s.experts + 4 * s.experts + 4 * t + tk * (28 + a);
  const int64_t experts = r * (s.hidden * a + 2 * fe * a) + (s.ep > 1 ? 16 * r : 0);
  const int64_t combine = tk * s.hidden * a;
  const int64_t gate = s.shared_expert_gate ? t * s.hidden * a + t * a : 0;
  out.kept = router + experts + combine + gate;
  const int64_t weights = CeilDiv(s.experts, s.ep) * fe * s.hidden;
  out.backward = 3 * weights * a + (a < 4 ? 12 * weights : 0);
  // The logits in a, and their fp32 copy the softmax reads when a is 16-bit.
  out.transient = t * s.experts * a + (a < 4 ? 4 * t * s.experts : 0);
  if (s.ep > 1) out.transient += 2 * r * s.hidden * a + 2 * 8 * s.experts;
  return out;
}

std::string MoeActivationFormula(const MoeActivationShape& s) {
  const MoeActivationBytes b = MoeLayerActivationBytes(s);
  char margin[32];
  std::snprintf(margin, sizeof(margin), "%g", s.ep > 1 ? s.margin : 1.0);
  const auto n = [](int64_t v) { return std::to_string(v); };
  return "router scores 4*T*E + 4*E + 4*T + top-k indices, probabilities and permutations "
         "T*k*(28+a) + R rows x (dispatched input h*a + gate and up 2*fe/t*a" +
         std::string(s.ep > 1 ? " + regroup indices 16" : "") + ") + combined outputs T*k*h*a" +
         (s.shared_expert_gate ? " + gated shared output T*(h+1)*a" : "") + "; T=" + n(s.tokens) +
         " E=" + n(s.experts) + " k=" + n(s.top_k) + " R=ceil(T*k*" + margin + ")=" + n(b.routed_rows) +
         " h=" + n(s.hidden) + " fe/t=" + n(CeilDiv(s.expert_ffn, s.tp)) + " a=" + n(s.activation_bytes);
}

}  // namespace accel::planner
