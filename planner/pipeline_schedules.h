// The op lists of the pipeline schedules accel plans, and how many microbatch activations each
// keeps alive. One place for both, so the schedule-pipeline pass, the memory estimator and the
// step-time model agree. Forward and backward ops carry their receives before and their sends
// after; sends are asynchronous (isend) and receives block, as the executor runs them.
#ifndef ACCEL_PLANNER_PIPELINE_SCHEDULES_H_
#define ACCEL_PLANNER_PIPELINE_SCHEDULES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/plan.pb.h"

namespace accel::planner {

// One schedule's shape: p stages, v model chunks per stage (1 unless interleaved or ZBV), m
// microbatches.
struct ScheduleShape {
  ir::PipelineSchedule schedule = ir::PIPELINE_SCHEDULE_1F1B;
  int32_t stages = 1;             // p ≥ 1
  int32_t virtual_stages = 1;     // v ≥ 1; v ≥ 2 with interleaved_1f1b, 2 with zbv, else 1
  int32_t microbatches = 1;       // m ≥ 1; a multiple of p for interleaved_1f1b
};

// Whether the schedule splits the backward into BACKWARD_INPUT and BACKWARD_WEIGHT (zb_h1, zbv).
bool SplitsBackward(ir::PipelineSchedule schedule);

// Replaces stage `s`'s ops (0 ≤ s < p) with its schedule for one optimizer step:
//   - p = 1: forward and backward of each microbatch in turn (gradient accumulation);
//   - GPipe (Huang et al. 2019): all forwards, then all backwards;
//   - 1F1B (PipeDream-Flush, Narayanan et al. 2021 §2.2.1; Megatron-LM's default):
//     min(p − s − 1, m) warm-up forwards, then one forward and one backward alternately, then
//     the remaining backwards;
//   - interleaved 1F1B (Narayanan et al. 2021 §2.2.2; Megatron-LM's
//     forward_backward_pipelining_with_interleaving): m·v forwards and m·v backwards of chunk
//     ops; forward k runs chunk (k mod p·v) div p on microbatch (k div p·v)·p + k mod p, backward
//     k the chunk v − 1 − (k mod p·v) div p of the same microbatch; (p − s − 1)·2 + (v − 1)·p
//     warm-up forwards (all m·v when m = p), then alternation, then the remaining backwards;
//   - ZB-H1 (Qi et al. 2023, arXiv:2401.10241, §3.1; PyTorch's _get_1f1b_rank_ops with
//     enable_zero_bubble and one stage per rank): 1F1B's warm-up, then F and I (backward input)
//     alternately, each I followed by the W (backward weight) of the oldest pending microbatch
//     once s microbatches wait, so stage s keeps s W's back to fill its cool-down; the rest last;
//   - ZBV (Qi et al. 2023 §6; PyTorch's ScheduleZBVZeroBubble): 2 chunks in a V
//     (ir::ScheduledVirtualStage), phases: 2(p − s) − 1 chunk-0 forwards; s pairs F chunk 1,
//     F chunk 0; p − s triples F, I, W of chunk 1; steady F, I, W of chunk 0 then of chunk 1
//     until every forward ran; s pairs I chunk 0, I chunk 1; p − s pairs I chunk 0, W (oldest)
//     chunk 0; the W's left of chunk 1, then chunk 0. Written for max(m, 2p − 1) microbatches
//     and the ops of microbatches ≥ m dropped, as PyTorch does.
// Also sets max_inflight_microbatches (InflightMicrobatches) and max_pending_weight_grads
// (PendingWeightGrads). Chunk c of stage s is virtual stage ir::ScheduledVirtualStage(schedule,
// p, s, c); its activation comes from the stage holding the previous virtual stage and its
// gradient from the next one's, with no send or receive when that is s itself (ZBV's turn).
void WriteStageOps(const ScheduleShape& shape, int32_t s, ir::PipelineStage& stage);

// The most activations stage s keeps alive at once under `shape` (chunk activations when v > 1):
// p = 1: 1; GPipe: m; 1F1B and ZB-H1: min(p − s, m); interleaved: m·v when m = p, else
// min(m·v, (p − s − 1)·2 + (v − 1)·p + 1); ZBV: PeakInflight of its op list. Equals
// PeakInflight of WriteStageOps's list (tested); the memory estimator reads it without building
// op lists (except for ZBV, whose list it builds).
int64_t InflightMicrobatches(const ScheduleShape& shape, int32_t s);

// The most chunk-microbatches stage s holds with their backward input done and their backward
// weight not yet (PendingWeight of WriteStageOps's list): ZB-H1: min(s + 1, m); ZBV: from its op
// list; 0 for fused-backward schedules.
int64_t PendingWeightGrads(const ScheduleShape& shape, int32_t s);

// The peak of forwards run minus backwards run (BACKWARD or BACKWARD_INPUT) over a stage's op
// list: the activations alive at once.
int64_t PeakInflight(const ir::PipelineStage& stage);

// The peak of BACKWARD_INPUT ops run minus BACKWARD_WEIGHT ops run over a stage's op list.
int64_t PeakPendingWeight(const ir::PipelineStage& stage);

// What stage s holds alive between two ops of its list, in units the memory estimator prices:
// activations in flight (a FORWARD whose BACKWARD or BACKWARD_INPUT has not run; chunk
// activations when v > 1), weight gradients pending (a BACKWARD_INPUT whose BACKWARD_WEIGHT has not
// run) and stage outputs awaiting their gradient from another stage (executor/train/
// pipeline_schedule.cc keeps a chunk's output until its backward; the last virtual stage's output
// is its loss, and ZBV's stage p − 1 hands chunk 0's output to chunk 1 as a view of the same
// storage, so neither awaits anything).
struct LiveCounts {
  int64_t inflight = 0;
  int64_t pending_weight = 0;
  int64_t awaiting_output = 0;
};

// The LiveCounts after each op of `stage` (stage s of `shape`; ops as WriteStageOps writes them),
// keeping only those no other one covers in all three counts: the candidates for the stage's peak,
// whichever bytes each count costs. Under a fused backward the peak is one state; under zero-bubble
// schedules in-flight activations and pending weight gradients peak at different ops (ZB-H1's
// stage s holds min(p − s, m) activations before its first I and its s + 1 pending W's later).
std::vector<LiveCounts> PeakLiveCandidates(const ScheduleShape& shape, int32_t s,
                                           const ir::PipelineStage& stage);

// The idle fraction of the schedule's unit-slot timeline (every compute op one slot per chunk):
// (p − 1)/(v·m + p − 1) for GPipe, 1F1B and interleaved (Narayanan et al. 2021 §2.2: the bubble
// is (p − 1)/m of the ideal time for 1F1B, and 1/v of that when interleaved); for ZB-H1 and ZBV
// the fraction ir::SimulatePipeline finds for WriteStageOps's lists (F = I = W = 1 slot). 0 for
// p = 1.
double ScheduleBubbleFraction(const ScheduleShape& shape);

// The whole pipeline of `shape` with op lists: p stages with index, chunks (virtual stages only,
// no layers) and ops. For simulations of a schedule apart from a plan.
ir::Pipeline ScheduledPipeline(const ScheduleShape& shape);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_PIPELINE_SCHEDULES_H_
