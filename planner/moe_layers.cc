#include "planner/moe_layers.h"

#include <algorithm>

#include "planner/ir_enums.h"

namespace accel::planner {

bool HasMoe(const ir::Model& model) { return model.moe().num_experts() > 0; }

double RoutingMargin(const ir::MixtureOfExperts& moe) {
  return moe.routing_margin() >= 1 ? moe.routing_margin() : kDroplessRoutingMargin;
}

ir::MixtureOfExperts MoeFromSpec(const spec::MoeSpec& moe, int64_t num_layers) {
  ir::MixtureOfExperts out;
  if (moe.num_experts <= 0) return out;
  out.set_num_experts(moe.num_experts);
  out.set_experts_per_token(moe.experts_per_token);
  out.set_expert_ffn_size(moe.expert_ffn_size);
  out.set_num_shared_experts(moe.num_shared_experts);
  out.set_shared_expert_ffn_size(moe.num_shared_experts > 0 ? moe.shared_expert_ffn_size : 0);
  out.set_shared_expert_gate(moe.num_shared_experts > 0 && moe.shared_expert_gate);
  out.set_router_scoring(ToIr(moe.router_scoring));
  out.set_norm_topk_prob(moe.norm_topk_prob);
  out.set_router_aux_loss_coef(moe.router_aux_loss_coef);
  out.set_capacity_factor(moe.capacity_factor);
  out.set_routing_margin(moe.capacity_factor > 0 ? moe.capacity_factor : kDroplessRoutingMargin);
  const int64_t step = std::max<int64_t>(moe.sparse_step, 1);
  for (int64_t l = 0; l < num_layers; ++l) {
    const bool listed =
        std::find(moe.dense_layers.begin(), moe.dense_layers.end(), l) != moe.dense_layers.end();
    if (l < moe.first_dense_layers || (l + 1) % step != 0 || listed) out.add_dense_layers(l);
  }
  return out;
}

bool IsMoeBlock(const ir::Model& model, int64_t layer) {
  if (!HasMoe(model)) return false;
  const auto& dense = model.moe().dense_layers();
  return !std::binary_search(dense.begin(), dense.end(), layer);
}

int64_t MoeBlocksIn(const ir::Model& model, int64_t begin, int64_t end) {
  if (!HasMoe(model) || end <= begin) return 0;
  const auto& dense = model.moe().dense_layers();
  const int64_t dense_in = std::lower_bound(dense.begin(), dense.end(), end) -
                           std::lower_bound(dense.begin(), dense.end(), begin);
  return end - begin - dense_in;
}

int64_t ExpertParallel(const ir::Model& model) {
  return std::max<int64_t>(model.moe().expert_parallel(), 1);
}

ExpertRange ExpertsOfRank(int64_t num_experts, int64_t ep, int64_t ep_rank) {
  const int64_t per_rank = num_experts / std::max<int64_t>(ep, 1);
  return {ep_rank * per_rank, (ep_rank + 1) * per_rank};
}

}  // namespace accel::planner
