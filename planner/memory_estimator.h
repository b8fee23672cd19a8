#ifndef ACCEL_PLANNER_MEMORY_ESTIMATOR_H_
#define ACCEL_PLANNER_MEMORY_ESTIMATOR_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "planner/memory_model.h"
#include "planner/model_params.h"
#include "planner/pipeline_schedules.h"
#include "spec/job_spec.h"

// The per-rank memory estimate of a whole job, built from a small input struct so callers
// (the estimate-memory pass, `accel estimate-memory`, the "would fit" suggestions) can change
// one knob and estimate again with exactly the same formulas (planner/memory_model.h).
namespace accel::planner {

// The layers and extras one pipeline stage holds.
struct StageLayout {
  int32_t index = 0;
  int64_t layer_begin = 0;   // first transformer block (of chunk 0 when interleaved)
  int64_t layer_end = 0;     // one past the last block (of chunk 0 when interleaved)
  bool has_embedding = false;
  bool has_lm_head = false;  // also the final norm and the loss
  // Activations alive at once (1F1B: p − index; GPipe: m); interleaved: chunk activations
  // (planner/pipeline_schedules.h InflightMicrobatches).
  int64_t inflight_microbatches = 1;
  // Zero-bubble schedules: weight gradients pending at once (ir::PipelineStage
  // max_pending_weight_grads, PendingWeightGrads), each keeping
  // ExecutorPendingWeightGradBytesPerBlock per block of the largest chunk; 0 otherwise.
  int64_t pending_weight_grads = 0;
  // Zero-bubble schedules: the peak candidates of what the stage holds at once
  // (planner/pipeline_schedules.h PeakLiveCandidates); the estimate prices each and takes the
  // largest, instead of adding the separate peaks above. Empty for fused-backward schedules, whose
  // peak is inflight_microbatches.
  std::vector<LiveCounts> live_candidates;
  // Interleaved 1F1B and ZBV: every chunk's [begin, end) blocks, chunk 0 first (ir::ModelChunk); empty:
  // the one chunk [layer_begin, layer_end).
  std::vector<std::pair<int64_t, int64_t>> chunks;

  bool interleaved() const { return chunks.size() > 1; }
  // Blocks over all chunks, and of the largest chunk (what one chunk activation spans).
  int64_t Layers() const;
  int64_t LargestChunkLayers() const;
};

// Everything the estimate depends on. Sizes in elements or bytes as named; degrees ≥ 1.
struct MemoryInputs {
  ir::Model model;                   // dimensions; padded_vocab_size for `tp`
  int64_t seq_len = 0;               // tokens per sequence
  int64_t micro_batch_size = 0;      // sequences per rank per micro-step
  int64_t param_bytes = 4;           // stored parameter dtype
  int64_t compute_bytes = 4;         // autocast dtype: activations and logits
  int64_t reduce_bytes = 4;          // gradient reduction dtype: bucket buffers
  ir::OptimizerKind optimizer = ir::OPTIMIZER_KIND_ADAMW;
  double momentum = 0.0;             // sgd only
  int64_t pp = 1, dp_replicate = 1, dp_shard = 1, cp = 1, tp = 1;
  int64_t devices_per_node = 1;      // bounds tp in suggestions (tp stays inside a node)
  bool sequence_parallel = false;
  bool cp_ulysses = false;           // cp > 1 by DeepSpeed-Ulysses (else ring attention)
  RecomputeMode recompute = RecomputeMode::kNone;
  bool fused_attention = false;      // model.attention_kernel SDPA
  int64_t loss_chunks = 0;           // training.loss_chunks (0: ExecutorActivationShape's default)
  int64_t sharding_stage = 0;        // ZeRO 0–3 over dp_shard
  spec::Offload offload = spec::Offload::kNone;
  int64_t bucket_elements = 0;       // reduce bucket
  int64_t prefetch_bucket_elements = 0;  // stage 3 only
  ir::PipelineSchedule pipeline_schedule = ir::PIPELINE_SCHEDULE_1F1B;
  int64_t virtual_stages = 1;        // model chunks per stage (interleaved_1f1b)
  int64_t microbatches = 1;          // pipeline microbatches m (1 without pipelining)
  int64_t grad_accum_steps = 0;      // micro-steps per update; 1: gradients overlap activations
  std::vector<StageLayout> stages;   // empty: one stage holding the whole model
  ir::DeviceType device_type = ir::DEVICE_TYPE_CUDA;
  int64_t device_memory_bytes = 0;   // per device; 0: unknown, everything "fits"
  int64_t runtime_overhead_bytes = 0;
  // Fill each MemoryTerm's formula and source. false (the planner's summary mode): categories
  // and bytes only, every number unchanged; formulas are most of the estimate's cost.
  bool explain = true;
};

// Reads the inputs from a plan after schedule-pipeline (model, batch, precision, training,
// mesh, pipeline, sharding, topology); `sequence_parallel` comes from the spec (the plan has no
// field for it). Missing mesh axes count as 1, a missing pipeline as one stage with everything.
// Errors: InvalidArgument for dtype, recompute, offload or optimizer names the planner never
// writes (a bug upstream, not a user error).
absl::StatusOr<MemoryInputs> MemoryInputsFromPlan(const ir::Plan& plan, bool sequence_parallel);

// Splits `num_layers` blocks over `pp` stages (× `virtual_stages` chunks each, interleaved) as
// the assign-stages pass does, the earlier ones taking the extra layers; stage 0 has the
// embedding, the last the head; in-flight microbatches as InflightMicrobatches
// (planner/pipeline_schedules.h): p − index for 1F1B (at most m), m for GPipe (docs/planner-facts.md
// §3), chunk activations for interleaved.
std::vector<StageLayout> EvenStageLayouts(int64_t num_layers, int64_t pp,
                                          ir::PipelineSchedule schedule, int64_t microbatches,
                                          int64_t virtual_stages = 1);

// One MemoryEstimate per stage, in stage order: device terms (parameters, gradients,
// master_weights, optimizer_states, activations, logits, communication_buffers,
// runtime_overhead), host terms for offloaded states, totals, limit and fit. Every term carries
// its formula with the numbers substituted and its source. Errors: InvalidArgument for an
// unknown optimizer.
absl::StatusOr<std::vector<ir::MemoryEstimate>> EstimateMemory(const MemoryInputs& inputs);

// EstimateMemory appending the estimates to `out` (e.g. plan.mutable_memory(): built in place,
// on the plan's arena if it has one) with the parameter table given: `params` must be
// BuildModelParams(inputs.model, inputs.tp) (the planner shares one per plan, the layout search
// one per tensor degree). Errors as EstimateMemory; `out` is unchanged then.
absl::Status EstimateMemoryInto(const MemoryInputs& inputs, const ModelParams& params,
                                google::protobuf::RepeatedPtrField<ir::MemoryEstimate>& out);

// A single change to the job that makes every stage fit, re-estimated with EstimateMemory.
struct FitSuggestion {
  std::string field;       // dotted spec path: "sharding.stage", "training.recompute", ...
  std::string value;       // the new value as written in YAML
  int64_t peak_bytes = 0;  // largest stage's device total with the change
  std::string text;        // one line for a diagnostic note
};

// Tries, in order: a higher sharding stage (when dp_shard > 1); for plain data parallelism
// (dp_shard 1, dp_replicate > 1) sharding over the replicas, alone or, when that is not enough,
// together with recompute; selective then full recompute,
// optimizer/parameter offload, a smaller micro batch (halving), twice the tensor degree
// (taken from dp_replicate, else dp_shard; heads and kv heads divisible; within a node), twice
// the pipeline degree (likewise, at most one layer per stage). For each kind only the
// smallest change that fits is offered; kinds that cannot fit are left out.
std::vector<FitSuggestion> SuggestChangesThatFit(const MemoryInputs& inputs);

// Name of a recompute mode as written in the spec: "none" | "selective" | "full".
const char* RecomputeName(RecomputeMode mode);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_MEMORY_ESTIMATOR_H_
