#ifndef ACCEL_PLANNER_LAYOUT_SEARCH_H_
#define ACCEL_PLANNER_LAYOUT_SEARCH_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "spec/job_spec.h"

// `accel plan --search`: enumerate the layouts of a job's cluster, plan each one with the real
// planner (BuildPlan's passes, in summary mode: PlanOptions.summary_only), keep those whose
// every pipeline stage fits, and rank them by the estimated step time
// (ir::StepTimeEstimate.step_seconds). A candidate is valid exactly when the planner reports no
// error for it; the enumeration leaves out only the new dimensions' combinations that a planner
// rule rejects outright (each named below with its code, and tested against the planner).
//
// Executor support: the search ranks what the planner accepts, for every device type. Plans
// the executor of a build cannot run (its pre-launch check, E0601, refuses e.g. context
// parallelism on every device today) are excluded only through SearchOptions.refuse, which a
// caller supplies from the executor's one support check: `accel plan --search` passes
// exec::ExecutorSupportIssues (executor/support, torch-free) unless `--forecast` asks for the
// layouts `accel run` refuses too. The planner does not know the executor's capabilities, and
// a device-type rule copied here would drift from that check.
namespace accel::planner {

// One point of the search space: the values a candidate sets in the job spec.
struct Layout {
  int64_t data_replicate = 1;
  int64_t data_shard = 1;
  int64_t context = 1;
  int64_t tensor = 1;
  int64_t pipeline = 1;
  int64_t sharding_stage = 0;  // ZeRO stage 0..3
  int64_t micro_batch_size = 1;  // sequences per rank per micro-step
  spec::Recompute recompute = spec::Recompute::kNone;
  spec::PipelineSchedule schedule = spec::PipelineSchedule::k1F1B;  // 1f1b when pipeline is 1
  spec::Offload offload = spec::Offload::kNone;  // sharding.offload
  // sharding.hybrid (FSDP HYBRID_SHARD): set exactly when stage is 3, data_replicate > 1 and
  // data_shard > 1. It is not a dimension of its own: the executor shards within dp_shard and
  // all-reduces over dp_replicate whenever dp_replicate > 1 from stage 2, flag or not
  // (plan.proto Sharding), so hybrid false and true plan, cost and run alike; the flag
  // records the FSDP name in the plan and the emitted spec.
  bool hybrid = false;
  // parallel.expert (mixture of experts): the expert-parallel degree carved out of data_shard ×
  // context; 1 for dense models.
  int64_t expert = 1;
};

// The search space for `spec` with global batch `global_batch` (sequences):
//   - every ordered factorization world = data_replicate × data_shard × tensor × pipeline × cp
//     whose tensor degree divides num_heads and ffn_hidden_size, divides num_kv_heads or is a
//     multiple of it (ir::Model.kv_head_replicas), and whose
//     pipeline degree is at most num_layers (resolve-auto: E0203 kHeadsNotDivisible,
//     kKvHeadsNotDivisible, kFfnNotDivisible, kTooFewLayers),
//     cp among the divisors of the world size with seq_len divisible by 2·cp (E0417
//     kContextNotDivisible: two chunks per rank for load balance) and, beyond 1, with
//     cp × tensor ≤ cluster.devices_per_node (the cp ring stays inside a node with the tp
//     group it surrounds in the mesh; a search-space bound like the micro batch's, not a rule),
//     plus the spec's own parallel.context when it sets one;
//   - sharding stage 0..3, each with sharding.offload none; optimizer from stage 1 (E0409
//     kOffloadNeedsSharding); all at stage 3 (E0414 kParamOffloadNeedsStage3);
//   - sharding.hybrid as Layout.hybrid says (E0416 kHybridNeedsStage3, E0410
//     kHybridNeedsReplicate hold by construction);
//   - micro batch m among the divisors of the global batch up to 4 × the spec's
//     micro_batch_size, kept only when global_batch is a multiple of m × data_replicate ×
//     data_shard (the batch identity global = micro × dp × accumulation, docs/design.md "Terms");
//   - for a mixture-of-experts model, the expert degree ep over the divisors of data_shard ×
//     cp that are multiples of cp and divide num_experts (E0424 kExpertNotDivisible), with the
//     expert width divisible by tensor (E0421); dense models are searched at ep 1 only, so
//     they enumerate exactly as many candidates as before the expert axis existed;
//   - recompute none, selective, op, full;
//   - pipeline schedule gpipe, 1f1b and interleaved_1f1b (virtual_stages auto: 2 model chunks
//     per stage) when pipeline > 1 (1f1b otherwise), 1f1b only with at least pipeline
//     microbatches and interleaved_1f1b only with a multiple of pipeline (E0407
//     kTooFewMicrobatches; microbatches = global / (micro × data_replicate × data_shard)).
// Order: deterministic (cp, degrees, stage, hybrid, micro batch, schedule, recompute, offload).
// `apply_rules` false (tests) also lists what the rules named above leave out: every tensor
// and pipeline degree and schedule, every divisor as cp (the cp × tensor bound kept), every
// offload at every stage, and hybrid both false and true for every layout.
std::vector<Layout> EnumerateLayouts(const spec::JobSpec& spec, int64_t global_batch,
                                     bool apply_rules = true);

// `spec` with `layout` applied: the parallel degrees, sharding.stage, data.micro_batch_size,
// training.recompute and parallel.pipeline_schedule, sharding.offload and sharding.hybrid
// set; data.global_batch_size set to
// `global_batch`; data.grad_accum_steps and parallel.pipeline_microbatches auto (the planner
// derives them from the batch identity); parallel.sequence_parallel kept from the spec where
// tensor > 1 and off where tensor is 1 (it has no meaning there).
spec::JobSpec ApplyLayout(const spec::JobSpec& spec, const Layout& layout, int64_t global_batch);

// ApplyLayout into `out`, a copy of `spec` (possibly with another layout applied already): sets
// exactly the fields ApplyLayout sets, reading `spec` for the rest (sequence_parallel), so
// one copy per thread serves every candidate.
void ApplyLayoutTo(const spec::JobSpec& spec, const Layout& layout, int64_t global_batch,
                   spec::JobSpec& out);

// What the search keeps of one fitting candidate's plan (plans themselves are not kept: a
// 1,024-rank plan is megabytes; replan the winner with ApplyLayout + BuildPlan).
struct RankedLayout {
  Layout layout;
  int64_t grad_accum_steps = 0;      // plan.batch; the pipeline microbatches when pipeline > 1
  ir::StepTimeEstimate step_time;    // without the per-collective formulas
  int64_t peak_device_bytes = 0;     // max over stages of MemoryEstimate.device_total_bytes
  int64_t device_limit_bytes = 0;    // MemoryEstimate.device_limit_bytes of that stage
};

// Counts and timing of one search.
struct SearchResult {
  int64_t global_batch = 0;          // sequences, the spec's (resolved) global batch
  int64_t enumerated = 0;            // candidates planned
  int64_t valid = 0;                 // planned without error diagnostics
  int64_t fitting = 0;               // valid and every stage fits (MemoryEstimate.fits)
  // Enumerated but not planned (SearchOptions.skip_dominated): candidates dominated by one that
  // fits unrefused, with the same degrees, stage, micro batch and recompute and offload none
  // instead of optimizer or all, or 1f1b instead of gpipe. Offload never lowers the estimate
  // (step_compute.h, step_communication.h: it adds host copies, moves the optimizer traffic
  // to host memory that is at most as fast, and takes it out of the backward time gradient
  // buckets hide behind), and gpipe and 1f1b have the same bubble, compute and transfers (only
  // 1f1b's activation memory is smaller), so a dominated candidate cannot outrank (ties keep
  // enumeration order) the one that dominates it. Recompute is not in this order: it
  // lengthens backward, which the estimate lets gradient buckets hide behind, and the
  // flop-share split of memory time can give that hiding more than the compute it adds (a
  // test found 0.4% on a small job). Planned in waves (offload? + 2 for gpipe), each candidate
  // only when no immediate predecessor fits or was skipped.
  int64_t dominated = 0;
  int64_t refused = 0;               // fitting but refused by SearchOptions.refuse
  double seconds = 0;                // wall time of enumeration and planning
  std::vector<RankedLayout> ranked;  // the fitting candidates, fastest first (stable on ties)
};

// How SearchLayouts plans its candidates.
struct SearchOptions {
  // Plan candidates in the planner's summary mode (PlanOptions.summary_only): the same checks,
  // diagnostics, memory and step-time estimates as full plans, without the per-rank,
  // per-parameter and per-op tables. false plans every candidate in full (tests compare the
  // two; the results are identical).
  bool summary_only = true;
  // Planning threads; 0: one per hardware thread.
  int threads = 0;
  // Skip the variants SearchResult.dominated describes (false: plan every candidate; tests
  // check the ranking is the same).
  bool skip_dominated = true;
  // A fitting plan for which this returns a non-empty reason (e.g. the executor's
  // ExecutorSupportIssues field) is counted in SearchResult.refused and not ranked. Null:
  // every fitting plan is ranked. Called from the planning threads: it must be thread-safe.
  std::function<std::string(const ir::Plan&)> refuse;
};

// Searches the layouts of `spec`'s cluster. The global batch is the spec's
// data.global_batch_size, or, when it is auto, the value the planner resolves for the spec as
// written. In summary mode the winner is then planned in full and must pass ir::VerifyPlan
// with the same step time and peak memory (SearchResult.seconds includes that plan).
// Errors: InvalidArgument when the global batch is auto and the spec as written does not plan
// through resolve-auto (the message says to set data.global_batch_size); Internal when the
// winner's full plan disagrees with its summary (an accel bug).
absl::StatusOr<SearchResult> SearchLayouts(const spec::JobSpec& spec,
                                           const SearchOptions& options = {});

// "2x4x8x4": dp_replicate x dp_shard x tp x pp, then " cpN" when context N > 1.
std::string DegreesText(const Layout& layout);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_LAYOUT_SEARCH_H_
