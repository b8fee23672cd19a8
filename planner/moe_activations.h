// Activation memory of one mixture-of-experts block's MLP on one rank, tensor by tensor as the
// executor's MoeLayer keeps them (executor/models/moe/; measured by
// tests/executor/memory/moe_activation_estimate_test.cc), with T = b·s tokens of the micro-batch
// (the whole sequence under sequence parallelism, which the block gathers), a the matmuls'
// bytes, R the routed rows this rank's experts receive:
//   router: scores softmax or sigmoid fp32 [T, E] (4TE), the load-balancing loss's fractions
//     (4E), the top-k values fp32 [T, k] and their sum [T] (the renormalization's inputs, 4Tk +
//     4T), the top-k indices int64 (8Tk), the probabilities in a for the combine (a·Tk);
//   permutation: the sort order and its inverse, int64 [T·k] each (16Tk), and with expert
//     parallelism the received rows' regrouping and its inverse (16R);
//   experts: the dispatched rows [R, h] and the gate and up products [R, fe/t] in a
//     (GroupedExperts recomputes silu(gate)·up in backward);
//   combine: the experts' outputs by slot [T·k, h] in a (the probabilities' gradient reads them);
//   a gated shared expert's output [T, h] and gate [T, 1] in a (the shared SwiGLU itself is the
//     dense llama MLP term of planner/executor_activations.h at its width, counted there).
// R = T·k with one expert-parallel rank; with ep > 1 a rank's experts may receive more than
// their even share, so R = ceil(T·k·margin) (the capacity factor, or the stated dropless margin).
#ifndef ACCEL_PLANNER_MOE_ACTIVATIONS_H_
#define ACCEL_PLANNER_MOE_ACTIVATIONS_H_

#include <cstdint>
#include <string>

namespace accel::planner {

// One MoE block's MLP on one rank for one micro-batch.
struct MoeActivationShape {
  int64_t tokens = 0;          // T = b·s on this rank
  int64_t hidden = 0;          // h
  int64_t experts = 0;         // E routed experts
  int64_t top_k = 0;           // k
  int64_t expert_ffn = 0;      // fe, whole (divided by tp here)
  int64_t tp = 1;              // expert tensor parallel = tp
  int64_t ep = 1;              // expert parallel
  int64_t activation_bytes = 2;  // a: the matmuls' dtype
  double margin = 1.25;        // routed rows = T·k·margin (MixtureOfExperts.routing_margin)
  bool shared_expert_gate = false;  // the shared output is scaled by sigmoid(x·w)
};

// Bytes of one MoE block's MLP on one rank.
struct MoeActivationBytes {
  int64_t routed_rows = 0;  // R = ceil(T·k·margin)
  // Kept for backward from forward to backward: 4TE + 4E + 4T + T·k·(28 + a) + R·(h·a +
  // 2·(fe/tp)·a) (+ 16R with ep > 1) + T·k·h·a (+ T·(h + 1)·a with a shared-expert gate).
  int64_t kept = 0;
  // Alive only while the block runs (the estimate's "router and dispatch buffers"): the router
  // logits T·E·a and, 16-bit, their fp32 copy 4·T·E; with ep > 1 the all-to-all send and
  // receive buffers of one direction, 2·R·h·a, plus the per-expert counts 2·8·E.
  int64_t transient = 0;
  // One block's backward through its routed experts (GroupedExperts) holds their weight
  // gradients in the matmuls' dtype, 3·W·a with W = (E / ep)·(fe / tp)·h, and, 16-bit, their
  // fp32 casts 12·W, before autograd accumulates them.
  int64_t backward = 0;
};

// Routed rows one rank holds per MoE block under expert parallelism: ceil(tokens · top_k ·
// margin) (the even share T·k of the E experts' rows, times the capacity factor or the dropless
// margin).
int64_t RoutedRows(int64_t tokens, int64_t top_k, double margin);

// The bytes of the design above. Shapes ≥ 0; margin ≥ 1.
MoeActivationBytes MoeLayerActivationBytes(const MoeActivationShape& shape);

// The formula of MoeLayerActivationBytes with the numbers, for the plan's formula text.
std::string MoeActivationFormula(const MoeActivationShape& shape);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_MOE_ACTIVATIONS_H_
