#ifndef ACCEL_PLANNER_SHARD_LAYOUT_H_
#define ACCEL_PLANNER_SHARD_LAYOUT_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ir/plan.pb.h"
#include "planner/model_params.h"

// The shard units and gradient buckets of a plan, decided once over the parameter table
// (planner/model_params.h) before anything is written to the plan: the build-shard-groups pass
// writes them as ir::ShardUnit / ir::Bucket, and the planner's summary mode (the layout search)
// keeps only the per-stage totals the step-time estimate reads. Both come from the same walk,
// so a summary cannot disagree with the plan it summarizes.
namespace accel::planner {

// One shard unit: the embeddings, one transformer block or the head, on one pipeline stage.
struct UnitLayout {
  enum class Kind { kEmbeddings, kLayer, kHead };
  Kind kind = Kind::kLayer;
  int64_t layer = -1;                              // kLayer: the block's index
  int32_t stage = 0;                               // pipeline stage
  const std::vector<ParamInfo>* params = nullptr;  // its list in the table (not owned)
  bool tied_copy = false;  // the head also holds the word-embedding copy, last (see ShardLayout)

  // "embeddings", "layers.N", "head" (ir::ShardUnit.name).
  std::string Name() const;
};

// The units of a plan in plan order (embeddings on stage 0, the blocks stage by stage, the head
// on the last stage), over a table that must outlive it.
struct ShardLayout {
  std::vector<UnitLayout> units;
  // A tied head on a last stage without the embedding holds its own copy of the word embedding
  // (Megatron-LM): the embedding's first parameter renamed "lm_head.weight", same split; its
  // gradients are summed with the original's (ir::Parameter.tied_to). Valid when a unit has
  // tied_copy.
  ParamInfo tied_copy;

  // Parameters of `unit`: its table list, then the tied copy when it has one.
  int64_t Size(const UnitLayout& unit) const;
  const ParamInfo& Param(const UnitLayout& unit, int64_t i) const;
};

// The units of a model split into `stages` (ir::PipelineStage index and layer range, in
// order; at least one) with table `params`.
ShardLayout LayOutUnits(const ModelParams& params,
                        const google::protobuf::RepeatedPtrField<ir::PipelineStage>& stages,
                        bool tie_word_embeddings);

// Elements of one parameter held by one rank of its sharding group: ceil(local_count / degree)
// (ir::Parameter.shard_count), with `expert_degree` (the "ep_dp" size, ir::Sharding.
// expert_shard_degree) for routed-expert tensors when it is ≥ 1. `degree` ≥ 1.
int64_t ShardCount(const ParamInfo& param, int64_t degree, int64_t expert_degree = 0);

// Walks the gradients in the order they become ready in backward (the last unit's last
// parameter first) and fills buckets as PyTorch DDP's reducer does: a bucket closes once it
// holds at least `cap` elements (local_count, per tp rank), never spans two stages, and never
// mixes routed-expert parameters (reduced over "ep_dp") with others (reduced over "dp").
// `visit(param, stage, opens)` is called once per parameter in that order; `opens` is true for
// the first parameter of each bucket. Buckets are numbered in the order they open.
template <typename Visit>
void WalkBuckets(const ShardLayout& layout, int64_t cap, Visit&& visit) {
  // Units are in stage order, so one walk from the last unit visits the stages last to first.
  bool open = false;
  bool expert = false;
  int32_t stage = 0;
  int64_t elements = 0;
  for (auto unit = layout.units.rbegin(); unit != layout.units.rend(); ++unit) {
    if (open && stage != unit->stage) open = false;
    for (int64_t p = layout.Size(*unit) - 1; p >= 0; --p) {
      const ParamInfo& param = layout.Param(*unit, p);
      if (open && expert != param.routed_expert) open = false;
      const bool opens = !open;
      if (opens) {
        open = true;
        expert = param.routed_expert;
        stage = unit->stage;
        elements = 0;
      }
      visit(param, unit->stage, opens);
      elements += param.local_count;
      if (elements >= cap) open = false;
    }
  }
}

// What the step-time estimate reads of one stage's shard units and buckets.
struct StageShardTotals {
  int64_t units = 0;
  int64_t local_elements = 0;  // Σ ShardUnit.local_count
  int64_t shard_elements = 0;  // Σ ShardUnit.shard_count
  // Sharding stage 3 gathers before forward and before backward: Σ shard_count of the
  // non-persistent parameters over the units that have any, and the number of such units. The
  // tied embeddings stay gathered from forward to backward, so backward leaves them out.
  int64_t forward_gather_elements = 0;
  int64_t forward_gather_units = 0;
  int64_t backward_gather_elements = 0;
  int64_t backward_gather_units = 0;
  // Mixture of experts: of the above, what the routed experts' tensors (ParamInfo.routed_expert)
  // hold, sharded over "ep_dp" instead of dp_shard: Σ shard_count, and Σ shard_count of the
  // non-persistent ones with the number of units that have any (gathered before forward and
  // before backward; left out of forward/backward_gather_elements).
  int64_t expert_shard_elements = 0;
  int64_t expert_gather_elements = 0;
  int64_t expert_gather_units = 0;
  // Units holding routed experts, and the bytes of their gradients in the buckets (reduced over
  // "ep_dp", not the data-parallel groups; included in bucket_bytes).
  int64_t expert_units = 0;
  int64_t expert_bucket_bytes = 0;
  int64_t buckets = 0;
  int64_t bucket_bytes = 0;       // Σ Bucket.bytes
  int64_t last_bucket_bytes = 0;  // bytes of the stage's last bucket (the last to reduce)
  // Parameters every tp rank holds whole (ir::Parameter.tp_dim −1: norms, row-parallel biases,
  // learned positions) and their elements: under sequence parallelism each sees a part of the
  // sequence, so the executor sums each one's gradient over tp in every micro-step's backward.
  int64_t tp_replicated_params = 0;
  int64_t tp_replicated_elements = 0;
};

// Per-stage totals, indexed by pipeline stage; a stage without units reads as zeros.
struct ShardTotals {
  std::vector<StageShardTotals> stages;

  const StageShardTotals& Stage(int32_t stage) const;
};

// The totals of a plan's Sharding.units and Sharding.buckets (complete through
// build-shard-groups); `tie_word_embeddings` from plan.model().
ShardTotals ShardTotalsFromPlan(const ir::Plan& plan);

// The same totals from `layout` without writing units or buckets: what build-shard-groups would
// write for dp_shard `degree`, sharding stage 3 with persistence threshold `persistence`
// (elements; parameters at or below it stay whole) when `stage3`, bucket `cap` elements and
// `bytes_per` bytes per reduced element, routed experts sharded over `expert_degree` (see
// ShardCount). Equal to ShardTotalsFromPlan of that plan.
ShardTotals ShardTotalsFromLayout(const ShardLayout& layout, int64_t degree, bool stage3,
                                  int64_t persistence, int64_t cap, int64_t bytes_per,
                                  bool tie_word_embeddings, int64_t expert_degree = 0);

// ShardTotals shared by the plans of one layout search (PlanOptions.shard_totals_cache): many
// candidates differ only in what the totals do not read (micro batch, recompute, offload,
// schedule with the same stage blocks), so build-shard-groups keys the totals by everything
// they are computed from (ShardTotalsKey in build_shard_groups.cc) and computes each once.
// Thread-safe.
class ShardTotalsCache {
 public:
  // The totals stored under `key`, or nullopt.
  std::optional<ShardTotals> Find(const std::vector<int64_t>& key);
  void Put(std::vector<int64_t> key, const ShardTotals& totals);

 private:
  std::mutex mu_;
  std::map<std::vector<int64_t>, ShardTotals> totals_;
};

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_SHARD_LAYOUT_H_
