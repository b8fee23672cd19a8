#include "planner/shard_layout.h"

#include <algorithm>

#include "ir/enum_names.h"

namespace accel::planner {
namespace {

// The routed experts' part of one unit (StageShardTotals::expert_*).
struct ExpertShards {
  int64_t shard = 0;
  int64_t gathered = 0;
};

// Adds one unit to its stage's totals: `gathered` is the shard elements of its non-persistent
// parameters but the routed experts' (`experts`); `skip_backward` for the tied embeddings,
// which stay gathered until backward.
void AddUnit(StageShardTotals& t, bool skip_backward, int64_t local, int64_t shard,
             int64_t gathered, const ExpertShards& experts = {}) {
  ++t.units;
  t.local_elements += local;
  t.shard_elements += shard;
  t.expert_shard_elements += experts.shard;
  if (experts.shard > 0) ++t.expert_units;
  if (experts.gathered > 0) {
    t.expert_gather_elements += experts.gathered;
    ++t.expert_gather_units;
  }
  if (gathered <= 0) return;
  t.forward_gather_elements += gathered;
  ++t.forward_gather_units;
  if (skip_backward) return;
  t.backward_gather_elements += gathered;
  ++t.backward_gather_units;
}

// Counts one parameter of `local` elements with tp split `tp_dim` into its stage.
void AddTpReplicated(StageShardTotals& t, int tp_dim, int64_t local) {
  if (tp_dim >= 0) return;
  ++t.tp_replicated_params;
  t.tp_replicated_elements += local;
}

StageShardTotals& At(ShardTotals& totals, int32_t stage) {
  if (stage < 0) stage = 0;
  if (static_cast<size_t>(stage) >= totals.stages.size()) totals.stages.resize(stage + 1);
  return totals.stages[stage];
}

// Counts one bucket parameter of `bytes` into its stage.
void AddBucketBytes(StageShardTotals& t, bool opens, int64_t bytes) {
  if (opens) {
    ++t.buckets;
    t.last_bucket_bytes = 0;
  }
  t.bucket_bytes += bytes;
  t.last_bucket_bytes += bytes;
}

}  // namespace

std::string UnitLayout::Name() const {
  switch (kind) {
    case Kind::kEmbeddings: return "embeddings";
    case Kind::kHead: return "head";
    case Kind::kLayer: break;
  }
  return "layers." + std::to_string(layer);
}

int64_t ShardLayout::Size(const UnitLayout& unit) const {
  return static_cast<int64_t>(unit.params->size()) + (unit.tied_copy ? 1 : 0);
}

const ParamInfo& ShardLayout::Param(const UnitLayout& unit, int64_t i) const {
  return i < static_cast<int64_t>(unit.params->size()) ? (*unit.params)[i] : tied_copy;
}

ShardLayout LayOutUnits(const ModelParams& params,
                        const google::protobuf::RepeatedPtrField<ir::PipelineStage>& stages,
                        bool tie_word_embeddings) {
  ShardLayout out;
  // The head's stage: the last, or the one marked has_lm_head (stage 0 under zbv's V).
  int32_t head = static_cast<int32_t>(stages.size()) - 1;
  for (const ir::PipelineStage& stage : stages) {
    if (stage.has_lm_head()) head = stage.index();
  }
  const bool tied_copy = tie_word_embeddings && head > 0;
  out.units.reserve(params.layers.size() + 2);
  out.units.push_back({UnitLayout::Kind::kEmbeddings, -1, 0, &params.embedding, false});
  // Stage by stage (each stage's chunks in order when interleaved), the head after its stage's
  // blocks, so a stage's units are consecutive and in the order its module registers them.
  for (const ir::PipelineStage& stage : stages) {
    for (int c = 0; c < std::max(stage.chunks_size(), 1); ++c) {
      const int64_t begin = stage.chunks_size() > 0 ? stage.chunks(c).layer_begin() : stage.layer_begin();
      const int64_t end = stage.chunks_size() > 0 ? stage.chunks(c).layer_end() : stage.layer_end();
      for (int64_t l = begin; l < end; ++l) {
        out.units.push_back({UnitLayout::Kind::kLayer, l, stage.index(), &params.layers[l], false});
      }
    }
    if (stage.index() == head) out.units.push_back({UnitLayout::Kind::kHead, -1, head, &params.head, tied_copy});
  }
  if (stages.empty()) out.units.push_back({UnitLayout::Kind::kHead, -1, head, &params.head, tied_copy});
  if (tied_copy) {
    out.tied_copy = params.embedding.front();
    out.tied_copy.name = "lm_head.weight";
  }
  return out;
}

int64_t ShardCount(const ParamInfo& param, int64_t degree, int64_t expert_degree) {
  if (param.routed_expert && expert_degree >= 1) degree = expert_degree;
  return (param.local_count + degree - 1) / degree;
}

const StageShardTotals& ShardTotals::Stage(int32_t stage) const {
  static const StageShardTotals kEmpty;
  if (stage < 0 || static_cast<size_t>(stage) >= stages.size()) return kEmpty;
  return stages[stage];
}

ShardTotals ShardTotalsFromPlan(const ir::Plan& plan) {
  ShardTotals totals;
  const bool tied = plan.model().tie_word_embeddings();
  for (const ir::ShardUnit& u : plan.sharding().units()) {
    int64_t gathered = 0;
    ExpertShards experts;
    StageShardTotals& stage = At(totals, u.stage());
    for (const ir::Parameter& p : u.parameters()) {
      if (p.routed_expert()) {
        experts.shard += p.shard_count();
        if (!p.persistent()) experts.gathered += p.shard_count();
      } else if (!p.persistent()) {
        gathered += p.shard_count();
      }
      AddTpReplicated(stage, p.tp_dim(), p.local_count());
    }
    AddUnit(stage, tied && u.name() == "embeddings", u.local_count(), u.shard_count(), gathered,
            experts);
  }
  // Plan order is the order buckets open: a bucket's stage totals take it as their last.
  for (const ir::Bucket& b : plan.sharding().buckets()) {
    AddBucketBytes(At(totals, b.stage()), true, b.bytes());
  }
  // The routed experts' share of the buckets, in the reduce dtype as the buckets are.
  const int reduce_bytes = ir::DtypeBytes(plan.precision().reduce_dtype());
  for (const ir::ShardUnit& u : plan.sharding().units()) {
    for (const ir::Parameter& p : u.parameters()) {
      if (p.routed_expert()) {
        At(totals, u.stage()).expert_bucket_bytes += p.local_count() * (reduce_bytes > 0 ? reduce_bytes : 4);
      }
    }
  }
  return totals;
}

ShardTotals ShardTotalsFromLayout(const ShardLayout& layout, int64_t degree, bool stage3,
                                  int64_t persistence, int64_t cap, int64_t bytes_per,
                                  bool tie_word_embeddings, int64_t expert_degree) {
  ShardTotals totals;
  if (layout.units.empty()) return totals;
  totals.stages.resize(std::max(layout.units.back().stage, 0) + 1);
  for (const UnitLayout& u : layout.units) {
    int64_t local = 0, shard = 0, gathered = 0;
    ExpertShards experts;
    StageShardTotals& stage = At(totals, u.stage);
    for (int64_t i = 0; i < layout.Size(u); ++i) {
      const ParamInfo& p = layout.Param(u, i);
      AddTpReplicated(stage, p.tp_dim, p.local_count);
      // The search plans thousands of unsharded layouts: skip the division there.
      const int64_t n = degree == 1 && expert_degree <= 1 ? p.local_count
                                                          : ShardCount(p, degree, expert_degree);
      local += p.local_count;
      shard += n;
      const bool persistent = stage3 && p.local_count <= persistence;
      if (p.routed_expert) {
        experts.shard += n;
        if (!persistent) experts.gathered += n;
      } else if (!persistent) {
        gathered += n;
      }
    }
    AddUnit(stage, tie_word_embeddings && u.kind == UnitLayout::Kind::kEmbeddings, local, shard,
            gathered, experts);
  }
  // Bucket bytes are elements × bytes_per, so summing per parameter gives each bucket's bytes.
  WalkBuckets(layout, cap, [&](const ParamInfo& p, int32_t stage, bool opens) {
    AddBucketBytes(At(totals, stage), opens, p.local_count * bytes_per);
    if (p.routed_expert) At(totals, stage).expert_bucket_bytes += p.local_count * bytes_per;
  });
  return totals;
}

std::optional<ShardTotals> ShardTotalsCache::Find(const std::vector<int64_t>& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = totals_.find(key);
  if (it == totals_.end()) return std::nullopt;
  return it->second;
}

void ShardTotalsCache::Put(std::vector<int64_t> key, const ShardTotals& totals) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.emplace(std::move(key), totals);
}

}  // namespace accel::planner
