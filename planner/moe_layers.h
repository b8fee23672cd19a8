// Mixture-of-experts blocks of a plan's model: which blocks are MoE blocks, the plan's
// MixtureOfExperts message from the spec, and the expert-parallel split of the routed experts
// (docs/planner-facts.md §9). One place for these rules: the parameter table, the memory and
// step-time estimates and the plan text all read them from here.
#ifndef ACCEL_PLANNER_MOE_LAYERS_H_
#define ACCEL_PLANNER_MOE_LAYERS_H_

#include <cstdint>
#include <string>

#include "ir/plan.pb.h"
#include "spec/job_spec.h"

namespace accel::planner {

// The imbalance margin the memory and step-time estimates size a rank's routed rows by under
// dropless routing: 1.25 × the even share T·k, the capacity factor Switch Transformer and GShard
// train with (Fedus et al. 2021 §2.2, Lepikhin et al. 2020 §2.2). Dropless routing has no
// bound; this is a stated planning assumption, shown in the plan's notes.
inline constexpr double kDroplessRoutingMargin = 1.25;

// The multiple of the even share T·k the estimates size routed rows by: moe.routing_margin, or
// kDroplessRoutingMargin for a plan that does not state one.
double RoutingMargin(const ir::MixtureOfExperts& moe);

// Whether `model` has mixture-of-experts blocks (moe.num_experts > 0).
bool HasMoe(const ir::Model& model);

// The plan's MixtureOfExperts for a spec's model.moe over `num_layers` blocks: the fields as
// given, router scoring as an ir enum, routing_margin = capacity_factor or
// kDroplessRoutingMargin, and dense_layers = every block l with l < first_dense_layers, or
// (l + 1) not a multiple of sparse_step, or l listed in dense_layers (Qwen's mlp_only_layers;
// transformers Qwen2MoeDecoderLayer, DeepseekV3DecoderLayer), ascending. expert_parallel and
// expert_data_parallel stay 0 (resolve-auto sets them). An empty message when num_experts is 0.
ir::MixtureOfExperts MoeFromSpec(const spec::MoeSpec& moe, int64_t num_layers);

// Whether block `layer` (0-based) of `model` is an MoE block: the model has experts and the
// block is not in moe.dense_layers. O(log dense layers).
bool IsMoeBlock(const ir::Model& model, int64_t layer);

// MoE blocks among blocks [begin, end).
int64_t MoeBlocksIn(const ir::Model& model, int64_t begin, int64_t end);

// Expert-parallel degree of `model`: moe.expert_parallel, at least 1.
int64_t ExpertParallel(const ir::Model& model);

// Routed experts [begin, end) that expert-parallel rank `ep_rank` of `ep` holds: E/ep
// consecutive experts (ep divides E).
struct ExpertRange {
  int64_t begin = 0;
  int64_t end = 0;
};
ExpertRange ExpertsOfRank(int64_t num_experts, int64_t ep, int64_t ep_rank);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_MOE_LAYERS_H_
