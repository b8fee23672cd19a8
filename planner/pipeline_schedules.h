// The op lists of the pipeline schedules accel plans, and how many microbatch activations each
// keeps alive. One place for both, so the schedule-pipeline pass, the memory estimator and the
// step-time model agree. Forward and backward ops carry their receives before and their sends
// after; sends are asynchronous (isend) and receives block, as the executor runs them.
#ifndef ACCEL_PLANNER_PIPELINE_SCHEDULES_H_
#define ACCEL_PLANNER_PIPELINE_SCHEDULES_H_

#include <cstdint>
#include <string>

#include "ir/plan.pb.h"

namespace accel::planner {

// One schedule's shape: p stages, v model chunks per stage (1 unless interleaved), m
// microbatches.
struct ScheduleShape {
  ir::PipelineSchedule schedule = ir::PIPELINE_SCHEDULE_1F1B;
  int32_t stages = 1;             // p ≥ 1
  int32_t virtual_stages = 1;     // v ≥ 1; v ≥ 2 only with interleaved_1f1b
  int32_t microbatches = 1;       // m ≥ 1; a multiple of p for interleaved_1f1b
};

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
//     warm-up forwards (all m·v when m = p), then alternation, then the remaining backwards.
// Also sets max_inflight_microbatches (InflightMicrobatches). Stage s's chunk c is virtual stage
// c·p + s: its activation comes from stage s − 1's chunk c, or stage p − 1's chunk c − 1 when
// s = 0, and goes the opposite way for gradients.
void WriteStageOps(const ScheduleShape& shape, int32_t s, ir::PipelineStage& stage);

// The most activations stage s keeps alive at once under `shape` (chunk activations when
// interleaved), in closed form: p = 1: 1; GPipe: m; 1F1B: min(p − s, m); interleaved: m·v when
// m = p, else min(m·v, (p − s − 1)·2 + (v − 1)·p + 1). Equals PeakInflight of WriteStageOps's
// list (tested); the memory estimator reads it without building op lists.
int64_t InflightMicrobatches(const ScheduleShape& shape, int32_t s);

// The peak of forwards run minus backwards run over a stage's op list.
int64_t PeakInflight(const ir::PipelineStage& stage);

// The idle fraction of the schedule's unit-slot timeline (forward = backward = one slot per
// chunk): (p − 1)/(v·m + p − 1); 0 for p = 1 (Narayanan et al. 2021 §2.2: the bubble is
// (p − 1)/m of the ideal time for 1F1B, and 1/v of that when interleaved).
double ScheduleBubbleFraction(const ScheduleShape& shape);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_PIPELINE_SCHEDULES_H_
