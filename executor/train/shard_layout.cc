#include "executor/train/shard_layout.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

namespace accel::exec {
namespace {

using ModuleParams = std::vector<std::pair<std::string, int64_t>>;

// The shard size and owned range of `slot` over `degree` ranks, this one being `rank`.
void SetShard(ParamSlot& slot, int64_t degree, int64_t rank) {
  slot.shard_numel = (slot.numel + degree - 1) / degree;
  slot.owned_begin = std::min(slot.numel, rank * slot.shard_numel);
  slot.owned_end = std::min(slot.numel, (rank + 1) * slot.shard_numel);
}

ShardLayout Skeleton(const ModuleParams& module_params, int64_t degree, int64_t shard_rank) {
  ShardLayout layout;
  layout.degree = degree;
  layout.shard_rank = shard_rank;
  for (const auto& [name, numel] : module_params) {
    ParamSlot slot;
    slot.name = name;
    slot.numel = numel;
    SetShard(slot, degree, shard_rank);
    layout.params.push_back(slot);
  }
  return layout;
}

// The gather of `unit` that takes parameters of `slot`'s kind, added when missing.
UnitGather& GatherOf(UnitLayout& unit, const ParamSlot& slot) {
  for (UnitGather& g : unit.gathers) {
    if (g.routed_experts == slot.routed_expert) return g;
  }
  unit.gathers.push_back(UnitGather{slot.routed_expert, {}, 0});
  return unit.gathers.back();
}

// Fills the per-bucket and per-unit offsets once every parameter has its unit and bucket.
void AssignOffsets(ShardLayout& layout) {
  for (BucketLayout& bucket : layout.buckets) {
    for (int p : bucket.params) {
      ParamSlot& slot = layout.params[p];
      slot.bucket_offset = bucket.numel;
      slot.bucket_shard_offset = bucket.shard_numel;
      bucket.numel += slot.numel;
      bucket.shard_numel += slot.shard_numel;
    }
  }
  for (UnitLayout& unit : layout.units) {
    unit.gathers.clear();
    // Other parameters first, so that the gathers' order is the same on every rank.
    for (bool routed : {false, true}) {
      for (int p : unit.params) {
        ParamSlot& slot = layout.params[p];
        if (slot.routed_expert != routed) continue;
        UnitGather& gather = GatherOf(unit, slot);
        slot.unit_shard_offset = gather.shard_numel;
        gather.params.push_back(p);
        gather.shard_numel += slot.shard_numel;
        unit.numel += slot.numel;
      }
    }
  }
}

}  // namespace

absl::StatusOr<ShardLayout> ShardLayout::FromPlan(const ir::Sharding& sharding, int stage_index,
                                                  const ModuleParams& module_params,
                                                  int64_t shard_rank, int64_t expert_shard_rank) {
  const int64_t degree = std::max<int64_t>(1, sharding.degree());
  ShardLayout layout = Skeleton(module_params, degree, shard_rank);
  layout.expert_degree = std::max<int64_t>(1, sharding.expert_shard_degree());
  layout.expert_shard_rank = expert_shard_rank;
  layout.stage = sharding.stage();
  layout.prefetch_elements = sharding.prefetch_bucket_elements();
  std::map<std::string, int> index;
  for (size_t i = 0; i < layout.params.size(); ++i) index[layout.params[i].name] = static_cast<int>(i);
  for (const ir::ShardUnit& unit : sharding.units()) {
    if (unit.stage() != stage_index) continue;
    UnitLayout out;
    out.name = unit.name();
    for (const ir::Parameter& p : unit.parameters()) {
      auto it = index.find(p.name());
      if (it == index.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("the plan's shard unit ", unit.name(), " holds parameter ", p.name(),
                         ", which the model does not have"));
      }
      ParamSlot& slot = layout.params[it->second];
      slot.routed_expert = p.routed_expert();
      if (slot.routed_expert) SetShard(slot, layout.expert_degree, expert_shard_rank);
      if (slot.numel != p.local_count() || slot.shard_numel != p.shard_count()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "parameter ", p.name(), " has ", slot.numel, " elements in the model but the plan says ",
            p.local_count(), " (shard ", p.shard_count(), " of ", layout.DegreeOf(slot.routed_expert), ")"));
      }
      slot.tp_partial_grad = p.tp_partial_grad();
      slot.unit = static_cast<int>(layout.units.size());
      slot.persistent = p.persistent();
      slot.tp_dim = p.tp_dim();
      slot.tp_parts = std::max(1, p.tp_parts());
      slot.tp_replicas = std::max(1, p.tp_replicas());
      slot.tp_split = p.tp_dim() >= 0;
      slot.tied_to = p.tied_to();
      out.params.push_back(it->second);
    }
    layout.units.push_back(std::move(out));
  }
  for (const ir::Bucket& bucket : sharding.buckets()) {
    if (bucket.stage() != stage_index) continue;
    BucketLayout out;
    out.index = static_cast<int>(layout.buckets.size());
    for (const std::string& name : bucket.parameters()) {
      auto it = index.find(name);
      if (it == index.end()) {
        return absl::InvalidArgumentError(absl::StrCat("the plan's bucket ", bucket.index(),
                                                       " holds parameter ", name,
                                                       ", which the model does not have"));
      }
      const ParamSlot& slot = layout.params[it->second];
      if (slot.routed_expert != bucket.routed_experts()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the plan's bucket ", bucket.index(), " holds parameter ", name, ", which is ",
            slot.routed_expert ? "" : "not ", "a routed expert, but the bucket is ",
            bucket.routed_experts() ? "" : "not ", "one of routed experts"));
      }
      layout.params[it->second].bucket = out.index;
      out.params.push_back(it->second);
    }
    out.routed_experts = bucket.routed_experts();
    layout.buckets.push_back(std::move(out));
  }
  for (const ParamSlot& slot : layout.params) {
    if (slot.unit < 0 || slot.bucket < 0) {
      return absl::InvalidArgumentError(absl::StrCat("model parameter ", slot.name, " is in no ",
                                                     slot.unit < 0 ? "shard unit" : "bucket",
                                                     " of the plan"));
    }
  }
  AssignOffsets(layout);
  return layout;
}

ShardLayout ShardLayout::Replicated(const ModuleParams& module_params, int64_t bucket_elements) {
  ShardLayout layout = Skeleton(module_params, 1, 0);
  UnitLayout unit;
  unit.name = "model";
  for (size_t i = 0; i < layout.params.size(); ++i) {
    unit.params.push_back(static_cast<int>(i));
    layout.params[i].unit = 0;
  }
  layout.units.push_back(std::move(unit));
  int64_t filled = 0;
  for (int i = static_cast<int>(layout.params.size()) - 1; i >= 0; --i) {
    if (layout.buckets.empty() || filled >= std::max<int64_t>(1, bucket_elements)) {
      layout.buckets.emplace_back();
      layout.buckets.back().index = static_cast<int>(layout.buckets.size()) - 1;
      filled = 0;
    }
    layout.buckets.back().params.push_back(i);
    layout.params[i].bucket = layout.buckets.back().index;
    filled += layout.params[i].numel;
  }
  AssignOffsets(layout);
  return layout;
}

}  // namespace accel::exec
