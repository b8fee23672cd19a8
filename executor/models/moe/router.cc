#include "executor/models/moe/router.h"

#include <torch/torch.h>

namespace accel::exec {

Routing Route(const at::Tensor& logits, const RouterOptions& options) {
  const int64_t num_experts = logits.size(-1);
  TORCH_CHECK(options.top_k >= 1 && options.top_k <= num_experts, "MoE router: top_k ", options.top_k,
              " must be in [1, ", num_experts, "]");
  Routing r;
  // fp32 (fp64 for fp64 logits, the gradient tests): 16-bit softmax over many experts loses the
  // small probabilities (Hugging Face's Mixtral block also scores in fp32).
  const at::Tensor wide = logits.to(logits.scalar_type() == at::kDouble ? at::kDouble : at::kFloat);
  r.scores = options.scoring == RouterScoring::kSoftmax ? at::softmax(wide, -1) : at::sigmoid(wide);
  auto [top, experts] = at::topk(r.scores, options.top_k, -1, /*largest=*/true, /*sorted=*/true);
  r.probabilities = options.normalize_top_k ? top / top.sum(-1, /*keepdim=*/true) : top;
  r.experts = experts;
  r.counts = at::bincount(experts.reshape({-1}), /*weights=*/{}, num_experts);
  return r;
}

at::Tensor LoadBalancingLoss(const Routing& routing) {
  const int64_t tokens = routing.scores.size(0);
  const int64_t num_experts = routing.scores.size(-1);
  const at::Tensor fraction = routing.counts.to(routing.scores.scalar_type()) / static_cast<double>(tokens);
  const at::Tensor mean_score = routing.scores.mean(0);
  return (fraction * mean_score).sum() * static_cast<double>(num_experts);
}

}  // namespace accel::exec
