#include "planner/step_communication.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "ir/plan_access.h"
#include "planner/collective_cost.h"
#include "planner/memory_model.h"

namespace accel::planner {
namespace {

// One process-group set as the ring sees it.
struct Link {
  int64_t size = 1;
  bool inter_node = false;
  double bytes_per_second = 0;
  double latency_seconds = 0;
};

Link LinkOf(const ir::Plan& plan, const ir::DeviceProfile& profile, const std::string& name) {
  Link link;
  for (const ir::ProcessGroupSet& set : plan.process_groups()) {
    if (set.name() != name || set.groups_size() == 0) continue;
    link.size = set.groups(0).ranks_size();
    for (const ir::RankGroup& g : set.groups()) {
      for (int32_t r : g.ranks()) {
        if (r < plan.ranks_size() && g.ranks_size() > 0 && g.ranks(0) < plan.ranks_size() &&
            plan.ranks(r).node() != plan.ranks(g.ranks(0)).node()) {
          link.inter_node = true;
        }
      }
    }
  }
  link.bytes_per_second = (link.inter_node ? profile.inter_node_bytes_per_second()
                                           : profile.intra_node_bytes_per_second()) *
                          profile.link_efficiency();
  link.latency_seconds = link.inter_node ? profile.inter_node_latency_seconds()
                                         : profile.intra_node_latency_seconds();
  return link;
}

// Builds terms for one stage; Add drops collectives over a single rank.
class Terms {
 public:
  Terms(const ir::Plan& plan, const ir::DeviceProfile& profile) : plan_(plan), profile_(profile) {}

  // `calls` collectives of `bytes_per_call` over `group`; returns the term (or nullptr).
  ir::CommunicationTime* Add(const std::string& group, Collective c, const std::string& what,
                             int64_t calls, double bytes_per_call) {
    const Link& link = CachedLink(group);
    if (link.size <= 1 || calls <= 0 || link.bytes_per_second <= 0) return nullptr;
    // Gloo has no reduce-scatter: the executor all-reduces a copy (executor/communicator.cc).
    Collective costed = c;
    std::string label = what;
    if (c == Collective::kReduceScatter && plan_.job().backend() == "gloo") {
      costed = Collective::kAllReduce;
      label += " (Gloo: all-reduce of a copy)";
    }
    ir::CommunicationTime t;
    t.set_group(group);
    t.set_collective(CollectiveName(c));
    t.set_what(label);
    t.set_group_size(link.size);
    t.set_link(link.inter_node ? "inter_node" : "intra_node");
    t.set_calls(calls);
    // Clamped so a plan at accel's limits cannot overflow the int64 conversion.
    t.set_bytes(static_cast<int64_t>(
        std::min(bytes_per_call * static_cast<double>(calls), 9.0e18)));
    t.set_seconds(RingSeconds(costed, link.size, calls, bytes_per_call, link.bytes_per_second,
                              link.latency_seconds));
    t.set_exposed_seconds(t.seconds());
    t.set_formula(RingFormula(costed, link.size, calls, bytes_per_call, link.bytes_per_second,
                              link.latency_seconds));
    terms_.push_back(std::move(t));
    return &terms_.back();
  }

  std::vector<ir::CommunicationTime> Take() { return std::move(terms_); }

 private:
  // LinkOf walks every rank of the set: done once per group name.
  const Link& CachedLink(const std::string& group) {
    for (const auto& [name, link] : links_) {
      if (name == group) return link;
    }
    links_.emplace_back(group, LinkOf(plan_, profile_, group));
    return links_.back().second;
  }

  std::vector<std::pair<std::string, Link>> links_;
  const ir::Plan& plan_;
  const ir::DeviceProfile& profile_;
  std::vector<ir::CommunicationTime> terms_;
};

int64_t DtypeBytes(const std::string& name) { return DTypeBytesByName(name).value_or(4); }

// Gradient buckets: the reducing collective per micro-step and the hidden part (see header).
void AddGradientBuckets(const ir::Plan& plan, int32_t stage, int64_t m, double backward_seconds,
                        Terms& terms) {
  const ir::Sharding& sh = plan.sharding();
  double bytes = 0, last = 0;
  int64_t count = 0;
  for (const ir::Bucket& bucket : sh.buckets()) {
    if (bucket.stage() != stage) continue;
    bytes += static_cast<double>(bucket.bytes());
    last = static_cast<double>(bucket.bytes());
    ++count;
  }
  if (count == 0) return;
  const bool every_microstep = sh.stage() >= 2;
  const int64_t reducing = every_microstep ? m : 1;
  ir::CommunicationTime* t =
      every_microstep
          ? terms.Add("dp_shard", Collective::kReduceScatter, "gradient buckets, every micro-step",
                      reducing * count, bytes / static_cast<double>(count))
          : terms.Add("dp", Collective::kAllReduce, "gradient buckets, last micro-step", count,
                      bytes / static_cast<double>(count));
  if (t != nullptr) {
    // Per reducing micro-step: the last bucket waits; the others hide behind backward compute.
    const double per_step = t->seconds() / static_cast<double>(reducing);
    const double last_share = bytes > 0 ? per_step * last / bytes : 0;
    const double rest = per_step - last_share;
    const double exposed = last_share + std::max(0.0, rest - backward_seconds);
    t->set_exposed_seconds(exposed * static_cast<double>(reducing));
    t->set_formula(t->formula() + "; exposed per reducing micro-step: last bucket + max(0, rest - " +
                   "backward)");
  }
  if (sh.hybrid() && sh.stage() >= 2) {
    terms.Add("dp_replicate", Collective::kAllReduce, "reduced gradient shards (hybrid)", count,
              bytes / static_cast<double>(count) / static_cast<double>(std::max<int64_t>(sh.degree(), 1)));
  }
}

// Unit all-gathers of sharding stages 1–3 (param dtype; gathered buffer = shard × degree).
void AddUnitGathers(const ir::Plan& plan, int32_t stage, int64_t m, Terms& terms) {
  const ir::Sharding& sh = plan.sharding();
  if (sh.stage() < 1 || sh.degree() <= 1) return;
  const double param_bytes = static_cast<double>(DtypeBytes(plan.precision().param_dtype()));
  const double degree = static_cast<double>(sh.degree());
  double all = 0, forward = 0, backward = 0;
  int64_t units = 0, forward_calls = 0, backward_calls = 0;
  const bool tied = plan.model().tie_word_embeddings();
  for (const ir::ShardUnit& u : sh.units()) {
    if (u.stage() != stage) continue;
    ++units;
    all += static_cast<double>(u.shard_count()) * degree * param_bytes;
    double gathered = 0;
    for (const ir::Parameter& p : u.parameters()) {
      if (!p.persistent()) gathered += static_cast<double>(p.shard_count()) * degree * param_bytes;
    }
    if (gathered <= 0) continue;
    forward += gathered;
    ++forward_calls;
    if (!(tied && u.name() == "embeddings")) {
      backward += gathered;
      ++backward_calls;
    }
  }
  if (sh.stage() <= 2) {
    if (units > 0) terms.Add("dp_shard", Collective::kAllGather, "updated units after the optimizer step", units, all / static_cast<double>(units));
    return;
  }
  if (forward_calls > 0) {
    terms.Add("dp_shard", Collective::kAllGather, "unit parameters before forward",
              m * forward_calls, forward / static_cast<double>(forward_calls));
  }
  if (backward_calls > 0) {
    terms.Add("dp_shard", Collective::kAllGather, "unit parameters before backward",
              m * backward_calls, backward / static_cast<double>(backward_calls));
  }
}

struct StageShape {
  int64_t layers = 0;
  bool embedding = false;
  bool head = false;
  bool first = false;
  bool last = false;
  // Sends of one microbatch's activation (and receives of its gradient) plus receives of its
  // activation (and sends of its gradient) over all the stage's chunks: one per chunk boundary
  // this stage touches (2 per interior chunk, 1 for the first and last virtual stage).
  int64_t links = 0;
};

StageShape ShapeOf(const ir::Plan& plan, int32_t stage) {
  StageShape shape;
  const ir::Pipeline& pipe = plan.pipeline();
  for (const ir::PipelineStage& st : pipe.stages()) {
    if (st.index() != stage) continue;
    shape.layers = ir::StageLayerCount(st);
    shape.embedding = st.has_embedding();
    shape.head = st.has_lm_head();
    const int32_t last_virtual = pipe.stages_size() * ir::VirtualStages(pipe) - 1;
    for (const ir::ModelChunk& c : ir::StageChunks(st)) {
      shape.links += (c.virtual_stage() > 0 ? 1 : 0) + (c.virtual_stage() < last_virtual ? 1 : 0);
    }
  }
  if (pipe.stages_size() == 0) {
    shape.layers = plan.model().num_layers();
    shape.embedding = shape.head = true;
  }
  shape.first = stage == 0;
  shape.last = stage >= pipe.stages_size() - 1;
  return shape;
}

void AddTensorParallel(const ir::Plan& plan, const StageShape& shape, int64_t m, double activation,
                       Terms& terms) {
  const bool sp = plan.mesh().sequence_parallel();
  const bool full = plan.training().recompute() == "full";
  const int64_t per_block = (full ? 3 : 2) * 2;  // collectives of each kind per block, both ways
  const int64_t blocks = m * shape.layers;
  if (sp) {
    terms.Add("tp", Collective::kAllGather, "block inputs of tp regions (sequence parallel)",
              blocks * per_block, activation);
    terms.Add("tp", Collective::kReduceScatter, "block outputs of tp regions (sequence parallel)",
              blocks * per_block, activation);
  } else {
    terms.Add("tp", Collective::kAllReduce, "block outputs and input gradients of tp regions",
              blocks * per_block, activation);
  }
  if (shape.embedding) {
    terms.Add("tp", Collective::kAllReduce, "vocabulary-parallel embedding output", m, activation);
  }
  if (shape.head) {
    terms.Add("tp", Collective::kAllReduce, "head input gradient", m, activation);
    const double loss = static_cast<double>(plan.batch().micro_batch_size() *
                                            plan.batch().seq_len()) * 4.0;
    terms.Add("tp", Collective::kAllReduce, "vocabulary-parallel loss (max, target, sum exp)",
              3 * m, loss);
  }
}

}  // namespace

absl::StatusOr<std::vector<ir::CommunicationTime>> StageCommunication(
    const ir::Plan& plan, const ir::DeviceProfile& profile, int32_t stage,
    double backward_seconds_per_microstep) {
  Terms terms(plan, profile);
  const int64_t m = std::max<int64_t>(plan.batch().grad_accum_steps(), 1);
  AddGradientBuckets(plan, stage, m, backward_seconds_per_microstep, terms);
  AddUnitGathers(plan, stage, m, terms);
  const StageShape shape = ShapeOf(plan, stage);
  int64_t cp = 1, tp = 1;
  for (const ir::MeshAxis& a : plan.mesh().axes()) {
    if (a.name() == "cp") cp = std::max<int64_t>(a.size(), 1);
    if (a.name() == "tp") tp = std::max<int64_t>(a.size(), 1);
  }
  const std::string& compute = plan.precision().compute_dtype().empty()
                                   ? plan.precision().param_dtype()
                                   : plan.precision().compute_dtype();
  const double activation = static_cast<double>(plan.batch().micro_batch_size()) *
                            static_cast<double>(plan.batch().seq_len() / cp) *
                            static_cast<double>(plan.model().hidden_size()) *
                            static_cast<double>(DtypeBytes(compute));
  AddTensorParallel(plan, shape, m, activation, terms);
  const double p2p = plan.mesh().sequence_parallel() ? activation / static_cast<double>(tp) : activation;
  terms.Add("pp", Collective::kSendRecv, "activations forward and gradients backward",
            2 * m * shape.links, p2p);
  return terms.Take();
}

double ExposedSeconds(const std::vector<ir::CommunicationTime>& terms) {
  double total = 0;
  for (const ir::CommunicationTime& t : terms) total += t.exposed_seconds();
  return total;
}

}  // namespace accel::planner
