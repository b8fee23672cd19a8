#ifndef ACCEL_PLANNER_LAYOUT_SEARCH_H_
#define ACCEL_PLANNER_LAYOUT_SEARCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "spec/job_spec.h"

// `accel plan --search`: enumerate the layouts of a job's cluster, plan each one with the real
// planner (BuildPlan's passes, in summary mode: PlanOptions.summary_only), keep those whose
// every pipeline stage fits, and rank them by the estimated step time
// (ir::StepTimeEstimate.step_seconds). No planner rule is repeated here: a candidate is valid
// exactly when the planner reports no error for it.
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
};

// The search space for `spec` with global batch `global_batch` (sequences):
//   - every ordered factorization world = data_replicate × data_shard × tensor × pipeline × cp,
//     with cp the spec's parallel.context (1 when it is auto);
//   - sharding stage 0..3;
//   - micro batch m among the divisors of the global batch up to 4 × the spec's
//     micro_batch_size, kept only when global_batch is a multiple of m × data_replicate ×
//     data_shard (the batch identity global = micro × dp × accumulation, DESIGN.md "Terms");
//   - recompute none, selective, full;
//   - pipeline schedule gpipe, 1f1b and interleaved_1f1b (virtual_stages auto: 2 model chunks
//     per stage) when pipeline > 1 (1f1b otherwise).
// Order: deterministic (degrees, then stage, micro batch, recompute, schedule).
std::vector<Layout> EnumerateLayouts(const spec::JobSpec& spec, int64_t global_batch);

// `spec` with `layout` applied: the parallel degrees, sharding.stage, data.micro_batch_size,
// training.recompute and parallel.pipeline_schedule set; data.global_batch_size set to
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
