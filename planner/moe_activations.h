// Activation memory of one mixture-of-experts block's MLP on one rank, for the MoE block the
// executor will run (it does not run one yet; this is the design it is to be built to, and the
// estimate counts exactly that; docs/planner-facts.md §9):
//   x [T, h], T = b·s tokens of the micro-batch on this rank (s / cp with context parallel), in
//   the activation dtype (a bytes);
//   router logits x·W_r [T, E] (W_r [E, h], no bias) in a; scores softmax or sigmoid in fp32
//   [T, E], kept; top-k indices int64 [T, k] and probabilities fp32 [T, k], kept;
//   tokens permuted by expert index into R rows [R, h] in a, R = ceil(T·k·margin) (margin: the
//   capacity factor, or the stated dropless margin 1.25); with expert parallel an all-to-all of
//   the per-expert counts, then of the rows (dispatch), each rank receiving about R rows for its
//   E / ep experts;
//   per local expert a SwiGLU run as grouped matmuls over its rows, W1/W3 [fe, h] and W2 [h, fe]
//   (fe / tp per rank with tensor parallel); kept for backward per routed row: the permuted
//   input (h·a), gate and up (2·fe/tp·a; SiLU recomputed from the gate, as the dense lean
//   block does), the down projection's output (h·a, which the weighted combine's backward
//   needs);
//   the combine all-to-all back, unpermute, and the sum weighted by the router probabilities;
//   shared experts: a dense SwiGLU of width num_shared · shared_ffn (the dense llama MLP term of
//   planner/executor_activations.h at that width, counted there).
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
};

// Bytes of one MoE block's MLP on one rank.
struct MoeActivationBytes {
  int64_t routed_rows = 0;  // R = ceil(T·k·margin)
  // Kept for backward from forward to backward: scores 4·T·E + indices 8·T·k + probabilities
  // 4·T·k + R·(h·a + 2·(fe/tp)·a + h·a).
  int64_t kept = 0;
  // Alive only while the block runs (the estimate's "router and dispatch buffers"): the router
  // logits T·E·a, and with ep > 1 the all-to-all send and receive buffers of one direction,
  // 2·R·h·a, plus the per-expert counts 2·8·E.
  int64_t transient = 0;
};

// Routed rows one rank holds per MoE block: ceil(tokens · top_k · margin) (the even share T·k of
// the E experts' rows, times the capacity factor or the dropless margin).
int64_t RoutedRows(int64_t tokens, int64_t top_k, double margin);

// The bytes of the design above. Shapes ≥ 0; margin ≥ 1.
MoeActivationBytes MoeLayerActivationBytes(const MoeActivationShape& shape);

// "T=… E=… k=… R=ceil(T·k·margin)=… : 4TE + 12Tk + R·(2h·a + 2·fe/t·a)", with the numbers, for
// the plan's formula text.
std::string MoeActivationFormula(const MoeActivationShape& shape);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_MOE_ACTIVATIONS_H_
