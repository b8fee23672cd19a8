#include "planner/memory_estimator.h"

#include <algorithm>
#include <functional>
#include <string>

#include "common/ceil_div.h"
#include "absl/status/status.h"
#include "common/status_macros.h"
#include "common/units.h"
#include "planner/executor_activations.h"
#include "ir/enum_names.h"
#include "ir/plan_access.h"
#include "planner/model_params.h"
#include "planner/moe_activations.h"
#include "planner/moe_layers.h"
#include "planner/pipeline_schedules.h"

namespace accel::planner {
namespace {

constexpr const char* kZeroSource =
    "ZeRO (Rajbhandari et al. 2019) section 5: stage 1 shards optimizer states, 2 gradients, "
    "3 parameters";
constexpr const char* kOffloadSource = "DeepSpeed ZeRO-Offload (Ren et al. 2021)";
constexpr const char* kExecutorActivationSource =
    "accel executor: tensors autograd saves in executor/models (planner/executor_activations.h), "
    "checked by the counting allocator (bench/memory_bench)";
constexpr const char* kPendingWeightGradSource =
    "zero-bubble weight-gradient deferral (Qi et al. 2023 §2: dW = dy^T x per linear), "
    "planner/executor_activations.h ExecutorPendingWeightGradBytesPerBlock";
constexpr const char* kGradientCopySource =
    "accel executor: stages 0-1 make the fp32 gradient of 16-bit parameters as each bucket "
    "finishes in the last micro-step's backward (executor/train/zero_sync.cc TakeReduced), "
    "checked by the counting allocator (bench/memory_bench)";
constexpr const char* kExecutorZero3Source =
    "accel executor: stage-3 units gathered from the master shard (executor/train/zero3_sync.cc), "
    "checked by the counting allocator (bench/memory_bench)";
constexpr const char* kLogitsSource =
    "output layer of Korthikanti et al. 2022 section 4.3; fp32 upcast for the loss as in "
    "Hugging Face and Megatron-LM cross-entropy";
constexpr const char* kBucketSource =
    "DeepSpeed overlap_comm double buffers (stage_1_and_2.py setup_buckets), PyTorch DDP buckets; "
    "the accel executor keeps at most two live (executor/train/bucketed_sync.cc)";
constexpr const char* kGatherSource =
    "DeepSpeed ZeRO-3 largest-layer gather (4L, docs 'Memory Requirements') and "
    "stage3_prefetch_bucket_size";
constexpr const char* kOverheadSource =
    "docs/planner-facts.md section 7: CUDA context and workspaces (DeepSpeed#4527, #4093)";
constexpr const char* kCpuOverheadSource =
    "accel default for cpu workers: process, Gloo buffers and allocator (docs/planner-facts.md "
    "section 7 lists the terms formulas leave out)";
constexpr const char* kMoeActivationSource =
    "docs/planner-facts.md section 9: the MoE block the executor is to run (planner/"
    "moe_activations.h); routing margin per Switch Transformer (Fedus et al. 2021)";
constexpr const char* kReserveSource =
    "docs/planner-facts.md section 7: caching-allocator reserve and fragmentation 5-10%";

std::string N(int64_t v) { return FormatCount(v); }

std::string DTypeLabel(int64_t bytes) { return bytes == 4 ? "fp32" : "16-bit"; }

// Fills term `t` in place (an estimate on a plan's arena copies nothing). `formula()` builds its
// text, and the source is recorded, only when `explain` (MemoryInputs.explain): the layout
// search reads the bytes alone.
template <typename Formula>
void SetTerm(ir::MemoryTerm* t, bool explain, const char* category, int64_t bytes,
             const Formula& formula, const char* source) {
  t->set_category(category);
  t->set_bytes(bytes);
  if (!explain) return;
  t->set_formula(formula());
  t->set_source(source);
}

// "n × 2 B" or "ceil(n / 8) × 2 B" depending on whether the state is sharded.
std::string StateFormula(int64_t params, int64_t bytes_per, bool sharded, int64_t degree,
                         const std::string& what, const char* group = "dp_shard") {
  std::string count = sharded && degree > 1
                          ? "ceil(" + N(params) + " / " + group + " " + N(degree) + ")"
                          : N(params);
  return count + " params x " + N(bytes_per) + " B (" + what + ")";
}

absl::StatusOr<int64_t> BytesOf(ir::Dtype dtype, const char* what) {
  const int bytes = ir::DtypeBytes(dtype);
  if (bytes == 0) {
    return absl::InvalidArgumentError(std::string("plan has no ") + what + " dtype");
  }
  return bytes;
}


// The peak device total over stages and whether every stage fits.
struct Outcome {
  int64_t peak = 0;
  bool fits = false;
};

Outcome Evaluate(const MemoryInputs& in) {
  absl::StatusOr<std::vector<ir::MemoryEstimate>> estimates = EstimateMemory(in);
  Outcome o;
  if (!estimates.ok()) return o;
  o.fits = true;
  for (const ir::MemoryEstimate& e : *estimates) {
    o.peak = std::max(o.peak, e.device_total_bytes());
    o.fits = o.fits && e.fits();
  }
  return o;
}

// Moves `factor` ranks' worth of data parallelism into another axis: dp_replicate first (it
// holds no shards, so per-rank memory is unchanged), else dp_shard. False when neither divides.
bool TakeFromDataParallel(MemoryInputs& in, int64_t factor) {
  if (in.dp_replicate % factor == 0) {
    in.dp_replicate /= factor;
    return true;
  }
  if (in.dp_shard % factor == 0) {
    in.dp_shard /= factor;
    return true;
  }
  return false;
}

std::string Describe(const std::string& field, const std::string& value, int64_t peak,
                     int64_t limit, const std::string& extra) {
  return "would fit with " + field + ": " + value + extra + " (" + FormatBytes(peak) +
         " per device, limit " + FormatBytes(limit) + ")";
}

}  // namespace

const char* RecomputeName(RecomputeMode mode) {
  switch (mode) {
    case RecomputeMode::kNone: return "none";
    case RecomputeMode::kSelective: return "selective";
    case RecomputeMode::kOp: return "op";
    case RecomputeMode::kFull: return "full";
  }
  return "none";
}

absl::StatusOr<MemoryInputs> MemoryInputsFromPlan(const ir::Plan& plan, bool sequence_parallel) {
  MemoryInputs in;
  in.model = plan.model();
  in.seq_len = plan.batch().seq_len();
  in.micro_batch_size = plan.batch().micro_batch_size();
  in.grad_accum_steps = plan.batch().grad_accum_steps();

  const ir::Precision& p = plan.precision();
  ACCEL_ASSIGN_OR_RETURN(in.param_bytes, BytesOf(p.param_dtype(), "param"));
  ACCEL_ASSIGN_OR_RETURN(in.compute_bytes, BytesOf(ir::ComputeDtype(p), "compute"));
  const ir::Dtype reduce =
      p.reduce_dtype() == ir::DTYPE_UNSPECIFIED ? p.param_dtype() : p.reduce_dtype();
  ACCEL_ASSIGN_OR_RETURN(in.reduce_bytes, BytesOf(reduce, "reduce"));

  const ir::OptimizerKind optimizer = plan.training().optimizer().kind();
  in.optimizer = optimizer == ir::OPTIMIZER_KIND_UNSPECIFIED ? ir::OPTIMIZER_KIND_ADAMW : optimizer;
  in.momentum = plan.training().optimizer().momentum();
  if (in.optimizer != ir::OPTIMIZER_KIND_ADAMW && in.optimizer != ir::OPTIMIZER_KIND_SGD) {
    return absl::InvalidArgumentError("plan has unknown optimizer " + std::to_string(in.optimizer));
  }
  switch (plan.training().recompute()) {
    case ir::RECOMPUTE_UNSPECIFIED:
    case ir::RECOMPUTE_NONE: in.recompute = RecomputeMode::kNone; break;
    case ir::RECOMPUTE_SELECTIVE: in.recompute = RecomputeMode::kSelective; break;
    case ir::RECOMPUTE_FULL: in.recompute = RecomputeMode::kFull; break;
    case ir::RECOMPUTE_OP: in.recompute = RecomputeMode::kOp; break;
    default:
      return absl::InvalidArgumentError("plan has unknown recompute " +
                                        std::to_string(plan.training().recompute()));
  }
  in.fused_attention = plan.model().attention_kernel() == ir::ATTENTION_KERNEL_SDPA;
  in.loss_chunks = plan.training().loss_chunks();

  for (const ir::MeshAxis& axis : plan.mesh().axes()) {
    const int64_t size = std::max<int64_t>(axis.size(), 1);
    if (axis.name() == "pp") in.pp = size;
    else if (axis.name() == "dp_replicate") in.dp_replicate = size;
    else if (axis.name() == "dp_shard") in.dp_shard = size;
    else if (axis.name() == "cp") in.cp = size;
    else if (axis.name() == "tp") in.tp = size;
  }
  in.sequence_parallel = sequence_parallel && in.tp > 1;
  in.cp_ulysses = plan.mesh().context_parallel().method() == ir::CONTEXT_PARALLEL_METHOD_ULYSSES;

  const ir::Sharding& s = plan.sharding();
  in.sharding_stage = s.stage();
  if (s.degree() > 0 && s.degree() != in.dp_shard && plan.mesh().axes().empty()) {
    in.dp_shard = s.degree();
  }
  switch (s.offload()) {
    case ir::OFFLOAD_UNSPECIFIED:
    case ir::OFFLOAD_NONE: in.offload = spec::Offload::kNone; break;
    case ir::OFFLOAD_OPTIMIZER: in.offload = spec::Offload::kOptimizer; break;
    case ir::OFFLOAD_ALL: in.offload = spec::Offload::kAll; break;
    default:
      return absl::InvalidArgumentError("plan has unknown offload " + std::to_string(s.offload()));
  }
  in.bucket_elements = s.bucket_elements();
  in.prefetch_bucket_elements = s.prefetch_bucket_elements();

  const ir::Pipeline& pipe = plan.pipeline();
  in.pipeline_schedule = pipe.schedule() == ir::PIPELINE_SCHEDULE_UNSPECIFIED
                             ? ir::PIPELINE_SCHEDULE_1F1B
                             : pipe.schedule();
  in.microbatches = std::max<int64_t>(pipe.microbatches(), 1);
  in.virtual_stages = ir::VirtualStages(pipe);
  for (const ir::PipelineStage& st : pipe.stages()) {
    StageLayout layout;
    layout.index = st.index();
    layout.layer_begin = st.layer_begin();
    layout.layer_end = st.layer_end();
    layout.has_embedding = st.has_embedding();
    layout.has_lm_head = st.has_lm_head();
    layout.inflight_microbatches = std::max<int32_t>(st.max_inflight_microbatches(), 1);
    layout.pending_weight_grads = st.max_pending_weight_grads();
    for (const ir::ModelChunk& c : st.chunks()) layout.chunks.emplace_back(c.layer_begin(), c.layer_end());
    if (pipe.stages_size() > 1 && SplitsBackward(in.pipeline_schedule)) {
      const ScheduleShape shape{in.pipeline_schedule, pipe.stages_size(),
                                static_cast<int32_t>(in.virtual_stages),
                                static_cast<int32_t>(in.microbatches)};
      // Search candidates' plans carry no op lists (planner.h): rebuild the stage's.
      ir::PipelineStage rebuilt;
      if (st.ops().empty()) WriteStageOps(shape, st.index(), rebuilt);
      layout.live_candidates = PeakLiveCandidates(shape, st.index(), st.ops().empty() ? rebuilt : st);
    }
    in.stages.push_back(layout);
  }

  const ir::Topology& topo = plan.topology();
  in.devices_per_node = std::max<int64_t>(topo.devices_per_node(), 1);
  in.device_type = topo.device_type() == ir::DEVICE_TYPE_UNSPECIFIED ? ir::DEVICE_TYPE_CUDA
                                                                    : topo.device_type();
  in.device_memory_bytes = topo.device_memory_bytes();
  in.runtime_overhead_bytes = topo.runtime_overhead_bytes();
  return in;
}

int64_t StageLayout::Layers() const {
  if (chunks.empty()) return std::max<int64_t>(layer_end - layer_begin, 0);
  int64_t layers = 0;
  for (const auto& [begin, end] : chunks) layers += std::max<int64_t>(end - begin, 0);
  return layers;
}

int64_t StageLayout::LargestChunkLayers() const {
  if (chunks.empty()) return Layers();
  int64_t layers = 0;
  for (const auto& [begin, end] : chunks) layers = std::max(layers, end - begin);
  return layers;
}

std::vector<StageLayout> EvenStageLayouts(int64_t num_layers, int64_t pp,
                                          ir::PipelineSchedule schedule, int64_t microbatches,
                                          int64_t virtual_stages) {
  pp = std::max<int64_t>(pp, 1);
  const int64_t v = std::max<int64_t>(virtual_stages, 1);
  const int64_t parts = pp * v, base = num_layers / parts, extra = num_layers % parts;
  auto begin_of = [&](int64_t k) { return k * base + std::min(k, extra); };
  ScheduleShape shape;
  shape.schedule = schedule;
  shape.stages = static_cast<int32_t>(pp);
  shape.virtual_stages = static_cast<int32_t>(v);
  shape.microbatches = static_cast<int32_t>(std::max<int64_t>(microbatches, 1));
  std::vector<StageLayout> stages;
  const auto p32 = static_cast<int32_t>(pp);
  for (int64_t i = 0; i < pp; ++i) {
    const auto s32 = static_cast<int32_t>(i);
    StageLayout st;
    st.index = s32;
    st.layer_begin = begin_of(ir::ScheduledVirtualStage(schedule, p32, s32, 0));
    st.layer_end = begin_of(ir::ScheduledVirtualStage(schedule, p32, s32, 0) + 1);
    for (int32_t c = 0; v > 1 && c < v; ++c) {
      const int64_t k = ir::ScheduledVirtualStage(schedule, p32, s32, c);
      st.chunks.emplace_back(begin_of(k), begin_of(k + 1));
    }
    st.has_embedding = i == 0;
    st.has_lm_head = i == ir::ScheduledStageOf(schedule, p32, static_cast<int32_t>(parts - 1));
    st.inflight_microbatches = InflightMicrobatches(shape, s32);
    st.pending_weight_grads = PendingWeightGrads(shape, s32);
    if (pp > 1 && SplitsBackward(schedule)) {
      ir::PipelineStage ops;
      WriteStageOps(shape, s32, ops);
      st.live_candidates = PeakLiveCandidates(shape, s32, ops);
    }
    stages.push_back(st);
  }
  return stages;
}

namespace {

// Trims the device terms `pick` selects to what they add beyond the activations and logits, in
// order, for tensors that only grow as backward frees those; `note` starts the formula's
// explanation ("NOTE N B of activations and logits backward frees count: K B").
template <typename Pick>
void OverlapWithFreedActivations(bool explain, ir::MemoryEstimate& e, Pick pick, const std::string& note) {
  int64_t freed = 0, overlapping = 0;
  for (const ir::MemoryTerm& t : e.device()) {
    if (t.category() == "activations" || t.category() == "logits") freed += t.bytes();
    if (pick(t)) overlapping += t.bytes();
  }
  int64_t remaining = std::max<int64_t>(0, overlapping - freed);
  for (ir::MemoryTerm& t : *e.mutable_device()) {
    if (!pick(t)) continue;
    const int64_t kept = std::min(t.bytes(), remaining);
    remaining -= kept;
    if (kept == t.bytes()) continue;
    if (explain)
      t.set_formula(t.formula() + "; " + note + " " + N(freed) +
                    " B of activations and logits backward frees count: " + N(kept) + " B");
    t.set_bytes(kept);
  }
}

// With one micro-step per update and no pipeline, no gradient exists when backward starts (the
// executor drops the previous step's: executor/train/bucketed_sync.cc OnNewStep); gradients
// appear as backward frees activations, so they add to the peak only where they outgrow the
// activations and logits.
void OverlapGradientsWithActivations(bool explain, ir::MemoryEstimate& e) {
  OverlapWithFreedActivations(
      explain, e, [](const ir::MemoryTerm& t) { return t.category() == "gradients"; },
      "with 1 micro-step per update only gradients beyond the");
}

// Stages 0 and 1 with 16-bit parameters, any number of micro-steps or pipeline microbatches: the
// fp32 gradient copy is made bucket by bucket in the last micro-step's backward (on a pipeline
// stage, its last backward, when no other microbatch is in flight), as that backward frees the
// activations; the 16-bit gradients accumulate before and stay counted. Measured: pipeline 2 x
// dp 2 with bf16 parameters was over-estimated by 8% while the copy was counted beside the
// activations in flight (bench/RESULTS.md).
void OverlapGradientCopyWithActivations(bool explain, ir::MemoryEstimate& e) {
  OverlapWithFreedActivations(
      explain, e, [](const ir::MemoryTerm& t) { return t.source() == kGradientCopySource; },
      "made in the last backward, so only the copy beyond the");
}

// Stage 3's working set besides the owned shards, as the executor allocates it
// (executor/train/zero3_sync.cc): the unit in use gathered whole, the next unit prefetched (the
// executor launches at least one whole unit whatever prefetch_bucket_size says) into a gather
// buffer fed from a shard-sized input, and, with a tied head, the embeddings unit kept whole
// from its forward until its backward. A unit's full gradient exists only in backward: it is
// counted here with full recompute (whose working term is a backward phase), else in the block
// backward phase (AddBlockPhaseTerm, SharedInputs.unit_grad and tied_grad), which is the peak
// only where it outgrows the forward phase. Measured (bench/memory_bench, GPT-2 ZeRO-3 on 4
// ranks, bf16 compute): the peak comes in the last block's backward, 1.51 MB above the live
// bytes at its start (the unit's 0.79 MB gradient and the block's working memory), the head's
// tensors freed; counting the gradient beside the forward phase overestimated it by 5.3%.
void AddStage3GatherTerms(bool explain, const MemoryInputs& in, const StageLayout& layout,
                          const ModelParams& params, int64_t largest_unit, int64_t degree,
                          const ModelStateDtypes& dtypes, ir::MemoryEstimate& e) {
  const int64_t prefetch = std::max(in.prefetch_bucket_elements, largest_unit);
  const int64_t input = CeilDiv(largest_unit, degree);
  const bool grad_here = RecomputesBlocks(in.recompute);
  const int64_t grad_bytes = grad_here ? dtypes.grad_bytes : 0;
  SetTerm(
      e.add_device(), explain, "communication_buffers",
      GatheredParameterBytes(largest_unit, prefetch, dtypes.param_bytes, grad_bytes) +
          input * dtypes.param_bytes,
      [&] {
        return "largest unit " + N(largest_unit) + " x " +
               (grad_here ? "(" + N(dtypes.param_bytes) + " B param + " + N(dtypes.grad_bytes) +
                                " B grad, backward with full recompute)"
                          : N(dtypes.param_bytes) + " B param (its grad: the block phase)") +
               " + prefetch max(prefetch_bucket_size " + N(in.prefetch_bucket_elements) +
               ", next unit) " + N(prefetch) + " x " + N(dtypes.param_bytes) +
               " B + gather input " + N(input) + " x " + N(dtypes.param_bytes) + " B";
      },
      kGatherSource);
  if (layout.has_embedding && layout.has_lm_head && in.model.tie_word_embeddings()) {
    const int64_t embedding = LocalCount(params.embedding);
    SetTerm(
        e.add_device(), explain, "parameters", embedding * dtypes.param_bytes,
        [&] {
          return "tied embeddings kept whole from forward to backward: " + N(embedding) + " x " +
                 N(dtypes.param_bytes) + " B";
        },
        kGatherSource);
  }
}

// The executor-activation shape of one micro-batch of this plan.
ExecutorActivationShape ExecutorShapeOf(const MemoryInputs& in, int64_t seq, int64_t padded_vocab) {
  ExecutorActivationShape s;
  s.gpt2 = in.model.arch() == ir::ARCHITECTURE_GPT2;
  s.seq_len = seq;
  s.micro_batch = in.micro_batch_size;
  s.hidden = in.model.hidden_size();
  s.heads = in.model.num_heads();
  s.kv_heads = ir::KvHeads(in.model);
  s.ffn = ir::FfnSize(in.model);
  s.vocab = padded_vocab;
  s.bf16_compute = in.compute_bytes == 2;
  s.bf16_params = in.param_bytes == 2;
  s.fused_attention = in.fused_attention;
  s.loss_chunks = in.loss_chunks;
  s.tp = in.tp;
  s.sequence_parallel = in.sequence_parallel;
  s.cp = std::max<int64_t>(in.cp, 1);
  s.ulysses = in.cp_ulysses;
  s.head_dim = in.model.head_dim();
  s.qk_norm = in.model.qk_norm();
  s.pre_norms = in.model.norm_placement() != ir::NORM_PLACEMENT_POST;
  s.post_norms = in.model.norm_placement() == ir::NORM_PLACEMENT_POST ||
                 in.model.norm_placement() == ir::NORM_PLACEMENT_PRE_AND_POST;
  s.qk_norm_full_width = in.model.qk_norm_full_width();
  s.norm_unit_offset = in.model.norm_unit_offset();
  s.gelu_tanh = in.model.mlp_activation() == ir::MLP_ACTIVATION_GELU_TANH;
  s.attn_softcapping = in.model.attn_logit_softcapping() > 0;
  s.final_softcapping = in.model.final_logit_softcapping() > 0;
  return s;
}

// What every stage's estimate shares: the inputs with their defaults applied.
struct SharedInputs {
  const MemoryInputs& in;
  const ModelParams& params;
  ModelStateDtypes dtypes;
  bool explain = true;
  bool pipeline = false;  // more than one stage
  // Stage 3 (degree > 1) without full recompute, B (else 0): the gradient of the largest block
  // unit, which exists only in its backward (AddStage3GatherTerms), and, on a stage holding
  // tied embeddings whole, theirs, from the head's backward to the embedding's.
  int64_t unit_grad = 0, tied_grad = 0;
  int64_t tp = 1, padded_vocab = 0, degree = 1, stage = 0, seq = 0, h = 0, ffn = 0;
};

// Parameters one stage holds per tp rank, and its largest shard unit (stage-3 gather).
struct StageCounts {
  int64_t count = 0;         // all but the routed experts
  int64_t expert_count = 0;  // routed experts: this rank's E / ep of them (ParamInfo.routed_expert)
  int64_t largest_unit = 0;
  int64_t largest_block_unit = 0;  // the largest of its transformer blocks
};

StageCounts CountStage(const SharedInputs& c, const StageLayout& layout) {
  const MemoryInputs& in = c.in;
  const ModelParams& params = c.params;
  StageCounts counts;
  auto add_unit = [&](int64_t unit) {
    counts.count += unit;
    counts.largest_unit = std::max(counts.largest_unit, unit);
  };
  if (layout.has_embedding) add_unit(LocalCount(params.embedding));
  std::vector<std::pair<int64_t, int64_t>> chunks = layout.chunks;
  if (chunks.empty()) chunks.emplace_back(layout.layer_begin, layout.layer_end);
  for (const auto& [begin, end] : chunks) {
    for (int64_t l = begin; l < end && l < static_cast<int64_t>(params.layers.size()); ++l) {
      const int64_t block = LocalCount(params.layers[l]);
      add_unit(block);
      counts.largest_block_unit = std::max(counts.largest_block_unit, block);
      if (!HasMoe(in.model)) continue;
      for (const ParamInfo& p : params.layers[l]) {
        if (!p.routed_expert) continue;
        counts.expert_count += p.local_count;
        counts.count -= p.local_count;
      }
    }
  }
  if (layout.has_lm_head) {
    int64_t head = LocalCount(params.head);
    // A tied head on a stage without the embedding keeps its own copy of the word
    // embeddings, kept in sync by an all-reduce of their gradients (Megatron-LM).
    if (in.model.tie_word_embeddings() && !layout.has_embedding) {
      head += params.embedding.front().local_count;
    }
    add_unit(head);
  }
  return counts;
}

// The group model states are sharded over: dp_shard for everything but the routed experts,
// "ep_dp" (dp_shard · cp / ep ranks holding the same experts) for those; `what` prefixes the
// formula's label.
struct StateGroup {
  int64_t degree = 1;
  const char* group = "dp_shard";
  std::string what;
};

// Parameters, gradients, master weights and optimizer states of `count` parameters sharded
// over `g`, on the device or, offloaded, the host.
void AddModelStateTerms(const SharedInputs& c, int64_t count, const StateGroup& g,
                        ir::MemoryEstimate& e) {
  const MemoryInputs& in = c.in;
  const ModelStateDtypes& dtypes = c.dtypes;
  const bool explain = c.explain;
  const int64_t stage = c.stage, degree = g.degree;
  const bool host_optimizer = in.offload != spec::Offload::kNone;
  const bool host_params = in.offload == spec::Offload::kAll;
  const ModelStateBytes ms = ModelStateBytesPerRank(count, dtypes, stage, degree, in.offload);
  auto device = [&e] { return e.add_device(); };
  auto host = [&e] { return e.add_host(); };

  // accel's stage-3 executor keeps no parameter shard beside the fp32 tensor its optimizer
  // steps (the master weights of 16-bit parameters, or the host copy when offloaded): a unit's
  // parameters exist only while gathered, and each gather casts or copies that tensor's shard
  // (executor/train/zero3_sync.cc Free and Launch). DeepSpeed keeps both partitions. Measured:
  // stage 3 with offload all holds the same peak as without offload (bench/memory_bench).
  const bool fp32_copy = dtypes.master_bytes > 0 || host_optimizer;
  const bool shard_in_master = stage >= 3 && fp32_copy;
  const auto params_formula = [&] {
    if (shard_in_master) {
      return "0 B: the " + DTypeLabel(dtypes.param_bytes) + " shard is not kept, gathers " +
             (host_optimizer ? "copy the host fp32 copy" : "cast the fp32 master weights") +
             " (accel executor, stage 3)";
    }
    return StateFormula(count, dtypes.param_bytes, stage >= 3, degree,
                        g.what + DTypeLabel(dtypes.param_bytes) + " parameters per tp rank", g.group);
  };
  if (shard_in_master) {
    SetTerm(device(), explain, "parameters", 0, params_formula, kExecutorZero3Source);
  } else if (host_params) {
    SetTerm(host(), explain, "parameters", ms.host_parameters, params_formula, kOffloadSource);
  } else {
    SetTerm(device(), explain, "parameters", ms.parameters, params_formula, kZeroSource);
  }
  if (ms.gradients > 0) {
    SetTerm(
        device(), explain, "gradients", ms.gradients,
        [&] {
          return StateFormula(count, dtypes.grad_bytes, stage >= 2, degree,
                              g.what + DTypeLabel(dtypes.grad_bytes) + " gradients", g.group);
        },
        kZeroSource);
  }
  if (ms.master_weights + ms.host_master_weights > 0) {
    const auto f = [&] {
      return StateFormula(
          count, 4, stage >= 1, degree,
          g.what + (dtypes.master_bytes > 0 ? "fp32 master weights" : "fp32 copy the host optimizer steps"),
          g.group);
    };
    if (host_optimizer)
      SetTerm(host(), explain, "master_weights", ms.host_master_weights, f, kOffloadSource);
    else
      SetTerm(device(), explain, "master_weights", ms.master_weights, f, kZeroSource);
  }
  if (ms.gradient_copy + ms.host_gradient_copy > 0) {
    const auto f = [&] {
      return StateFormula(count, 4, stage >= 1, degree,
                          g.what + "fp32 gradient copy for the optimizer step", g.group);
    };
    if (host_optimizer)
      SetTerm(host(), explain, "gradients", ms.host_gradient_copy, f, kOffloadSource);
    else if (stage >= 2)
      SetTerm(device(), explain, "gradients", ms.gradient_copy, f, kZeroSource);
    else {
      ir::MemoryTerm* copy = device();
      SetTerm(copy, explain, "gradients", ms.gradient_copy, f, kGradientCopySource);
      // Set without explain too: OverlapGradientCopyWithActivations finds the term by it.
      copy->set_source(kGradientCopySource);
    }
  }
  if (dtypes.optimizer_bytes > 0) {
    const auto f = [&] {
      return StateFormula(count, dtypes.optimizer_bytes, stage >= 1, degree,
                          g.what + (in.optimizer == ir::OPTIMIZER_KIND_ADAMW ? "AdamW m + v in fp32"
                                                                             : "SGD momentum in fp32"),
                          g.group);
    };
    if (host_optimizer)
      SetTerm(host(), explain, "optimizer_states", ms.host_optimizer_states, f, kOffloadSource);
    else
      SetTerm(device(), explain, "optimizer_states", ms.optimizer_states, f, kZeroSource);
  }
}

// One block-boundary tensor (a block's input, output or their gradient) on this rank: s*b*h in
// the parameter dtype (the residual stream's), a sequence shard with sequence parallelism.
int64_t BoundaryBytes(const SharedInputs& c) {
  const int64_t shards = c.in.sequence_parallel ? std::max<int64_t>(c.tp, 1) : 1;
  return c.seq * c.in.micro_batch_size * c.h * c.in.param_bytes / shards;
}

// The head's term on a stage with the head (0 elsewhere), its chunked loss backward's
// transients, and what of the term a block's backward finds freed: the whole term on a single
// stage, only the transients on a pipeline stage (both measured, bench/memory_bench: GPT-2
// ZeRO-3 on 4 ranks peaks in the last block's backward 1.51 MB above the live bytes at its
// start, the head's tensors gone; the 3D example's last stage measured 4.5% above an estimate
// that took the whole head term off, 1.1% above one taking off its transients).
struct HeadInBackward {
  int64_t head = 0, loss_backward = 0, freed = 0;
};

HeadInBackward HeadInBackwardOf(const SharedInputs& c, const StageLayout& layout,
                                const ExecutorActivationShape& exec_shape) {
  HeadInBackward h;
  if (!layout.has_lm_head) return h;
  h.head = ExecutorHeadBytes(exec_shape);
  h.loss_backward = h.head - ExecutorHeadKeptBytes(exec_shape);
  h.freed = c.pipeline ? h.loss_backward : h.head;
  return h;
}

// One MoE block's routed part on this rank (planner/moe_activations.h).
MoeActivationShape MoeShapeOf(const SharedInputs& c) {
  const ir::MixtureOfExperts& moe = c.in.model.moe();
  MoeActivationShape m;
  m.tokens = c.seq * c.in.micro_batch_size;
  m.hidden = c.h;
  m.experts = moe.num_experts();
  m.top_k = moe.experts_per_token();
  m.expert_ffn = moe.expert_ffn_size();
  m.tp = c.tp;
  m.ep = ExpertParallel(c.in.model);
  m.activation_bytes = c.in.compute_bytes;
  m.margin = RoutingMargin(moe);
  m.shared_expert_gate = moe.shared_expert_gate();
  return m;
}

// Whether the stage holds an MoE block (in any of its chunks).
bool StageHasMoe(const ir::Model& model, const StageLayout& layout) {
  if (!HasMoe(model)) return false;
  if (layout.chunks.empty()) return MoeBlocksIn(model, layout.layer_begin, layout.layer_end) > 0;
  for (const auto& [begin, end] : layout.chunks) {
    if (MoeBlocksIn(model, begin, end) > 0) return true;
  }
  return false;
}

// Beyond what its micro-batches keep, a stage peaks in one of three phases: a block's backward
// (on a pipeline stage holding the gradient it received and, without the head, the one it will
// send; at stage 3 also the gathered unit's gradient, SharedInputs.unit_grad), its last block's
// forward (ExecutorBlockForwardBytes, holding the received input), or, with the head, the loss
// (ExecutorHeadBytes, counted with the logits: its backward's two fp32 n·V transients). Adds the
// largest phase, less what of the head's term is live in it (HeadInBackwardOf). Full
// recompute has its blocks' phases in the recompute working term. A single stage below stage 3
// adds only its forward phase; its backward, where gradients grow into freed activations
// (OverlapGradientsWithActivations), measures within the target without a block term
// (bench/memory_bench). At stage 3 gradients leave as reduce-scattered shards, so the block
// backward phase counts there too, with the output gradient it receives from the head.
void AddBlockPhaseTerm(const SharedInputs& c, const StageLayout& layout,
                       const ExecutorActivationShape& exec_shape, ir::MemoryEstimate& e) {
  const MemoryInputs& in = c.in;
  const bool full = RecomputesBlocks(in.recompute);
  // Under tensor parallelism the block's intermediates are this rank's heads and MLP columns
  // (1/t of them), and with sequence parallelism the boundary tensors are sequence shards.
  const int64_t tp = std::max<int64_t>(c.tp, 1);
  const int64_t boundary = BoundaryBytes(c);
  const int64_t received = c.pipeline && !layout.has_embedding ? boundary : 0;
  // An MoE block's backward peaks instead while its routed experts' weight gradients are made
  // (MoeActivationBytes::backward), before its attention's backward runs: the larger of the two.
  const int64_t moe_backward =
      !full && StageHasMoe(in.model, layout) ? MoeLayerActivationBytes(MoeShapeOf(c)).backward : 0;
  const int64_t block_backward = full ? 0 : std::max(ExecutorBlockBackwardBytes(exec_shape) / tp, moe_backward);
  const int64_t block_forward = full ? 0 : ExecutorBlockForwardBytes(exec_shape);
  const std::string forward_what = "the last block's forward transients " + N(block_forward) + " B" +
                                   (received > 0 ? " + the received input " + N(received) + " B" : "");
  int64_t forward = full ? 0 : block_forward + received, backward = 0;
  std::string backward_what;
  if (!c.pipeline) {
    // A single stage has the head; below stage 3 its backward phase is left out (above), but
    // for the experts' weight gradients of an MoE block, which no freed activation absorbs.
    if (c.unit_grad + c.tied_grad > 0 || moe_backward > 0) {
      backward = block_backward + boundary;
      backward_what = "1 block's backward working memory " + N(block_backward) +
                      " B + its output gradient " + N(boundary) + " B";
    }
  } else if (!layout.has_lm_head) {
    backward = block_backward + 2 * boundary;
    backward_what = "1 block's backward working memory " + N(block_backward) +
                    " B + the stage's received and sent gradients 2 x " + N(boundary) + " B";
  } else {
    backward = block_backward + boundary;
    backward_what = "1 block's backward working memory " + N(block_backward) + " B + the sent gradient " +
                    N(boundary) + " B";
  }
  if (c.unit_grad > 0) {
    backward += c.unit_grad;
    backward_what += " + the gathered unit's gradient " + N(c.unit_grad) + " B (stage 3)";
  }
  if (c.tied_grad > 0) {
    backward += c.tied_grad;
    backward_what += " + the tied embeddings' gradient " + N(c.tied_grad) + " B";
  }
  // With the head, each phase counts beyond what the head's term holds at that time.
  const HeadInBackward h = HeadInBackwardOf(c, layout, exec_shape);
  const int64_t head = h.head, loss_backward = h.loss_backward;
  const int64_t forward_extra = forward - head, backward_extra = backward - h.freed;
  const bool forward_peaks = forward_extra >= backward_extra;
  const int64_t bytes = std::max<int64_t>({0, forward_extra, backward_extra});
  if (bytes == 0) return;
  SetTerm(
      e.add_device(), c.explain, "activations", bytes,
      [&] {
        std::string what = forward_peaks ? forward_what : backward_what;
        if (layout.has_lm_head) {
          what += forward_peaks || !c.pipeline
                      ? " beyond the head's " + N(head) + " B"
                      : " beyond the loss backward's 2 x 4*s*b*V " + N(loss_backward) + " B";
        }
        if (backward > 0) what += " (the larger of it and " + (forward_peaks ? backward_what : forward_what) + ")";
        return what;
      },
      kExecutorActivationSource);
}

// Full recompute: backward rematerializes one block at a time with all its activations, beside
// that block's backward working memory, the gradient flowing between blocks and, with a tied
// head on the stage, the head's share of the word-embedding gradient, which accumulates until
// the embedding's backward. By then the head's term is freed (HeadInBackwardOf): the phase
// counts beyond it. Measured (bench/memory_bench, GPT-2 on 4 ranks with full recompute at
// stages 2 and 3, once the executor kept only two reduce buckets): 10% above the measured peak
// with the whole head term added beside this one, 1.0-1.2% below it with the head's term taken
// off and the gradient and head's share added.
// `dims` is the activation terms' shape text.
void AddRecomputeWorkingTerm(const SharedInputs& c, const StageLayout& layout,
                             const ExecutorActivationShape& exec_shape,
                             const std::function<std::string()>& dims, ir::MemoryEstimate& e) {
  const MemoryInputs& in = c.in;
  const int64_t tp = std::max<int64_t>(c.tp, 1);
  const int64_t working = ExecutorRecomputeWorkingBytes(exec_shape, in.recompute);
  const int64_t gradient = BoundaryBytes(c);
  const bool tied_head = layout.has_embedding && layout.has_lm_head && in.model.tie_word_embeddings();
  const int64_t head_share = tied_head ? CeilDiv(c.padded_vocab, tp) * c.h * c.dtypes.grad_bytes : 0;
  const int64_t freed = HeadInBackwardOf(c, layout, exec_shape).freed;
  const int64_t bytes = std::max<int64_t>(0, working + gradient + head_share - freed);
  if (bytes == 0) return;
  SetTerm(
      e.add_device(), c.explain, "activations", bytes,
      [&] {
        const int64_t rebuilt = ExecutorActivationBytesPerLayer(exec_shape);
        const int64_t backward = ExecutorBlockBackwardBytes(exec_shape);
        return "1 layer recomputed in backward: its activations " + N(rebuilt) +
               " B + its backward working memory " + N(backward) + " B + 16-bit extra " +
               N(working - rebuilt - backward) + " B + its output gradient " + N(gradient) + " B" +
               (head_share > 0 ? " + the head's share of the embedding gradient " + N(head_share) + " B" : "") +
               (freed > 0 ? ", beyond the head's " + N(freed) + " B freed by then" : "") + "; " +
               dims();
      },
      kExecutorActivationSource);
}

// Zero-bubble schedules: each weight gradient still pending after its input gradient keeps every
// linear's input and output gradient, per block of the largest chunk
// (ExecutorPendingWeightGradBytesPerBlock), at the stage's peak count of pending ones. Added to the
// in-flight activations at the op where their sum peaks (LiveCountsAtPeak).
void AddPendingWeightGradTerm(const SharedInputs& c, const StageLayout& layout, int64_t pending,
                              const ExecutorActivationShape& exec_shape, ir::MemoryEstimate& e) {
  const int64_t layers = layout.LargestChunkLayers();
  const int64_t per_block = ExecutorPendingWeightGradBytesPerBlock(exec_shape);
  SetTerm(
      e.add_device(), c.explain, "activations", layers * pending * per_block,
      [&] {
        return N(layers) + (layers == 1 ? " layer x " : " layers x ") + N(pending) +
               " pending weight gradient(s) x " + N(per_block) +
               " B per layer: each linear's input and output gradient kept for the deferred W";
      },
      kPendingWeightGradSource);
}

// MoE blocks among the blocks of the stage's largest chunk (the one StageLayout::
// LargestChunkLayers counts; the first of equal size).
int64_t MoeLayersOfLargestChunk(const ir::Model& model, const StageLayout& layout) {
  if (!HasMoe(model)) return 0;
  if (layout.chunks.empty()) return MoeBlocksIn(model, layout.layer_begin, layout.layer_end);
  int64_t largest = -1, moe = 0;
  for (const auto& [begin, end] : layout.chunks) {
    if (end - begin > largest) {
      largest = end - begin;
      moe = MoeBlocksIn(model, begin, end);
    }
  }
  return moe;
}

// The MoE blocks' activations: each keeps the block without its dense MLP, the shared experts as
// a dense MLP of their width, and the routed part (planner/moe_activations.h; under block
// recompute only the one block rebuilt in backward holds it); and, one block at a time, the
// router and dispatch buffers.
// What one MoE block keeps per activation in flight: the block with its shared experts as the
// dense MLP, and (without block recompute) the routed part.
struct MoeKeptBytes {
  int64_t shared_ffn = 0;
  int64_t block = 0;
  int64_t routed = 0;
};
MoeKeptBytes MoeKeptBytesPerLayer(const SharedInputs& c, ExecutorActivationShape exec_shape) {
  const MemoryInputs& in = c.in;
  const ir::MixtureOfExperts& moe = in.model.moe();
  MoeKeptBytes k;
  k.shared_ffn = moe.num_shared_experts() * moe.shared_expert_ffn_size();
  exec_shape.ffn = k.shared_ffn;
  k.block = ExecutorKeptBytesPerLayer(exec_shape, in.recompute);
  k.routed = RecomputesBlocks(in.recompute) ? 0 : MoeLayerActivationBytes(MoeShapeOf(c)).kept;
  return k;
}

void AddMoeActivationTerms(const SharedInputs& c, int64_t moe_layers, int64_t inflight,
                           const ExecutorActivationShape& exec_shape, ir::MemoryEstimate& e) {
  const MemoryInputs& in = c.in;
  const ir::MixtureOfExperts& moe = in.model.moe();
  const MoeKeptBytes k = MoeKeptBytesPerLayer(c, exec_shape);
  const int64_t shared = k.shared_ffn, block = k.block, kept = k.routed;
  const MoeActivationShape m = MoeShapeOf(c);
  const MoeActivationBytes routed = MoeLayerActivationBytes(m);
  const char* margin_kind = moe.capacity_factor() > 0 ? "capacity factor" : "dropless imbalance margin";
  SetTerm(
      e.add_device(), c.explain, "activations", moe_layers * inflight * (block + kept),
      [&] {
        return N(moe_layers) + " MoE layer(s) x " + N(inflight) + " in flight x (" + N(block) +
               " B block with shared experts ffn " + N(shared) + " + " + N(kept) +
               " B routed: " +
               (kept > 0 ? MoeActivationFormula(m) : std::string("rebuilt by recompute")) + ", " +
               margin_kind + ")";
      },
      kMoeActivationSource);
  if (RecomputesBlocks(in.recompute)) {
    // Backward rebuilds one block at a time: its routed activations exist during that block's
    // backward (the dense part is in the recompute working term).
    SetTerm(
        e.add_device(), c.explain, "activations", routed.kept,
        [&] { return "the MoE block rebuilt for its backward: routed " + MoeActivationFormula(m); },
        kMoeActivationSource);
  }
  SetTerm(
      e.add_device(), c.explain, "communication_buffers", routed.transient,
      [&] {
        return "router and dispatch buffers of one MoE layer: logits T*E*a " +
               N(m.tokens * m.experts * m.activation_bytes) + " B" +
               (m.activation_bytes < 4 ? " + their fp32 copy 4*T*E" : "") +
               (m.ep > 1 ? " + all-to-all send and receive 2*R*h*a + counts 16*E, ep " + N(m.ep)
                         : std::string(" (ep 1: no all-to-all)"));
      },
      kMoeActivationSource);
}

// How many activations in flight, pending weight gradients and stage outputs awaiting their
// gradient the estimate counts at the stage's peak. Fused-backward schedules: their separate peaks
// (one op holds all three: the last warm-up forward), outputs awaiting as below. Zero-bubble
// schedules: the candidate (StageLayout::live_candidates) whose bytes are the largest, with
// `inflight_bytes` per activation in flight, ExecutorPendingWeightGradBytesPerBlock per pending
// block and `output_bytes` per stage output.
LiveCounts LiveCountsAtPeak(const StageLayout& layout, int64_t inflight_bytes, int64_t pending_bytes,
                            int64_t output_bytes) {
  LiveCounts at_peak;
  at_peak.inflight = std::max<int64_t>(layout.inflight_microbatches, 1);
  at_peak.pending_weight = layout.pending_weight_grads;
  // On an interleaved last stage every chunk but the last sends one output too, and its last
  // chunk keeps one microbatch at a time (1F1B on the last virtual stage).
  at_peak.awaiting_output = !layout.has_lm_head ? at_peak.inflight
                            : layout.interleaved() ? at_peak.inflight - 1
                                                   : 0;
  int64_t largest = -1;
  for (const LiveCounts& l : layout.live_candidates) {
    const int64_t bytes = l.inflight * inflight_bytes + l.pending_weight * pending_bytes +
                          l.awaiting_output * output_bytes;
    if (bytes > largest) {
      largest = bytes;
      at_peak = l;
    }
  }
  return at_peak;
}

// Activations of the stage's blocks (and the one recomputed), stage outputs awaiting their
// gradients, and the head's logits.
void AddActivationTerms(const SharedInputs& c, const StageLayout& layout, ir::MemoryEstimate& e) {
  const MemoryInputs& in = c.in;
  const bool explain = c.explain, pipeline = c.pipeline;
  const int64_t tp = c.tp, padded_vocab = c.padded_vocab, seq = c.seq, h = c.h;
  auto device = [&e] { return e.add_device(); };
  // Activations: the tensors the executor keeps, tensor by tensor (executor_activations.h).
  // One activation in flight spans the stage's blocks, or one chunk's when interleaved.
  const int64_t layers = layout.LargestChunkLayers();
  // accel's executor runs every layout the planner makes: its own tensors are counted exactly,
  // tensor and context parallel included.
  const ExecutorActivationShape exec_shape = ExecutorShapeOf(in, seq, padded_vocab);
  const int64_t per_layer = ExecutorKeptBytesPerLayer(exec_shape, in.recompute);
  // Mixture of experts: the MoE blocks of the largest chunk get their own term
  // (AddMoeActivationTerms); the term below counts the dense ones.
  const int64_t moe_layers = MoeLayersOfLargestChunk(in.model, layout);
  const int64_t dense_layers = layers - moe_layers;
  int64_t inflight_bytes = dense_layers * per_layer;
  if (moe_layers > 0) {
    const MoeKeptBytes k = MoeKeptBytesPerLayer(c, exec_shape);
    inflight_bytes += moe_layers * (k.block + k.routed);
  }
  const LiveCounts live =
      LiveCountsAtPeak(layout, inflight_bytes, layers * ExecutorPendingWeightGradBytesPerBlock(exec_shape),
                       pipeline ? BoundaryBytes(c) : 0);
  const int64_t inflight = std::max<int64_t>(live.inflight, 1);
  const auto dims = [&] { return ExecutorActivationFormula(exec_shape, in.recompute); };
  if (moe_layers > 0) AddMoeActivationTerms(c, moe_layers, inflight, exec_shape, e);
  if (dense_layers > 0) {
    SetTerm(
        device(), explain, "activations", dense_layers * inflight * per_layer,
        [&] {
          const char* what = layout.interleaved()
                                 ? (inflight == 1 ? " chunk activation in flight x " : " chunk activations in flight x ")
                                 : (inflight == 1 ? " microbatch in flight x " : " microbatches in flight x ");
          return N(dense_layers) + (dense_layers == 1 ? " layer x " : " layers x ") + N(inflight) + what +
                 N(per_layer) + " B per layer" + (layout.interleaved() ? " (largest chunk)" : "") + "; " +
                 dims();
        },
        kExecutorActivationSource);
  }
  if (layers > 0 && RecomputesBlocks(in.recompute)) {
    AddRecomputeWorkingTerm(c, layout, exec_shape, dims, e);
  }
  if (layers > 0 && live.pending_weight > 0) {
    AddPendingWeightGradTerm(c, layout, live.pending_weight, exec_shape, e);
  }
  // A stage's output waits for its gradient from the next stage (pipeline_schedule.cc).
  const int64_t awaiting = live.awaiting_output;
  // Under tensor parallelism the head is vocabulary-parallel: the head functions count this
  // rank's V / t rows (executor/models/ops/chunked_cross_entropy.h).
  const ExecutorActivationShape& head_shape = exec_shape;
  if (pipeline && awaiting > 0) {
    // A sequence shard with sequence parallelism.
    const int64_t shards = in.sequence_parallel ? tp : 1;
    const int64_t output = BoundaryBytes(c);
    SetTerm(
        device(), explain, "activations", awaiting * output,
        [&] {
          return N(awaiting) + " stage output(s) awaiting their gradient x s*b*h " +
                 N(seq * in.micro_batch_size * h) + " x " + N(in.param_bytes) + " B" +
                 (shards > 1 ? " / t " + N(shards) : "");
        },
        kExecutorActivationSource);
  }
  if (layers > 0 && (pipeline || layout.has_lm_head)) AddBlockPhaseTerm(c, layout, exec_shape, e);
  if (pipeline && layout.has_lm_head && !layout.interleaved() && inflight > 1) {
    const int64_t kept = ExecutorHeadKeptBytes(head_shape);
    SetTerm(
        device(), explain, "logits", (inflight - 1) * kept,
        [&] {
          return N(inflight - 1) + " more microbatch(es) in flight x " + N(kept) +
                 " B final norm, head input, targets and log-sum-exp kept for backward";
        },
        kExecutorActivationSource);
  }
  if (layout.has_lm_head) {
    const int64_t head = ExecutorHeadBytes(head_shape);
    SetTerm(
        device(), explain, "logits", head,
        [&] {
          return "final norm + head input + targets and log-sum-exp 12*s*b, then the chunked loss "
                 "backward: input and weight gradients, one chunk's fp32 logits and their gradient" +
                 std::string(exec_shape.bf16_compute && !exec_shape.bf16_params
                                 ? " + bf16 output-weight copy"
                                 : "") +
                 ", V_padded" + (tp > 1 ? "/t " + N(padded_vocab / tp) : " " + N(padded_vocab)) +
                 " in " + N(in.loss_chunks) + (in.loss_chunks == 1 ? " chunk" : " chunks") +
                 ", s=" + N(seq) + " b=" + N(in.micro_batch_size);
        },
        kExecutorActivationSource);
  } else if (layout.has_lm_head) {
    const int64_t logits =
        LogitsBytes(seq, in.micro_batch_size, padded_vocab, tp, in.compute_bytes);
    SetTerm(
        device(), explain, "logits", logits,
        [&] {
          return "s " + N(seq) + " x b " + N(in.micro_batch_size) + " x V_padded/t " +
                 N(CeilDiv(padded_vocab, tp)) + " x " +
                 (in.compute_bytes < 4
                      ? "(4 B fp32 for the loss + " + N(in.compute_bytes) + " B compute copy)"
                      : std::string("4 B fp32"));
        },
        kLogitsSource);
  }
}

// Reduce buckets, the stage-3 working set, the allocator reserve and the runtime overhead; then
// the totals and the fit.
void AddOverheadTerms(const SharedInputs& c, const StageLayout& layout, int64_t largest_unit,
                      ir::MemoryEstimate& e) {
  const MemoryInputs& in = c.in;
  const bool explain = c.explain;
  const int64_t stage = c.stage, degree = c.degree;
  auto device = [&e] { return e.add_device(); };
  if (in.dp_replicate * in.dp_shard > 1 && in.bucket_elements > 0) {
    SetTerm(
        device(), explain, "communication_buffers",
        ReduceBucketBytes(in.bucket_elements, in.reduce_bytes),
        [&] {
          return "2 buckets x " + N(in.bucket_elements) + " elements x " + N(in.reduce_bytes) +
                 " B (reduce dtype, double-buffered)";
        },
        kBucketSource);
  }
  if (stage >= 3 && degree > 1) {
    AddStage3GatherTerms(explain, in, layout, c.params, largest_unit, degree, c.dtypes, e);
  }

  if (in.grad_accum_steps == 1 && in.stages.size() <= 1) {
    OverlapGradientsWithActivations(explain, e);
  } else {
    OverlapGradientCopyWithActivations(explain, e);
  }
  int64_t subtotal = 0;
  for (const ir::MemoryTerm& t : e.device()) subtotal += t.bytes();
  const int64_t reserve = AllocatorReserveBytes(subtotal, in.device_type);
  if (reserve > 0) {
    SetTerm(
        device(), explain, "runtime_overhead", reserve,
        [&] { return "5% of " + N(subtotal) + " B (allocator reserve)"; }, kReserveSource);
  }
  SetTerm(
      device(), explain, "runtime_overhead", in.runtime_overhead_bytes,
      [&] { return N(in.runtime_overhead_bytes) + " B per device (cluster.runtime_overhead)"; },
      in.device_type == ir::DEVICE_TYPE_CPU ? kCpuOverheadSource : kOverheadSource);

  int64_t device_total = 0, host_total = 0;
  for (const ir::MemoryTerm& t : e.device()) device_total += t.bytes();
  for (const ir::MemoryTerm& t : e.host()) host_total += t.bytes();
  e.set_device_total_bytes(device_total);
  e.set_host_total_bytes(host_total);
  e.set_device_limit_bytes(in.device_memory_bytes);
  e.set_fits(in.device_memory_bytes <= 0 || device_total <= in.device_memory_bytes);
}

}  // namespace

absl::StatusOr<std::vector<ir::MemoryEstimate>> EstimateMemory(const MemoryInputs& in) {
  google::protobuf::RepeatedPtrField<ir::MemoryEstimate> estimates;
  ACCEL_RETURN_IF_ERROR(
      EstimateMemoryInto(in, BuildModelParams(in.model, std::max<int64_t>(in.tp, 1)), estimates));
  std::vector<ir::MemoryEstimate> out;
  out.reserve(estimates.size());
  for (ir::MemoryEstimate& e : estimates) out.push_back(std::move(e));
  return out;
}

absl::Status EstimateMemoryInto(const MemoryInputs& in, const ModelParams& params,
                                google::protobuf::RepeatedPtrField<ir::MemoryEstimate>& out) {
  ACCEL_ASSIGN_OR_RETURN(ModelStateDtypes dtypes,
                         ModelStateDtypesFor(in.param_bytes, in.optimizer, in.momentum));
  SharedInputs c{in, params, dtypes};
  c.explain = in.explain;
  c.tp = std::max<int64_t>(in.tp, 1);
  c.padded_vocab = in.model.padded_vocab_size();
  if (c.padded_vocab < in.model.vocab_size() || c.padded_vocab % c.tp != 0) {
    c.padded_vocab = PaddedVocabSize(in.model.vocab_size(), c.tp);
  }
  std::vector<StageLayout> stages = in.stages;
  if (stages.empty()) stages = EvenStageLayouts(in.model.num_layers(), 1, in.pipeline_schedule, 1);
  c.pipeline = stages.size() > 1;
  c.degree = std::max<int64_t>(in.dp_shard, 1);
  c.stage = in.sharding_stage;
  c.seq = CeilDiv(in.seq_len, std::max<int64_t>(in.cp, 1));
  c.h = in.model.hidden_size();
  c.ffn = ir::FfnSize(in.model);
  out.Reserve(static_cast<int>(stages.size()));
  for (const StageLayout& layout : stages) {
    ir::MemoryEstimate& e = *out.Add();
    e.set_stage(layout.index);
    const StageCounts counts = CountStage(c, layout);
    const bool stage3_phase = c.stage >= 3 && c.degree > 1 && !RecomputesBlocks(in.recompute);
    const bool tied_whole =
        layout.has_embedding && layout.has_lm_head && in.model.tie_word_embeddings();
    c.unit_grad = stage3_phase ? counts.largest_block_unit * c.dtypes.grad_bytes : 0;
    c.tied_grad =
        stage3_phase && tied_whole ? LocalCount(c.params.embedding) * c.dtypes.grad_bytes : 0;
    AddModelStateTerms(c, counts.count, StateGroup{c.degree, "dp_shard", ""}, e);
    if (counts.expert_count > 0) {
      const int64_t ep = ExpertParallel(in.model);
      const int64_t degree = std::max<int64_t>(in.model.moe().expert_data_parallel(), 1);
      AddModelStateTerms(c, counts.expert_count,
                         StateGroup{degree, "ep_dp",
                                    "routed experts, " + N(in.model.moe().num_experts() / ep) +
                                        " of " + N(in.model.moe().num_experts()) + " per rank (ep " +
                                        N(ep) + "): "},
                         e);
    }
    AddActivationTerms(c, layout, e);
    AddOverheadTerms(c, layout, counts.largest_unit, e);
  }
  return absl::OkStatus();
}

std::vector<FitSuggestion> SuggestChangesThatFit(const MemoryInputs& in) {
  std::vector<FitSuggestion> out;
  if (in.device_memory_bytes <= 0) return out;
  const int64_t limit = in.device_memory_bytes;
  auto offer = [&](const std::string& field, const std::string& value, const Outcome& o,
                   const std::string& extra) {
    out.push_back({field, value, o.peak, Describe(field, value, o.peak, limit, extra)});
  };

  // Sharding only helps when there is a shard axis to spread over.
  if (in.dp_shard > 1) {
    for (int64_t stage = in.sharding_stage + 1; stage <= 3; ++stage) {
      MemoryInputs m = in;
      m.sharding_stage = stage;
      const Outcome o = Evaluate(m);
      if (o.fits) {
        offer("sharding.stage", std::to_string(stage), o, "");
        break;
      }
    }
  }
  // Plain data parallelism (nothing on dp_shard): shard over the replicas instead, ZeRO over
  // the whole data-parallel group. When sharding alone is not enough, the same change with
  // recompute is offered as one suggestion, since neither alone fits.
  if (in.dp_shard == 1 && in.dp_replicate > 1) {
    const std::string moved = " with parallel.data_shard: " + std::to_string(in.dp_replicate) +
                              " and data_replicate: 1";
    bool offered = false;
    for (int64_t stage = std::max<int64_t>(1, in.sharding_stage + 1); stage <= 3 && !offered;
         ++stage) {
      MemoryInputs m = in;
      m.dp_shard = in.dp_replicate;
      m.dp_replicate = 1;
      m.sharding_stage = stage;
      const Outcome o = Evaluate(m);
      if (o.fits) {
        offer("sharding.stage", std::to_string(stage), o, moved);
        offered = true;
      }
    }
    for (RecomputeMode mode : {RecomputeMode::kSelective, RecomputeMode::kOp, RecomputeMode::kFull}) {
      if (offered || static_cast<int>(mode) <= static_cast<int>(in.recompute)) continue;
      MemoryInputs m = in;
      m.dp_shard = in.dp_replicate;
      m.dp_replicate = 1;
      m.sharding_stage = 3;
      m.recompute = mode;
      const Outcome o = Evaluate(m);
      if (o.fits) {
        offer("sharding.stage", "3", o,
              moved + " and training.recompute: " + RecomputeName(mode));
        offered = true;
      }
    }
  }
  for (RecomputeMode mode : {RecomputeMode::kSelective, RecomputeMode::kOp, RecomputeMode::kFull}) {
    if (static_cast<int>(mode) <= static_cast<int>(in.recompute)) continue;
    MemoryInputs m = in;
    m.recompute = mode;
    const Outcome o = Evaluate(m);
    if (o.fits) {
      offer("training.recompute", RecomputeName(mode), o, "");
      break;
    }
  }
  // Offload needs sharding (E0409), parameter offload stage 3 (E0414).
  if (in.sharding_stage >= 1 && in.offload == spec::Offload::kNone) {
    MemoryInputs m = in;
    m.offload = spec::Offload::kOptimizer;
    Outcome o = Evaluate(m);
    if (o.fits) {
      offer("sharding.offload", "optimizer", o, "");
    } else if (in.sharding_stage == 3) {
      m.offload = spec::Offload::kAll;
      o = Evaluate(m);
      if (o.fits) offer("sharding.offload", "all", o, "");
    }
  } else if (in.sharding_stage == 3 && in.offload == spec::Offload::kOptimizer) {
    MemoryInputs m = in;
    m.offload = spec::Offload::kAll;
    const Outcome o = Evaluate(m);
    if (o.fits) offer("sharding.offload", "all", o, "");
  }
  for (int64_t b = in.micro_batch_size / 2; b >= 1; b /= 2) {
    MemoryInputs m = in;
    m.micro_batch_size = b;
    const Outcome o = Evaluate(m);
    if (o.fits) {
      offer("data.micro_batch_size", std::to_string(b), o,
            " and " + std::to_string(in.micro_batch_size / b) +
                "x the gradient accumulation steps to keep the global batch");
      break;
    }
  }

  const int64_t heads = in.model.num_heads();
  const int64_t kv = ir::KvHeads(in.model);
  for (int64_t factor = 2; in.tp * factor <= in.devices_per_node; factor *= 2) {
    const int64_t tp = in.tp * factor;
    if (heads % tp != 0 || (kv % tp != 0 && ir::KvHeadReplicas(kv, tp) == 1)) break;
    MemoryInputs m = in;
    if (!TakeFromDataParallel(m, factor)) break;
    m.tp = tp;
    m.model.set_padded_vocab_size(PaddedVocabSize(m.model.vocab_size(), tp));
    const Outcome o = Evaluate(m);
    if (o.fits) {
      offer("parallel.tensor", std::to_string(tp), o,
            m.dp_replicate != in.dp_replicate
                ? " with data_replicate " + std::to_string(m.dp_replicate)
                : " with data_shard " + std::to_string(m.dp_shard));
      break;
    }
  }
  const int64_t v = std::max<int64_t>(in.virtual_stages, 1);
  for (int64_t factor = 2; in.pp * factor * v <= in.model.num_layers(); factor *= 2) {
    const int64_t pp = in.pp * factor;
    MemoryInputs m = in;
    if (!TakeFromDataParallel(m, factor)) break;
    m.pp = pp;
    m.microbatches = std::max(in.microbatches, pp);
    m.stages = EvenStageLayouts(in.model.num_layers(), pp, in.pipeline_schedule, m.microbatches, v);
    const Outcome o = Evaluate(m);
    if (o.fits) {
      offer("parallel.pipeline", std::to_string(pp), o,
            m.dp_replicate != in.dp_replicate
                ? " with data_replicate " + std::to_string(m.dp_replicate)
                : " with data_shard " + std::to_string(m.dp_shard));
      break;
    }
  }
  return out;
}

}  // namespace accel::planner
