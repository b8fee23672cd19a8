#include "planner/step_communication.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "ir/enum_names.h"
#include "ir/plan_access.h"
#include "planner/collective_cost.h"
#include "planner/device_profiles.h"
#include "planner/memory_model.h"
#include "planner/mesh_groups.h"
#include "planner/moe_activations.h"
#include "planner/moe_layers.h"
#include "planner/step_compute.h"
#include "planner/step_flops.h"

namespace accel::planner {

namespace {

// A link named `name` over groups of `span`: the intra- or inter-node bandwidth × link_efficiency
// and latency of the profile, by whether a group crosses nodes.
void SetLink(const ir::DeviceProfile& profile, const char* name, const GroupSpan& span,
             GroupLinks::Link& link) {
  link.name = name;
  link.size = span.size;
  link.inter_node = span.inter_node;
  link.link_class = span.inter_node ? ir::LINK_CLASS_INTER_NODE : ir::LINK_CLASS_INTRA_NODE;
  link.bytes_per_second = (link.inter_node ? profile.inter_node_bytes_per_second()
                                           : profile.intra_node_bytes_per_second()) *
                          profile.link_efficiency();
  link.latency_seconds = link.inter_node ? profile.inter_node_latency_seconds()
                                         : profile.intra_node_latency_seconds();
}

}  // namespace

GroupLinks::GroupLinks(const ir::Plan& plan, const ir::DeviceProfile& profile) {
  const char* const names[] = {"dp", "dp_shard", "dp_replicate", "cp", "tp", "pp"};
  const std::array<int64_t, 5> sizes = MeshAxisSizes(plan.mesh());
  for (size_t i = 0; i < std::size(names); ++i) {
    const GroupSpan span =
        SpanOfGroupSet(sizes, plan.topology().devices_per_node(), *FindGroupSetAxes(names[i]));
    SetLink(profile, names[i], span, links_[i]);
  }
  // The executor's tensor-parallel collectives block the step (executor/models/tensor_parallel.cc).
  links_[4].blocking_seconds = profile.blocking_collective_seconds();
  // "tp_kv": a part of each tp group (ir::Model.kv_head_replicas ranks) on the tp group's link.
  Link& kv = links_[6];
  kv = links_[4];
  kv.name = "tp_kv";
  kv.size = std::max<int64_t>(plan.model().kv_head_replicas(), 1);
  // "embedding": the first and the last rank of each pp group, on the pp group's link.
  Link& embedding = links_[7];
  embedding = links_[5];
  embedding.name = "embedding";
  embedding.size = plan.model().tie_word_embeddings() && links_[5].size > 1 ? 2 : 1;
  // Mixture of experts: "ep" and "ep_dp" (mesh_groups.h), on the link their groups cross.
  const int64_t ep = ExpertParallel(plan.model());
  for (const bool data_parallel : {false, true}) {
    Link& link = links_[data_parallel ? 9 : 8];
    const GroupSpan span = HasMoe(plan.model())
                               ? SpanOfExpertGroups(sizes, plan.topology().devices_per_node(), ep,
                                                    data_parallel)
                               : GroupSpan{};
    SetLink(profile, data_parallel ? kExpertDataParallelSet : kExpertParallelSet, span, link);
  }
  // The device and its host memory: PCIe, or on cpu a copy within memory (a read and a write).
  const int64_t devices_per_node = plan.topology().devices_per_node();
  const double share = WorkerShare(profile, devices_per_node);
  Link& host = links_.back();
  host.name = "host_link";
  host.size = 2;
  host.link_class = ir::LINK_CLASS_HOST;
  const bool pcie = profile.host_link_bytes_per_second() > 0;
  host.bytes_per_second = pcie ? profile.host_link_bytes_per_second()
                               : profile.memory_bytes_per_second() * profile.memory_efficiency() *
                                     share / 2;
  host.latency_seconds = pcie ? kHostCopyLatencySeconds : 0;
  const ir::Dtype compute = ir::ComputeDtype(plan.precision());
  matmul_flops_per_second_ =
      MatmulPeakFlopsPerSecond(profile, compute) * profile.matmul_efficiency() * share;
  if (profile.shared_cores_per_node() > 0) {
    shared_core_bucket_overlap_ = std::clamp(profile.shared_core_bucket_overlap(), 0.0, 1.0);
  }
}

const GroupLinks::Link& GroupLinks::Of(std::string_view group) const {
  static const Link kNone;
  for (const Link& link : links_) {
    if (group == link.name) return link;
  }
  return kNone;
}

namespace {

// One collective of a stage, kept as numbers: the estimate compares every stage and builds
// CommunicationTime messages only for the stage the plan shows.
struct Term {
  const char* group = "";
  Collective collective = Collective::kAllReduce;
  Collective costed = Collective::kAllReduce;  // what the executor runs (see Terms::Add)
  const char* what = "";
  const GroupLinks::Link* link = nullptr;
  int64_t calls = 0;
  double bytes_per_call = 0;
  double seconds = 0;
  double exposed_seconds = 0;
  bool overlapped = false;  // gradient buckets: exposed is the part not hidden by backward
  double shared_core_hidden = 0;  // gradient buckets on shared cores: the profile's hidden fraction
  double hidden_seconds = 0;  // ring attention: compute the transfers overlap
};

// Builds terms for one stage; Add drops collectives over a single rank.
class Terms {
 public:
  Terms(const ir::Plan& plan, const GroupLinks& links) : plan_(plan), links_(links) {
    terms_.reserve(32);  // every term a stage can have: one allocation
  }

  // `calls` collectives of `bytes_per_call` over `group`; returns the term (or nullptr), valid
  // until the next Add.
  Term* Add(const char* group, Collective c, const char* what, int64_t calls,
            double bytes_per_call) {
    const GroupLinks::Link& link = links_.Of(group);
    if (link.size <= 1 || calls <= 0 || link.bytes_per_second <= 0) return nullptr;
    Term t;
    t.group = group;
    t.collective = c;
    // Gloo has no reduce-scatter: the executor all-reduces a copy (executor/communicator.cc).
    const bool gloo_copy = c == Collective::kReduceScatter && plan_.job().backend() == ir::BACKEND_GLOO;
    t.costed = gloo_copy ? Collective::kAllReduce : c;
    t.what = what;
    t.link = &link;
    t.calls = calls;
    t.bytes_per_call = bytes_per_call;
    t.seconds = RingSeconds(t.costed, link.size, calls, bytes_per_call, link.bytes_per_second,
                            link.latency_seconds) +
                static_cast<double>(calls) * link.blocking_seconds;
    t.exposed_seconds = t.seconds;
    terms_.push_back(t);
    return &terms_.back();
  }

  const GroupLinks& links() const { return links_; }

  // Σ exposed seconds, in the order the messages list them.
  double ExposedSeconds() const {
    double total = 0;
    for (const Term& t : terms_) total += t.exposed_seconds;
    return total;
  }

  // The terms as messages; `formulas` fills CommunicationTime.formula.
  std::vector<ir::CommunicationTime> Messages(bool formulas) const {
    std::vector<ir::CommunicationTime> out;
    out.reserve(terms_.size());
    for (const Term& t : terms_) out.push_back(Message(t, formulas));
    return out;
  }

 private:
  static ir::CommunicationTime Message(const Term& t, bool formulas) {
    const GroupLinks::Link& link = *t.link;
    ir::CommunicationTime m;
    m.set_group(t.group);
    m.set_collective(IrCollective(t.collective));
    // The layout search (formulas false) reads the times only: no text to allocate.
    if (formulas) {
      m.set_what(t.costed != t.collective ? std::string(t.what) + " (Gloo: all-reduce of a copy)"
                                          : std::string(t.what));
    }
    m.set_group_size(link.size);
    m.set_link(link.link_class);
    m.set_calls(t.calls);
    // Clamped so a plan at accel's limits cannot overflow the int64 conversion.
    m.set_bytes(
        static_cast<int64_t>(std::min(t.bytes_per_call * static_cast<double>(t.calls), 9.0e18)));
    m.set_seconds(t.seconds);
    m.set_exposed_seconds(t.exposed_seconds);
    if (!formulas) return m;
    m.set_formula(RingFormula(t.costed, link.size, t.calls, t.bytes_per_call, link.bytes_per_second,
                              link.latency_seconds));
    if (link.blocking_seconds > 0) {
      char blocking[32];
      std::snprintf(blocking, sizeof(blocking), "%g", link.blocking_seconds);
      m.set_formula(m.formula() + " + " + std::to_string(t.calls) + " x " + blocking +
                    " s blocking (profile)");
    }
    if (t.overlapped) {
      m.set_formula(m.formula() +
                    "; exposed per reducing micro-step: last bucket + max(0, rest - " +
                    "backward)");
    }
    if (t.shared_core_hidden > 0) {
      char hidden[32];
      std::snprintf(hidden, sizeof(hidden), "%.3g", t.shared_core_hidden);
      m.set_formula(m.formula() + ", x (1 - " + hidden + " hidden on shared cores (profile))");
    }
    if (t.hidden_seconds > 0) {
      m.set_formula(m.formula() + "; exposed: max(0, that - " + std::to_string(t.hidden_seconds) +
                    " s of attention core compute x (cp-1)/cp it overlaps)");
    }
    return m;
  }

  const ir::Plan& plan_;
  const GroupLinks& links_;
  std::vector<Term> terms_;
};

// Bytes per element; 4 when the plan leaves the dtype unspecified.
int64_t BytesOr4(ir::Dtype dtype) { return dtype == ir::DTYPE_UNSPECIFIED ? 4 : ir::DtypeBytes(dtype); }

// The routed experts' gradients (mixture of experts): reduced over "ep_dp", the ranks that hold
// the same experts, as the dense buckets are over the data-parallel groups (reduce-scatter every
// micro-step from stage 2, else an all-reduce on the last), one collective per unit holding
// experts; they hide behind the backward the dense buckets left (`backward_left`, per reducing
// micro-step).
void AddExpertGradients(const ir::Plan& plan, const StageShardTotals& shards, int64_t reducing,
                        double backward_left, Terms& terms) {
  if (shards.expert_units == 0 || shards.expert_bucket_bytes == 0) return;
  const bool every_microstep = plan.sharding().stage() >= 2;
  const double per_call = static_cast<double>(shards.expert_bucket_bytes) /
                          static_cast<double>(shards.expert_units);
  Term* t = terms.Add(kExpertDataParallelSet,
                      every_microstep ? Collective::kReduceScatter : Collective::kAllReduce,
                      every_microstep ? "routed experts' gradients, every micro-step"
                                      : "routed experts' gradients, last micro-step",
                      reducing * shards.expert_units, per_call);
  if (t == nullptr) return;
  const double per_step = t->seconds / static_cast<double>(reducing);
  const double hidden = terms.links().shared_core_bucket_overlap();
  t->exposed_seconds = std::max(0.0, per_step - backward_left) * (1.0 - hidden) *
                       static_cast<double>(reducing);
  t->shared_core_hidden = hidden;
}

// Gradient buckets: the reducing collective per micro-step and the hidden part (see header).
void AddGradientBuckets(const ir::Plan& plan, const StageShardTotals& shards, int64_t m,
                        double backward_seconds, Terms& terms) {
  const ir::Sharding& sh = plan.sharding();
  // The routed experts' gradients are reduced over "ep_dp" (AddExpertGradients).
  const double bytes = static_cast<double>(shards.bucket_bytes - shards.expert_bucket_bytes);
  const double last = static_cast<double>(shards.last_bucket_bytes);
  const int64_t count = shards.buckets;
  if (count == 0) return;
  const bool every_microstep = sh.stage() >= 2;
  const int64_t reducing = every_microstep ? m : 1;
  Term* t =
      every_microstep
          ? terms.Add("dp_shard", Collective::kReduceScatter, "gradient buckets, every micro-step",
                      reducing * count, bytes / static_cast<double>(count))
          : terms.Add("dp", Collective::kAllReduce, "gradient buckets, last micro-step", count,
                      bytes / static_cast<double>(count));
  double backward_left = backward_seconds;  // per reducing micro-step, after these buckets
  if (t != nullptr) {
    // Per reducing micro-step: the last bucket waits; the others hide behind backward compute.
    // On shared cores (backward_seconds 0) the profile's measured fraction hides instead.
    const double per_step = t->seconds / static_cast<double>(reducing);
    const double last_share = bytes > 0 ? per_step * last / bytes : 0;
    const double rest = per_step - last_share;
    const double hidden = terms.links().shared_core_bucket_overlap();
    const double exposed = (last_share + std::max(0.0, rest - backward_seconds)) * (1.0 - hidden);
    t->exposed_seconds = exposed * static_cast<double>(reducing);
    t->overlapped = true;
    t->shared_core_hidden = hidden;
    backward_left = std::max(0.0, backward_seconds - rest);
  }
  AddExpertGradients(plan, shards, reducing, backward_left, terms);
  // The executor all-reduces the accumulated fp32 shards over dp_replicate once per step and
  // bucket whenever it is > 1 from stage 2 (zero_sync.cc GradShardSync::AfterLastMicroStep),
  // with or without sharding.hybrid; bucket bytes are in the reduce dtype.
  const double owned = every_microstep ? static_cast<double>(std::max<int64_t>(sh.degree(), 1)) : 1.0;
  if (sh.stage() >= 2) {
    const double fp32 = 4.0 / static_cast<double>(BytesOr4(plan.precision().reduce_dtype()));
    // Routed experts' shards are 1 / ep_dp of their (E / ep) gradients.
    const double experts =
        static_cast<double>(shards.expert_bucket_bytes) /
        static_cast<double>(std::max<int64_t>(sh.expert_shard_degree(), 1)) / static_cast<double>(count);
    terms.Add("dp_replicate", Collective::kAllReduce, "accumulated gradient shards, last micro-step (hybrid)",
              count, (bytes / static_cast<double>(count) / owned + experts) * fp32);
  }
  // Context parallel ranks hold the same state and see different tokens: the reduced gradients
  // (shards) are summed over cp once per step (plan.proto Sharding).
  terms.Add("cp", Collective::kAllReduce, "reduced gradients of the sequence chunks (cp)", count,
            bytes / static_cast<double>(count) / owned);
}

// Sharding offload (ZeRO-Offload, Ren et al. 2021 §4; plan.proto Sharding.offload): copies
// between the device and its host memory, exposed (the estimate assumes no overlap): the
// reduced gradient shards to the host on every reducing micro-step (in the reduce dtype), the
// updated parameter shards back after the host optimizer step (offload optimizer), or with
// offload all the parameter shards to the device before every stage-3 gather instead.
void AddOffloadCopies(const ir::Plan& plan, const StageShardTotals& shards, int64_t m,
                      Terms& terms) {
  const ir::Sharding& sh = plan.sharding();
  if (sh.offload() == ir::OFFLOAD_UNSPECIFIED || sh.offload() == ir::OFFLOAD_NONE) return;
  const double degree = static_cast<double>(std::max<int64_t>(sh.degree(), 1));
  const int64_t reducing = sh.stage() >= 2 ? m : 1;
  if (shards.buckets > 0) {
    const double shard_bytes = static_cast<double>(shards.bucket_bytes) / degree;
    terms.Add("host_link", Collective::kSendRecv, "reduced gradient shards to the host (offload)",
              reducing * shards.buckets, shard_bytes / static_cast<double>(shards.buckets));
  }
  const double param_bytes = static_cast<double>(BytesOr4(plan.precision().param_dtype()));
  if (sh.offload() == ir::OFFLOAD_ALL) {
    if (shards.forward_gather_units > 0) {
      terms.Add("host_link", Collective::kSendRecv,
                "parameter shards to the device before forward gathers (offload all)",
                m * shards.forward_gather_units,
                static_cast<double>(shards.forward_gather_elements) * param_bytes /
                    static_cast<double>(shards.forward_gather_units));
    }
    if (shards.backward_gather_units > 0) {
      terms.Add("host_link", Collective::kSendRecv,
                "parameter shards to the device before backward gathers (offload all)",
                m * shards.backward_gather_units,
                static_cast<double>(shards.backward_gather_elements) * param_bytes /
                    static_cast<double>(shards.backward_gather_units));
    }
  } else if (shards.units > 0) {
    terms.Add("host_link", Collective::kSendRecv,
              "updated parameter shards to the device (offload)", shards.units,
              static_cast<double>(shards.shard_elements) * param_bytes /
                  static_cast<double>(shards.units));
  }
}

// Unit all-gathers of sharding stages 1–3 (param dtype; gathered buffer = shard × degree).
void AddUnitGathers(const ir::Plan& plan, const StageShardTotals& shards, int64_t m, Terms& terms) {
  const ir::Sharding& sh = plan.sharding();
  if (sh.stage() < 1 || sh.degree() <= 1) return;
  const double param_bytes = static_cast<double>(BytesOr4(plan.precision().param_dtype()));
  const double degree = static_cast<double>(sh.degree());
  const auto gathered_bytes = [&](int64_t elements) {
    return static_cast<double>(elements) * degree * param_bytes;
  };
  // Routed experts gather their shards over "ep_dp" (planner/shard_layout.h).
  const double expert_degree = static_cast<double>(std::max<int64_t>(sh.expert_shard_degree(), 1));
  const auto expert_bytes = [&](int64_t elements) {
    return static_cast<double>(elements) * expert_degree * param_bytes;
  };
  const double all = gathered_bytes(shards.shard_elements - shards.expert_shard_elements) +
                     expert_bytes(shards.expert_shard_elements);
  const double forward = gathered_bytes(shards.forward_gather_elements);
  const double backward = gathered_bytes(shards.backward_gather_elements);
  const int64_t units = shards.units;
  const int64_t forward_calls = shards.forward_gather_units;
  const int64_t backward_calls = shards.backward_gather_units;
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
  const int64_t expert_calls = shards.expert_gather_units;
  if (expert_calls > 0) {
    terms.Add(kExpertDataParallelSet, Collective::kAllGather,
              "routed experts' parameters before forward and before backward", 2 * m * expert_calls,
              expert_bytes(shards.expert_gather_elements) / static_cast<double>(expert_calls));
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
    // A neighbouring virtual stage on this same stage (ZBV's turn) is no message.
    auto remote = [&](int32_t vs) {
      return vs >= 0 && vs <= last_virtual && ir::ScheduledStageOf(pipe.schedule(), pipe.stages_size(), vs) != stage;
    };
    for (const ir::ModelChunk& c : ir::StageChunks(st)) {
      shape.links += (remote(c.virtual_stage() - 1) ? 1 : 0) + (remote(c.virtual_stage() + 1) ? 1 : 0);
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

// The embedding's and the head's collectives (see the header); `sp`: sequence parallel.
void AddTensorParallelEnds(const ir::Plan& plan, const StageShape& shape, int64_t m, bool sp,
                           double activation, Terms& terms) {
  if (shape.embedding && sp) {
    terms.Add("tp", Collective::kReduceScatter, "vocabulary-parallel embedding output (sequence parallel)",
              m, activation);
    terms.Add("tp", Collective::kAllGather, "embedding output gradient (sequence parallel)", m, activation);
  } else if (shape.embedding) {
    terms.Add("tp", Collective::kAllReduce, "vocabulary-parallel embedding output", m, activation);
  }
  if (!shape.head) return;
  if (sp) {
    terms.Add("tp", Collective::kAllGather, "head input (sequence parallel)", m, activation);
    terms.Add("tp", Collective::kReduceScatter, "head input gradient (sequence parallel)", m, activation);
  } else {
    terms.Add("tp", Collective::kAllReduce, "head input gradient", m, activation);
  }
  const double loss = static_cast<double>(plan.batch().micro_batch_size() *
                                          plan.batch().seq_len()) * 4.0;
  terms.Add("tp", Collective::kAllReduce, "vocabulary-parallel loss (max, target, sum exp)",
            3 * m, loss);
}

// The part of a parameter's fp32 gradient one rank holds after the data-parallel reduction:
// 1 at stage 0, 1/dp_shard from stage 1 (the owned range, ParamSlot::owned_begin/end).
double OwnedShare(const ir::Plan& plan) {
  const ir::Sharding& sh = plan.sharding();
  return sh.stage() >= 1 ? 1.0 / static_cast<double>(std::max<int64_t>(sh.degree(), 1)) : 1.0;
}

void AddTensorParallel(const ir::Plan& plan, const StageShape& shape, const StageShardTotals& shards,
                       int64_t m, double activation, Terms& terms) {
  const bool sp = plan.mesh().sequence_parallel();
  // Full and per-op recompute re-run a block's collectives (the executor keeps no collective's
  // output; torchtitan's per-op policy keeps reduce-scatters').
  const bool full = plan.training().recompute() == ir::RECOMPUTE_FULL || plan.training().recompute() == ir::RECOMPUTE_OP;
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
  // The replicated parameters' fp32 gradients, once per step in one all-reduce (see header).
  const double owned = OwnedShare(plan);
  if (sp && shards.tp_replicated_params > 0) {
    terms.Add("tp", Collective::kAllReduce, "replicated parameters' gradients, once per step (sequence parallel)",
              1, static_cast<double>(shards.tp_replicated_elements) * 4.0 * owned);
  }
  // Replicated key/value heads: each rank holds one head, its k and v projections (and biases).
  const ir::Model& model = plan.model();
  if (model.kv_head_replicas() > 1) {
    const int64_t d = AttentionHeadsOf(model).head_dim;
    const double elements = static_cast<double>(shape.layers * 2 * d *
                                                (model.hidden_size() + (model.qkv_bias() ? 1 : 0)));
    terms.Add("tp_kv", Collective::kAllReduce, "key/value projection gradients, once per step (replicated heads)",
              1, elements * 4.0 * owned);
  }
  AddTensorParallelEnds(plan, shape, m, sp, activation, terms);
}

// Context parallelism by ring attention (Liu et al. 2023, arXiv 2310.01889; torchtitan and
// Megatron-LM's cp): per block and micro-step each rank passes the K and V of its s/cp tokens
// around the cp ring, cp − 1 send/recv of 2·b·(s/cp)·(kv/tp)·d·bytes each in forward, again in
// a recompute that repeats attention (selective or full), and twice in backward (K, V and their
// gradients). Each transfer overlaps the attention core of the block already held, so the
// exposed time is max(0, transfers − (cp − 1)/cp × the attention core compute of the passes).
void AddRingAttention(const ir::Plan& plan, const GroupLinks& links, const StageShape& shape,
                      int64_t m, int64_t cp, int64_t tp, int64_t compute_bytes, Terms& terms) {
  if (cp <= 1 || shape.layers <= 0) return;
  const ir::Model& model = plan.model();
  const AttentionHeads heads = AttentionHeadsOf(model);  // kv: heads over the tp ranks
  const int64_t kv = heads.kv;
  const int64_t d = heads.head_dim;
  const int64_t b = plan.batch().micro_batch_size();
  const int64_t s = plan.batch().seq_len();
  const double block = 2.0 * static_cast<double>(b) * static_cast<double>(s / cp) *
                       static_cast<double>(kv) / static_cast<double>(std::max<int64_t>(tp, 1)) *
                       static_cast<double>(d) * static_cast<double>(compute_bytes);
  const bool again = plan.training().recompute() != ir::RECOMPUTE_NONE &&
                     plan.training().recompute() != ir::RECOMPUTE_UNSPECIFIED;
  const int64_t passes = 3 + (again ? 1 : 0);  // forward, recompute?, backward (2)
  const int64_t blocks = m * shape.layers;
  Term* t = terms.Add("cp", Collective::kSendRecv,
                      "ring attention K/V blocks (and their gradients in backward)",
                      blocks * passes * (cp - 1), block);
  if (t == nullptr) return;
  const double rate = links.matmul_flops_per_second();
  const double attention = LayerForwardFlops(model, s, b, tp, cp).attention;
  const double hidden = rate > 0 ? static_cast<double>(blocks * passes) * attention / rate *
                                       static_cast<double>(cp - 1) / static_cast<double>(cp)
                                 : 0;
  t->hidden_seconds = hidden;
  t->exposed_seconds = std::max(0.0, t->seconds - hidden);
}

// Context parallelism by DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv 2309.14509, §3.1): per
// block and micro-step, forward runs four all-to-alls over cp — q, k, v from sequence shards to
// head shards, and the attention output back — of b·(s/cp)·(heads/tp)·d·bytes each (kv heads for
// k and v); a recompute that repeats attention runs them again, and backward runs the four
// reversed. Nothing overlaps them: attention waits for its inputs.
void AddUlysses(const ir::Plan& plan, const StageShape& shape, int64_t m, int64_t cp, int64_t tp,
                int64_t compute_bytes, Terms& terms) {
  if (cp <= 1 || shape.layers <= 0) return;
  const AttentionHeads heads = AttentionHeadsOf(plan.model());
  const double row = static_cast<double>(plan.batch().micro_batch_size()) *
                     static_cast<double>(plan.batch().seq_len() / cp) * static_cast<double>(heads.head_dim) *
                     static_cast<double>(compute_bytes) / static_cast<double>(std::max<int64_t>(tp, 1));
  const bool again = plan.training().recompute() != ir::RECOMPUTE_NONE &&
                     plan.training().recompute() != ir::RECOMPUTE_UNSPECIFIED;
  const int64_t passes = 2 + (again ? 1 : 0);  // forward, recompute?, backward
  const int64_t blocks = m * shape.layers;
  terms.Add("cp", Collective::kAllToAll, "Ulysses all-to-all of queries and attention outputs",
            blocks * passes * 2, row * static_cast<double>(heads.heads));
  terms.Add("cp", Collective::kAllToAll, "Ulysses all-to-all of keys and values", blocks * passes * 2,
            row * static_cast<double>(heads.kv));
}

// Expert parallelism's dispatch and combine (see the header): per MoE block of the stage and
// micro-step, 2 all-to-alls in forward, 2 more with full or per-op recompute, 4 in backward,
// and the counts exchanged before each forward dispatch.
void AddExpertAllToAll(const ir::Plan& plan, int32_t stage, int64_t m, int64_t cp,
                       int64_t compute_bytes, Terms& terms) {
  const ir::Model& model = plan.model();
  if (!HasMoe(model) || ExpertParallel(model) <= 1) return;
  int64_t moe_blocks = 0;
  for (const ir::PipelineStage& st : plan.pipeline().stages()) {
    if (st.index() != stage) continue;
    for (const ir::ModelChunk& c : ir::StageChunks(st)) {
      moe_blocks += MoeBlocksIn(model, c.layer_begin(), c.layer_end());
    }
  }
  if (plan.pipeline().stages_size() == 0) moe_blocks = MoeBlocksIn(model, 0, model.num_layers());
  const ir::MixtureOfExperts& moe = model.moe();
  const double rows = static_cast<double>(
      RoutedRows(plan.batch().micro_batch_size() * (plan.batch().seq_len() / cp),
                 moe.experts_per_token(), RoutingMargin(moe)));
  const ir::Recompute r = plan.training().recompute();
  const int64_t passes = (r == ir::RECOMPUTE_FULL || r == ir::RECOMPUTE_OP) ? 4 : 3;
  terms.Add(kExpertParallelSet, Collective::kAllToAll,
            "MoE token dispatch and combine (and their gradients in backward)",
            m * moe_blocks * passes * 2,
            rows * static_cast<double>(model.hidden_size()) * static_cast<double>(compute_bytes));
  // Each forward dispatch (and its recompute) first exchanges the int64 token counts per expert;
  // backward reuses them.
  terms.Add(kExpertParallelSet, Collective::kAllToAll, "MoE token counts per expert, before each dispatch",
            m * moe_blocks * (passes - 2), static_cast<double>(moe.num_experts()) * 8.0);
}

// The tied embedding's gradient summed between the first and the last stage, and the step's
// scalar collectives (see header).
void AddStepEnds(const ir::Plan& plan, const StageShape& shape, int64_t tp, Terms& terms) {
  const ir::Model& model = plan.model();
  if (shape.embedding || shape.head) {
    const int64_t vocab = ir::VocabRows(model);
    terms.Add("embedding", Collective::kAllReduce, "tied embedding and head gradients, once per step", 1,
              static_cast<double>(vocab / std::max<int64_t>(tp, 1) * model.hidden_size()) * 4.0 *
                  OwnedShare(plan));
  }
  terms.Add("dp", Collective::kAllReduce, "loss, averaged over data-parallel ranks", 1, 8.0);
  if (plan.sharding().stage() >= 1) {
    terms.Add("dp_shard", Collective::kAllReduce, "gradient norm: the owners' partial sums of squares", 1, 16.0);
  }
  terms.Add("tp", Collective::kAllReduce, "gradient norm: tp-split parameters' sum of squares", 1, 8.0);
  terms.Add("pp", Collective::kAllReduce, "the last stage's loss and the stages' gradient norms", 2, 8.0);
}

Terms StageTerms(const ir::Plan& plan, const GroupLinks& links, const StageShardTotals& shards,
                 int32_t stage, double backward_seconds_per_microstep) {
  Terms terms(plan, links);
  const int64_t m = std::max<int64_t>(plan.batch().grad_accum_steps(), 1);
  AddGradientBuckets(plan, shards, m, backward_seconds_per_microstep, terms);
  AddUnitGathers(plan, shards, m, terms);
  const StageShape shape = ShapeOf(plan, stage);
  int64_t cp = 1, tp = 1;
  for (const ir::MeshAxis& a : plan.mesh().axes()) {
    if (a.name() == "cp") cp = std::max<int64_t>(a.size(), 1);
    if (a.name() == "tp") tp = std::max<int64_t>(a.size(), 1);
  }
  const ir::Dtype compute = ir::ComputeDtype(plan.precision());
  const double activation = static_cast<double>(plan.batch().micro_batch_size()) *
                            static_cast<double>(plan.batch().seq_len() / cp) *
                            static_cast<double>(plan.model().hidden_size()) *
                            static_cast<double>(BytesOr4(compute));
  AddTensorParallel(plan, shape, shards, m, activation, terms);
  if (plan.mesh().context_parallel().method() == ir::CONTEXT_PARALLEL_METHOD_ULYSSES) {
    AddUlysses(plan, shape, m, cp, tp, BytesOr4(compute), terms);
  } else {
    AddRingAttention(plan, links, shape, m, cp, tp, BytesOr4(compute), terms);
  }
  AddExpertAllToAll(plan, stage, m, cp, BytesOr4(compute), terms);
  AddOffloadCopies(plan, shards, m, terms);
  const double p2p = plan.mesh().sequence_parallel() ? activation / static_cast<double>(tp) : activation;
  terms.Add("pp", Collective::kSendRecv, "activations forward and gradients backward",
            2 * m * shape.links, p2p);
  AddStepEnds(plan, shape, tp, terms);
  return terms;
}

}  // namespace

absl::StatusOr<std::vector<ir::CommunicationTime>> StageCommunication(
    const ir::Plan& plan, const ir::DeviceProfile& profile, int32_t stage,
    double backward_seconds_per_microstep) {
  return StageCommunication(plan, GroupLinks(plan, profile), ShardTotalsFromPlan(plan).Stage(stage),
                            stage, backward_seconds_per_microstep, true);
}

absl::StatusOr<std::vector<ir::CommunicationTime>> StageCommunication(
    const ir::Plan& plan, const GroupLinks& links, const StageShardTotals& shards, int32_t stage,
    double backward_seconds_per_microstep, bool formulas) {
  return StageTerms(plan, links, shards, stage, backward_seconds_per_microstep).Messages(formulas);
}

double StageExposedSeconds(const ir::Plan& plan, const GroupLinks& links,
                           const StageShardTotals& shards, int32_t stage,
                           double backward_seconds_per_microstep) {
  return StageTerms(plan, links, shards, stage, backward_seconds_per_microstep).ExposedSeconds();
}

double ExposedSeconds(const std::vector<ir::CommunicationTime>& terms) {
  double total = 0;
  for (const ir::CommunicationTime& t : terms) total += t.exposed_seconds();
  return total;
}

}  // namespace accel::planner
