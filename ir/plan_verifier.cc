#include "ir/plan_verifier.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>

#include "ir/enum_names.h"
#include "ir/pipeline_simulation.h"
#include "ir/plan_access.h"

namespace accel::ir {
namespace {


// sum += value; false (sum unchanged) when the result does not fit in int64. A plan read from a
// file (`accel worker --plan`) can hold any numbers: the verifier must report them, not overflow.
bool CheckedAdd(int64_t& sum, int64_t value) {
  int64_t result = 0;
  if (__builtin_add_overflow(sum, value, &result)) return false;
  sum = result;
  return true;
}

// Returns true when the mesh and the rank placements are consistent (or absent), which the group
// check relies on: 5 named axes of positive sizes, and each rank with 5 coordinates.
bool VerifyMeshAndRanks(const Plan& plan, std::vector<std::string>& out) {
  const Mesh& mesh = plan.mesh();
  if (mesh.axes_size() == 0) {
    if (plan.ranks_size() > 0) out.push_back("plan has rank placements but no mesh");
    return plan.ranks_size() == 0;
  }
  static const char* kNames[] = {"pp", "dp_replicate", "dp_shard", "cp", "tp"};
  if (mesh.axes_size() != 5) {
    out.push_back("mesh has " + std::to_string(mesh.axes_size()) + " axes, expected 5");
    return false;
  }
  int64_t product = 1;
  bool sizes_ok = true;
  for (int i = 0; i < 5; ++i) {
    if (mesh.axes(i).name() != kNames[i]) {
      out.push_back("mesh axis " + std::to_string(i) + " is '" + mesh.axes(i).name() + "', expected '" +
                    kNames[i] + "'");
    }
    if (mesh.axes(i).size() < 1) {
      out.push_back("mesh axis " + mesh.axes(i).name() + " size < 1");
      sizes_ok = false;
    } else if (sizes_ok && __builtin_mul_overflow(product, mesh.axes(i).size(), &product)) {
      out.push_back("mesh product overflows 64 bits");
      sizes_ok = false;
    }
  }
  if (!sizes_ok) return false;
  const int64_t world = plan.topology().world_size();
  if (world > 0 && product != world) {
    out.push_back("mesh product " + std::to_string(product) + " != world size " + std::to_string(world));
  }
  if (plan.ranks_size() == 0) return true;
  if (plan.ranks_size() != product) {
    out.push_back("plan has " + std::to_string(plan.ranks_size()) + " rank placements for " + std::to_string(product) +
                  " ranks");
    return false;
  }
  const int64_t per_node = plan.topology().devices_per_node();
  for (int r = 0; r < plan.ranks_size(); ++r) {
    const RankPlacement& p = plan.ranks(r);
    if (p.rank() != r) {
      out.push_back("placement " + std::to_string(r) + " has rank " + std::to_string(p.rank()));
      return false;
    }
    if (per_node > 0 && (p.node() != r / per_node || p.local_rank() != r % per_node)) {
      out.push_back("rank " + std::to_string(r) + " placed on node " + std::to_string(p.node()) + " device " +
                    std::to_string(p.local_rank()));
      return false;
    }
    if (p.coords_size() != 5) {
      out.push_back("rank " + std::to_string(r) + " has " + std::to_string(p.coords_size()) + " coordinates");
      return false;
    }
    int64_t rebuilt = 0;
    bool fits = true;
    for (int i = 0; i < 5 && fits; ++i) {
      int64_t term = 0;
      fits = !__builtin_mul_overflow(int64_t{p.coords(i)}, mesh.axes(i).stride(), &term) &&
             CheckedAdd(rebuilt, term);
    }
    if (!fits) {
      out.push_back("rank " + std::to_string(r) + " coordinates overflow 64 bits");
      return false;
    }
    if (rebuilt != r) {
      out.push_back("rank " + std::to_string(r) + " coordinates give rank " + std::to_string(rebuilt));
      return false;
    }
    if (p.stage() != p.coords(0)) {
      out.push_back("rank " + std::to_string(r) + " stage " + std::to_string(p.stage()) + " != pp coordinate");
      return false;
    }
  }
  return true;
}

// Needs a mesh and rank placements that VerifyMeshAndRanks accepted.
void VerifyGroups(const Plan& plan, std::vector<std::string>& out) {
  if (plan.process_groups_size() == 0 || plan.ranks_size() == 0) return;
  const int world = plan.ranks_size();
  std::map<std::string, int> axis_index;
  for (int i = 0; i < plan.mesh().axes_size(); ++i) axis_index[plan.mesh().axes(i).name()] = i;
  for (const ProcessGroupSet& set : plan.process_groups()) {
    std::vector<bool> in_set(plan.mesh().axes_size(), false);
    int64_t expected_size = 1;
    for (const std::string& a : set.axes()) {
      auto it = axis_index.find(a);
      if (it == axis_index.end()) {
        out.push_back("group set " + set.name() + " names unknown axis " + a);
        return;
      }
      if (in_set[it->second]) {
        out.push_back("group set " + set.name() + " names axis " + a + " twice");
        return;
      }
      in_set[it->second] = true;
      expected_size *= plan.mesh().axes(it->second).size();  // at most the world size
    }
    std::vector<int> seen(world, 0);
    for (const RankGroup& g : set.groups()) {
      const bool size_ok = set.partial()
                               ? g.ranks_size() >= 2 && g.ranks_size() <= expected_size &&
                                     g.ranks_size() == set.groups(0).ranks_size()
                               : g.ranks_size() == expected_size;
      if (!size_ok) {
        out.push_back("group set " + set.name() + " has a group of " + std::to_string(g.ranks_size()) +
                      " ranks, expected " + std::to_string(expected_size));
        return;
      }
      const RankPlacement* first = nullptr;
      for (int32_t r : g.ranks()) {
        if (r < 0 || r >= world) {
          out.push_back("group set " + set.name() + " names rank " + std::to_string(r));
          return;
        }
        ++seen[r];
        const RankPlacement& p = plan.ranks(r);
        if (first == nullptr) {
          first = &p;
          continue;
        }
        for (int a = 0; a < p.coords_size(); ++a) {
          if (!in_set[a] && p.coords(a) != first->coords(a)) {
            out.push_back("group set " + set.name() + " mixes ranks " + std::to_string(first->rank()) +
                          " and " + std::to_string(r) + " that differ on axis " + plan.mesh().axes(a).name());
            return;
          }
        }
      }
    }
    for (int r = 0; r < world; ++r) {
      if (seen[r] > 1 || (seen[r] == 0 && !set.partial())) {
        out.push_back("rank " + std::to_string(r) + " is in " + std::to_string(seen[r]) + " groups of set " + set.name());
        return;
      }
    }
  }
}

// Interleaved and ZBV stages hold v chunks, chunk c being virtual stage
// ScheduledVirtualStage(schedule, p, s, c), with layer_begin/end chunk 0's; otherwise no chunks.
// Returns each virtual stage's block range in order.
std::vector<std::pair<int64_t, int64_t>> VirtualStageRanges(const Pipeline& pipeline,
                                                            std::vector<std::string>& out) {
  const int p = pipeline.stages_size();
  const int v = VirtualStages(pipeline);
  std::vector<std::pair<int64_t, int64_t>> ranges(static_cast<size_t>(p) * v, {-1, -1});
  for (int s = 0; s < p; ++s) {
    const PipelineStage& stage = pipeline.stages(s);
    if (v == 1) {
      if (stage.chunks_size() > 0) out.push_back("stage " + std::to_string(s) + " has chunks but virtual_stages is 1");
      ranges[s] = {stage.layer_begin(), stage.layer_end()};
      continue;
    }
    if (stage.chunks_size() != v) {
      out.push_back("stage " + std::to_string(s) + " has " + std::to_string(stage.chunks_size()) + " chunks for virtual_stages " + std::to_string(v));
      return {};
    }
    for (int c = 0; c < v; ++c) {
      const ModelChunk& chunk = stage.chunks(c);
      const int32_t expected = ScheduledVirtualStage(pipeline.schedule(), p, s, c);
      if (chunk.virtual_stage() != expected) {
        out.push_back("stage " + std::to_string(s) + " chunk " + std::to_string(c) + " is virtual stage " +
                      std::to_string(chunk.virtual_stage()) + ", expected " + std::to_string(expected));
        return {};
      }
      ranges[static_cast<size_t>(chunk.virtual_stage())] = {chunk.layer_begin(), chunk.layer_end()};
    }
    if (stage.layer_begin() != stage.chunks(0).layer_begin() || stage.layer_end() != stage.chunks(0).layer_end()) {
      out.push_back("stage " + std::to_string(s) + " blocks differ from its chunk 0");
    }
  }
  return ranges;
}

void VerifyStages(const Plan& plan, std::vector<std::string>& out) {
  const Pipeline& pipeline = plan.pipeline();
  if (pipeline.stages_size() == 0) return;
  int64_t params = 0;
  // The head follows the last virtual stage: stage 0 under ZBV's V.
  const int p = pipeline.stages_size();
  const int head_stage = ScheduledStageOf(pipeline.schedule(), p, p * VirtualStages(pipeline) - 1);
  for (int s = 0; s < pipeline.stages_size(); ++s) {
    const PipelineStage& stage = pipeline.stages(s);
    if (stage.index() != s) out.push_back("stage " + std::to_string(s) + " has index " + std::to_string(stage.index()));
    if (stage.has_embedding() != (s == 0)) out.push_back("embedding not on the first stage");
    if (stage.has_lm_head() != (s == head_stage)) {
      out.push_back("head not on the stage of the last virtual stage");
    }
    if (!CheckedAdd(params, stage.parameter_count())) {
      out.push_back("stage parameter counts overflow 64 bits");
      return;
    }
  }
  const bool interleaved = VirtualStages(pipeline) > 1;
  const std::string unit = interleaved ? "virtual stage " : "stage ";
  int64_t next = 0;
  const auto ranges = VirtualStageRanges(pipeline, out);
  for (size_t k = 0; k < ranges.size(); ++k) {
    const auto [begin, end] = ranges[k];
    if (begin != next) out.push_back(unit + std::to_string(k) + " starts at layer " + std::to_string(begin) + ", expected " + std::to_string(next));
    if (end <= begin) out.push_back(unit + std::to_string(k) + " is empty");
    next = end;
  }
  if (!ranges.empty() && next != plan.model().num_layers()) {
    out.push_back("stages cover " + std::to_string(next) + " of " + std::to_string(plan.model().num_layers()) + " layers");
  }
  if (params != plan.model().parameters().total_count()) {
    out.push_back("stage parameters sum to " + std::to_string(params) + ", model has " +
                  std::to_string(plan.model().parameters().total_count()));
  }
  if (plan.mesh().axes_size() == 5 && pipeline.stages_size() != plan.mesh().axes(0).size()) {
    out.push_back(std::to_string(pipeline.stages_size()) + " stages for pp " + std::to_string(plan.mesh().axes(0).size()));
  }
}

// A tied copy (Parameter.tied_to) sits on the last stage, which lacks the embedding, and copies
// a parameter of the first stage's "embeddings" unit exactly; an "embedding" group joins them.
void VerifyTiedCopy(const Plan& plan, const ShardUnit& unit, const Parameter& copy,
                    std::vector<std::string>& out) {
  const int stages = plan.pipeline().stages_size();
  if (stages < 2 || unit.stage() != stages - 1) {
    out.push_back("tied copy " + copy.name() + " is not on the last of several stages");
    return;
  }
  const Parameter* original = nullptr;
  for (const ShardUnit& u : plan.sharding().units()) {
    for (const Parameter& p : u.parameters()) {
      if (p.name() == copy.tied_to() && u.stage() == 0) original = &p;
    }
  }
  if (original == nullptr || original->local_count() != copy.local_count() ||
      original->tp_dim() != copy.tp_dim() ||
      !std::equal(original->shape().begin(), original->shape().end(), copy.shape().begin(),
                  copy.shape().end())) {
    out.push_back("tied copy " + copy.name() + " does not match a first-stage parameter " +
                  copy.tied_to());
  }
  bool grouped = false;
  for (const ProcessGroupSet& set : plan.process_groups()) grouped = grouped || set.name() == "embedding";
  if (!grouped) out.push_back("tied copy " + copy.name() + " without an embedding group");
}

void VerifyShards(const Plan& plan, std::vector<std::string>& out) {
  const Sharding& sharding = plan.sharding();
  if (sharding.units_size() == 0) return;
  std::map<std::string, std::pair<int32_t, int64_t>> params;  // name -> (stage, local count)
  int64_t total = 0;
  const int64_t degree = std::max<int64_t>(1, sharding.degree());
  for (const ShardUnit& unit : sharding.units()) {
    int64_t local = 0;
    int64_t shard = 0;
    for (const Parameter& p : unit.parameters()) {
      if (p.count() < 0 || p.local_count() < 0 || p.shard_count() < 0) {
        out.push_back("parameter " + p.name() + " has a negative count");
        return;
      }
      // ceil(local / degree), written so that it cannot overflow; routed experts shard over
      // the expert-data-parallel group.
      const int64_t d = p.routed_expert() && sharding.expert_shard_degree() >= 1
                            ? sharding.expert_shard_degree()
                            : degree;
      const int64_t ceil_shard = p.local_count() / d + (p.local_count() % d != 0);
      if (p.shard_count() != ceil_shard) {
        out.push_back("parameter " + p.name() + " shard_count " + std::to_string(p.shard_count()) +
                      " != ceil(" + std::to_string(p.local_count()) + " / " + std::to_string(d) + ")");
      }
      if (p.persistent() && sharding.stage() != 3) {
        out.push_back("parameter " + p.name() + " is persistent outside sharding stage 3");
      }
      if (!params.emplace(p.name(), std::make_pair(unit.stage(), p.local_count())).second) {
        out.push_back("parameter " + p.name() + " is in more than one shard unit");
      }
      if (!p.tied_to().empty()) VerifyTiedCopy(plan, unit, p, out);
      if (!CheckedAdd(shard, p.shard_count()) || !CheckedAdd(total, p.tied_to().empty() ? p.count() : 0) ||
          !CheckedAdd(local, p.local_count())) {
        out.push_back("parameter counts overflow 64 bits");
        return;
      }
    }
    if (local != unit.local_count()) out.push_back("unit " + unit.name() + " count mismatch");
    if (shard != unit.shard_count()) {
      out.push_back("unit " + unit.name() + " shard_count " + std::to_string(unit.shard_count()) +
                    " != sum of its parameters " + std::to_string(shard));
    }
  }
  if (total != plan.model().parameters().total_count()) {
    out.push_back("shard units hold " + std::to_string(total) + " parameters, model has " +
                  std::to_string(plan.model().parameters().total_count()));
  }
  if (sharding.buckets_size() == 0) return;
  std::set<std::string> bucketed;
  for (const Bucket& bucket : sharding.buckets()) {
    int64_t elements = 0;
    for (const std::string& name : bucket.parameters()) {
      auto it = params.find(name);
      if (it == params.end()) {
        out.push_back("bucket " + std::to_string(bucket.index()) + " names unknown parameter " + name);
        continue;
      }
      if (it->second.first != bucket.stage()) {
        out.push_back("bucket " + std::to_string(bucket.index()) + " mixes stages");
      }
      if (!bucketed.insert(name).second) out.push_back("parameter " + name + " in two buckets");
      if (!CheckedAdd(elements, it->second.second)) {
        out.push_back("bucket " + std::to_string(bucket.index()) + " elements overflow 64 bits");
        return;
      }
    }
    if (elements != bucket.elements()) {
      out.push_back("bucket " + std::to_string(bucket.index()) + " elements " + std::to_string(bucket.elements()) +
                    " != sum of its parameters " + std::to_string(elements));
    }
  }
  if (bucketed.size() != params.size()) {
    out.push_back("buckets cover " + std::to_string(bucketed.size()) + " of " + std::to_string(params.size()) +
                  " parameters");
  }
}

// The compute ops a schedule runs per chunk and microbatch, in the order they must run: F then
// the fused B, or F, I (backward input) and W (backward weight) for the zero-bubble schedules.
std::vector<OpKind> ComputeKinds(PipelineSchedule schedule) {
  if (schedule == PIPELINE_SCHEDULE_ZB_H1 || schedule == PIPELINE_SCHEDULE_ZBV) {
    return {FORWARD, BACKWARD_INPUT, BACKWARD_WEIGHT};
  }
  return {FORWARD, BACKWARD};
}

std::string OpLetter(OpKind kind) {
  return kind == FORWARD ? "F" : kind == BACKWARD_INPUT ? "I" : kind == BACKWARD_WEIGHT ? "W" : "B";
}

// One stage's op list: each of `kinds` once per chunk and microbatch, in that order, and its
// recorded peaks (activations alive, pending weight gradients) the list's. False when the list
// is too broken to go on.
bool VerifyStageOps(const Pipeline& pipeline, int s, int64_t m, const std::vector<OpKind>& kinds,
                    std::vector<std::string>& out) {
  const int64_t v = VirtualStages(pipeline);
  const auto& ops = pipeline.stages(s).ops();
  const std::string stage = "stage " + std::to_string(s);
  // Every microbatch needs a forward and a backward op per chunk: fewer ops than 2·m·v cannot
  // be a complete schedule (and m is not trusted for the allocations below).
  if (m > static_cast<int64_t>(ops.size()) / 2 / v) {
    out.push_back(stage + " has " + std::to_string(ops.size()) + " ops for " + std::to_string(m) + " microbatches");
    return false;
  }
  // [kind][chunk · m + microbatch]: the op's index in the list.
  std::vector<std::vector<int>> at_of(kinds.size(), std::vector<int>(m * v, -1));
  int64_t alive = 0, peak = 0, pending = 0, pending_peak = 0;
  for (int i = 0; i < ops.size(); ++i) {
    const PipelineOp& op = ops[i];
    if (op.microbatch() < 0 || op.microbatch() >= m) {
      out.push_back(stage + " op " + std::to_string(i) + " has microbatch " + std::to_string(op.microbatch()));
      return false;
    }
    if (op.chunk() < 0 || op.chunk() >= v) {
      out.push_back(stage + " op " + std::to_string(i) + " has chunk " + std::to_string(op.chunk()));
      return false;
    }
    if (op.kind() == FORWARD) peak = std::max(peak, ++alive);
    if (op.kind() == BACKWARD || op.kind() == BACKWARD_INPUT) --alive;
    if (op.kind() == BACKWARD_INPUT) pending_peak = std::max(pending_peak, ++pending);
    if (op.kind() == BACKWARD_WEIGHT) --pending;
    const auto k = std::find(kinds.begin(), kinds.end(), op.kind()) - kinds.begin();
    if (k == static_cast<long>(kinds.size())) {
      if (op.kind() == BACKWARD || op.kind() == BACKWARD_INPUT || op.kind() == BACKWARD_WEIGHT) {
        out.push_back(stage + " op " + std::to_string(i) + " is " + OpLetter(op.kind()) + ", which " +
                      std::string(Name(pipeline.schedule())) + " does not run");
      }
      continue;
    }
    int& at = at_of[static_cast<size_t>(k)][op.chunk() * m + op.microbatch()];
    if (at >= 0) out.push_back(stage + " repeats " + OpLetter(op.kind()));
    at = i;
  }
  for (int64_t at = 0; at < m * v; ++at) {
    const std::string what = std::to_string(at % m) + (v > 1 ? " in chunk " + std::to_string(at / m) : "");
    for (size_t k = 0; k < kinds.size(); ++k) {
      if (at_of[k][at] < 0) {
        out.push_back(stage + " misses microbatch " + what);
        return false;
      }
      if (k > 0 && at_of[k][at] < at_of[k - 1][at]) {
        out.push_back(stage + " runs " + (kinds[k] == BACKWARD ? std::string("backward") : OpLetter(kinds[k])) +
                      " of " + what + " before its " +
                      (kinds[k] == BACKWARD ? std::string("forward") : OpLetter(kinds[k - 1])));
      }
    }
  }
  // The memory estimate reads both peaks: they must be the op list's.
  const PipelineStage& st = pipeline.stages(s);
  if (st.max_inflight_microbatches() != peak) {
    out.push_back(stage + " max_inflight_microbatches " + std::to_string(st.max_inflight_microbatches()) + " != " +
                  std::to_string(peak) + " activations alive at once in its ops");
  }
  if (st.max_pending_weight_grads() != pending_peak) {
    out.push_back(stage + " max_pending_weight_grads " + std::to_string(st.max_pending_weight_grads()) + " != " +
                  std::to_string(pending_peak) + " weight gradients pending at once in its ops");
  }
  return true;
}

// Checks every stage's op list covers each microbatch once, then runs the shared pipeline
// simulation (ir/pipeline_simulation.h): transport problems, stalls, and the plan's bubble
// against the simulated one.
void VerifySchedules(const Plan& plan, std::vector<std::string>& out) {
  const Pipeline& pipeline = plan.pipeline();
  const int p = pipeline.stages_size();
  if (p == 0 || pipeline.stages(0).ops_size() == 0) return;
  const int64_t m = pipeline.microbatches();
  if (m < 1) {
    out.push_back("pipeline has " + std::to_string(m) + " microbatches");
    return;
  }
  // One stage runs the fused backward whatever the schedule (gradient accumulation).
  const std::vector<OpKind> kinds = ComputeKinds(p > 1 ? pipeline.schedule() : PIPELINE_SCHEDULE_1F1B);
  for (int s = 0; s < p; ++s) {
    if (!VerifyStageOps(pipeline, s, m, kinds, out)) return;
  }

  // The simulation the schedule picture draws: transport (deadlocks, order), stalls, bubble.
  const PipelineTimeline timeline = SimulatePipeline(pipeline);
  for (const std::string& problem : timeline.transport) out.push_back(problem);
  if (!timeline.transport.empty()) return;
  if (!timeline.stall.empty()) {
    out.push_back("pipeline schedule stalls: " + timeline.stall);
    return;
  }
  if (std::abs(timeline.bubble_fraction - pipeline.bubble_fraction()) > 1e-9) {
    out.push_back("pipeline bubble_fraction " + std::to_string(pipeline.bubble_fraction()) +
                  " is not the simulated " + std::to_string(timeline.bubble_fraction));
  }
}

// With Model.kv_head_replicas R > 1: R divides tp and a "tp_kv" set groups the tp ranks R·j …
// R·j + R − 1 of each tp group (VerifyGroups already keeps a group inside one tp group).
void VerifyKvReplicaGroups(const Plan& plan, int64_t tp, std::vector<std::string>& out) {
  const int64_t replicas = plan.model().kv_head_replicas();
  if (replicas <= 1) return;
  if (tp % replicas != 0) {
    out.push_back("kv_head_replicas " + std::to_string(replicas) + " does not divide tp " + std::to_string(tp));
    return;
  }
  const ProcessGroupSet* kv = FindGroupSet(plan, "tp_kv");
  if (kv == nullptr) {
    if (plan.process_groups_size() > 0) out.push_back("kv_head_replicas " + std::to_string(replicas) + " without a tp_kv group");
    return;
  }
  const int tp_axis = static_cast<int>(Axis::kTp);
  for (const RankGroup& g : kv->groups()) {
    bool ok = g.ranks_size() == replicas;
    for (int i = 0; ok && i < g.ranks_size(); ++i) {
      const int32_t r = g.ranks(i);
      ok = r >= 0 && r < plan.ranks_size() && plan.ranks(r).coords_size() > tp_axis &&
           plan.ranks(r).coords(tp_axis) == plan.ranks(g.ranks(0)).coords(tp_axis) + i &&
           plan.ranks(g.ranks(0)).coords(tp_axis) % replicas == 0;
    }
    if (!ok) {
      out.push_back("a tp_kv group is not " + std::to_string(replicas) + " consecutive tp ranks starting at a multiple of " +
                    std::to_string(replicas));
      return;
    }
  }
}

// Every tp-split parameter's dim (each of its tp_parts blocks) divides by tp (by tp / R with
// tp_replicas R), so every tp rank holds local_count elements; sequence parallelism needs tp > 1 and seq_len divisible by tp.
void VerifyTensorParallel(const Plan& plan, std::vector<std::string>& out) {
  const int64_t tp = AxisSize(plan, Axis::kTp);
  if (plan.mesh().sequence_parallel()) {
    if (tp <= 1) out.push_back("sequence_parallel is set but tp is " + std::to_string(tp));
    if (tp > 1 && plan.batch().seq_len() % tp != 0) {
      out.push_back("sequence_parallel: seq_len " + std::to_string(plan.batch().seq_len()) + " does not divide by tp " + std::to_string(tp));
    }
  }
  for (const ShardUnit& unit : plan.sharding().units()) {
    for (const Parameter& p : unit.parameters()) {
      const int parts = std::max(1, p.tp_parts());
      if (p.tp_dim() < 0) {
        if (p.tp_parts() > 1) out.push_back("parameter " + p.name() + " has tp_parts but no tp_dim");
        if (p.local_count() != p.count()) out.push_back("replicated parameter " + p.name() + " has local_count != count");
        continue;
      }
      if (p.tp_dim() >= p.shape_size()) {
        out.push_back("parameter " + p.name() + " tp_dim " + std::to_string(p.tp_dim()) + " is not a dim of its shape");
        continue;
      }
      const int64_t extent = p.shape(p.tp_dim());
      const int64_t replicas = std::max(1, p.tp_replicas());
      if (replicas > 1 && (replicas != plan.model().kv_head_replicas() || tp % replicas != 0)) {
        out.push_back("parameter " + p.name() + " tp_replicas " + std::to_string(replicas) + " is not kv_head_replicas " +
                      std::to_string(plan.model().kv_head_replicas()) + " dividing tp " + std::to_string(tp));
        continue;
      }
      const int64_t slices = tp / replicas;
      // Vocabulary-parallel tensors (dim 0 rows) are padded: their rows need not divide.
      const bool padded = p.tp_dim() == 0 && p.local_count() * tp > p.count();
      if (!padded && (extent % parts != 0 || (extent / parts) % slices != 0)) {
        out.push_back("parameter " + p.name() + ": dim " + std::to_string(p.tp_dim()) + " of " + std::to_string(extent) + " in " +
                      std::to_string(parts) + " part(s) does not divide by " +
                      (replicas > 1 ? "tp / tp_replicas = " + std::to_string(slices) : "tp " + std::to_string(tp)));
      }
    }
  }
  VerifyKvReplicaGroups(plan, tp, out);
}

// Recompute names one module per layer ("full", "op": blocks, "selective": attention cores), each
// once, and "op" the outputs its blocks keep, each once; the executor checks the names against its
// model.
void VerifyRecompute(const Plan& plan, std::vector<std::string>& out) {
  const Training& training = plan.training();
  const Recompute mode = training.recompute();
  const int64_t listed = training.recompute_modules_size();
  const int64_t expected = mode == RECOMPUTE_FULL || mode == RECOMPUTE_OP || mode == RECOMPUTE_SELECTIVE
                               ? plan.model().num_layers()
                               : 0;
  if ((mode == RECOMPUTE_OP) != (training.recompute_kept_outputs_size() > 0)) {
    out.push_back("recompute " + std::string(Name(mode)) + " lists " +
                  std::to_string(training.recompute_kept_outputs_size()) + " kept outputs, expected " +
                  (mode == RECOMPUTE_OP ? "some" : "none"));
  }
  std::set<std::string> kept;
  for (const std::string& op : training.recompute_kept_outputs()) {
    if (!kept.insert(op).second) out.push_back("recompute kept output " + op + " is listed twice");
  }
  if (listed != expected) {
    out.push_back("recompute " + std::string(Name(mode)) + " lists " +
                  std::to_string(listed) + " modules, expected " + std::to_string(expected));
  }
  std::set<std::string> seen;
  for (const std::string& module : training.recompute_modules()) {
    if (!seen.insert(module).second) out.push_back("recompute module " + module + " is listed twice");
  }
  if (training.loss_chunks() < 0) {
    out.push_back("training.loss_chunks is " + std::to_string(training.loss_chunks()) + ", expected at least 0");
  }
}

// One enum field: set, and to a value this build of accel knows (a newer writer's value reads as
// its number). `optional` fields may stay UNSPECIFIED where plan.proto says what that means.
template <typename E>
void VerifyEnum(const char* field, E value, bool (*known)(int), bool optional,
                std::vector<std::string>& out) {
  if (value == 0) {
    if (!optional) out.push_back(std::string(field) + " is unspecified");
  } else if (!known(value)) {
    out.push_back(std::string(field) + " has unknown value " + std::to_string(value));
  }
}

// Every enum field the executor reads (plan.proto: UNSPECIFIED only where a field allows it), in
// the sections the plan has: a pass checked before a later one fills a section skips it.
void VerifyEnums(const Plan& plan, std::vector<std::string>& out) {
  if (plan.has_job()) VerifyEnum("job.backend", plan.job().backend(), Backend_IsValid, false, out);
  if (plan.has_model()) {
    VerifyEnum("model.arch", plan.model().arch(), Architecture_IsValid, false, out);
    VerifyEnum("model.norm_placement", plan.model().norm_placement(), NormPlacement_IsValid, true, out);
    VerifyEnum("model.mlp_activation", plan.model().mlp_activation(), MlpActivation_IsValid, true, out);
  }
  if (plan.has_data()) {
    const Data& data = plan.data();
    VerifyEnum("data.format", data.format(), DataFormat_IsValid, false, out);
    VerifyEnum("data.tokenizer", data.tokenizer(), TokenizerKind_IsValid, true, out);
    VerifyEnum("data.token_dtype", data.token_dtype(), TokenDtype_IsValid,
               data.format() != DATA_FORMAT_TOKENS, out);
  }
  if (plan.has_training()) {
    const Training& t = plan.training();
    VerifyEnum("training.recompute", t.recompute(), Recompute_IsValid, false, out);
    VerifyEnum("training.optimizer.kind", t.optimizer().kind(), OptimizerKind_IsValid, false, out);
    VerifyEnum("training.lr_schedule.kind", t.lr_schedule().kind(), LrScheduleKind_IsValid, false,
               out);
  }
  if (plan.has_precision()) {
    const Precision& p = plan.precision();
    VerifyEnum("precision.param_dtype", p.param_dtype(), Dtype_IsValid, false, out);
    VerifyEnum("precision.compute_dtype", p.compute_dtype(), Dtype_IsValid, false, out);
    VerifyEnum("precision.reduce_dtype", p.reduce_dtype(), Dtype_IsValid, false, out);
    VerifyEnum("precision.master_dtype", p.master_dtype(), Dtype_IsValid, true, out);
    VerifyEnum("precision.loss_scaling", p.loss_scaling(), LossScaling_IsValid, false, out);
  }
  if (plan.has_checkpoint()) {
    VerifyEnum("checkpoint.resume", plan.checkpoint().resume(), ResumePolicy_IsValid, false, out);
  }
  if (plan.has_topology()) {
    VerifyEnum("topology.device_type", plan.topology().device_type(), DeviceType_IsValid, false, out);
  }
  if (plan.has_sharding()) {
    VerifyEnum("sharding.offload", plan.sharding().offload(), Offload_IsValid, false, out);
  }
  const bool pipelined = plan.pipeline().stages_size() > 1;
  VerifyEnum("pipeline.schedule", plan.pipeline().schedule(), PipelineSchedule_IsValid, !pipelined,
             out);
  // Set with activation_shape by the schedule-pipeline pass.
  VerifyEnum("pipeline.activation_dtype", plan.pipeline().activation_dtype(), Dtype_IsValid,
             plan.pipeline().activation_shape().empty(), out);
}

// OLMo 2's and Gemma's block fields (plan.proto Model): llama only; sliding-window blocks ascending
// within [0, num_layers) and only with a window; q/k norms over the full width only with q/k norms.
void VerifyBlockVariant(const Plan& plan, std::vector<std::string>& out) {
  const Model& m = plan.model();
  const bool variant = m.norm_placement() != NORM_PLACEMENT_UNSPECIFIED || m.qk_norm_full_width() ||
                       m.norm_unit_offset() || m.embedding_scale() != 0 || m.mlp_activation() != MLP_ACTIVATION_UNSPECIFIED ||
                       m.query_pre_attn_scalar() != 0 || m.attn_logit_softcapping() != 0 ||
                       m.final_logit_softcapping() != 0 || m.sliding_window_layers_size() > 0 || m.rope_local_theta() != 0;
  if (variant && m.arch() != ARCHITECTURE_LLAMA) out.push_back("model block variant fields on a non-llama architecture");
  if (m.qk_norm_full_width() && !m.qk_norm()) out.push_back("model.qk_norm_full_width without model.qk_norm");
  if (m.sliding_window_layers_size() > 0 && m.sliding_window() <= 0) {
    out.push_back("model.sliding_window_layers without a positive sliding_window");
  }
  int64_t previous = -1;
  for (int64_t l : m.sliding_window_layers()) {
    if (l <= previous || l >= m.num_layers()) {
      out.push_back("model.sliding_window_layers not ascending within [0, num_layers)");
      break;
    }
    previous = l;
  }
}

// The mixture-of-experts message (plan.proto MixtureOfExperts) and what follows from it: the
// expert-parallel split of dp_shard × cp, each rank's expert range, the expert sharding degree.
void VerifyMoe(const Plan& plan, std::vector<std::string>& out) {
  const Model& model = plan.model();
  const MixtureOfExperts& moe = model.moe();
  const int64_t e = moe.num_experts();
  if (e <= 0) {
    if (moe.experts_per_token() != 0 || moe.expert_parallel() > 1 ||
        plan.sharding().expert_shard_degree() != 0) {
      out.push_back("model.moe has expert fields but num_experts " + std::to_string(e));
    }
    return;
  }
  if (model.arch() != ARCHITECTURE_LLAMA) out.push_back("model.moe on a non-llama architecture");
  if (moe.experts_per_token() < 1 || moe.experts_per_token() > e) {
    out.push_back("model.moe.experts_per_token " + std::to_string(moe.experts_per_token()) +
                  " outside [1, " + std::to_string(e) + "]");
  }
  if (moe.expert_ffn_size() <= 0) out.push_back("model.moe.expert_ffn_size is not positive");
  if ((moe.num_shared_experts() > 0) != (moe.shared_expert_ffn_size() > 0)) {
    out.push_back("model.moe shared experts without a width, or a width without shared experts");
  }
  VerifyEnum("model.moe.router_scoring", moe.router_scoring(), RouterScoring_IsValid, false, out);
  if (moe.routing_margin() < 1) out.push_back("model.moe.routing_margin below 1");
  int64_t previous = -1;
  for (int64_t l : moe.dense_layers()) {
    if (l <= previous || l >= model.num_layers()) {
      out.push_back("model.moe.dense_layers not ascending within [0, num_layers)");
      break;
    }
    previous = l;
  }
  const int64_t ep = moe.expert_parallel();
  if (ep <= 0) return;  // before resolve-auto
  if (e % ep != 0) out.push_back("expert_parallel " + std::to_string(ep) + " does not divide num_experts");
  const int64_t carved = AxisSize(plan, Axis::kDpShard) * AxisSize(plan, Axis::kCp);
  if (moe.expert_data_parallel() * ep != carved) {
    out.push_back("expert_parallel x expert_data_parallel != dp_shard x cp = " + std::to_string(carved));
  }
  if (plan.sharding().units_size() > 0 && plan.sharding().expert_shard_degree() != moe.expert_data_parallel()) {
    out.push_back("sharding.expert_shard_degree != model.moe.expert_data_parallel");
  }
  for (const RankPlacement& r : plan.ranks()) {
    if (r.expert_end() - r.expert_begin() != e / ep || r.expert_begin() % (e / ep) != 0) {
      out.push_back("rank " + std::to_string(r.rank()) + " holds experts [" +
                    std::to_string(r.expert_begin()) + ", " + std::to_string(r.expert_end()) +
                    "), not one expert-parallel share of " + std::to_string(e / ep));
      return;
    }
  }
}

}  // namespace

std::vector<std::string> VerifyPlan(const Plan& plan) {
  std::vector<std::string> out;
  VerifyEnums(plan, out);
  if (VerifyMeshAndRanks(plan, out)) {
    VerifyGroups(plan, out);
    VerifyTensorParallel(plan, out);
  } else if (plan.process_groups_size() > 0) {
    out.push_back("process groups not checked: the mesh or the rank placements are invalid");
  }
  VerifyStages(plan, out);
  VerifyShards(plan, out);
  VerifySchedules(plan, out);
  VerifyRecompute(plan, out);
  VerifyMoe(plan, out);
  VerifyBlockVariant(plan, out);
  return out;
}

}  // namespace accel::ir
