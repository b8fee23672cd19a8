// Token-choice top-k routing of a mixture-of-experts layer and its load-balancing loss.
#ifndef ACCEL_EXECUTOR_MODELS_MOE_ROUTER_H_
#define ACCEL_EXECUTOR_MODELS_MOE_ROUTER_H_

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace accel::exec {

// How router logits become per-expert scores.
enum class RouterScoring {
  kSoftmax,  // softmax over the experts (Mixtral, Qwen2-MoE, Qwen3-MoE)
  kSigmoid,  // an independent sigmoid per expert (DeepSeek-V3)
};

struct RouterOptions {
  int64_t top_k = 2;
  RouterScoring scoring = RouterScoring::kSoftmax;
  // Divide the k chosen probabilities by their sum (Mixtral always; Qwen's norm_topk_prob).
  bool normalize_top_k = true;
};

// What routing T tokens over E experts gives.
struct Routing {
  at::Tensor scores;         // [T, E] fp32 (fp64 for fp64 logits): softmax or sigmoid of the logits (differentiable)
  // [T, k] in the scores' dtype: the chosen experts' weights for the combine (differentiable)
  at::Tensor probabilities;
  at::Tensor experts;        // [T, k] int64: the chosen experts, best first
  at::Tensor counts;         // [E] int64: tokens routed to each expert (each token counted k times)
};

// Routes tokens by logits [T, E] (any floating dtype; scored in fp32, fp64 for fp64): the k highest scores
// (at::topk; its order for ties), the chosen probabilities renormalized when asked.
// Deterministic: the same logits give the same routing. Errors: c10::Error when top_k is not in
// [1, E].
Routing Route(const at::Tensor& logits, const RouterOptions& options);

// The Switch Transformer load-balancing loss (Fedus et al. 2021, eq. 4; Hugging Face's
// load_balancing_loss_func for Mixtral): E · Σ_e f_e · P_e with f_e = counts_e / T (the fraction of
// tokens choosing expert e, counted once per top-k slot) and P_e the mean score of expert e over
// the T tokens. 0-dim, in the scores' dtype, differentiable through P only; equals k for perfectly uniform routing
// and scores (E · Σ (k/E)·(1/E) = k).
at::Tensor LoadBalancingLoss(const Routing& routing);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_MOE_ROUTER_H_
