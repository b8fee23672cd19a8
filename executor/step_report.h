// What rank 0 of `accel worker` reports about each optimizer step: the metrics.jsonl record
// (executor/run_metrics.h StepRecord) and the progress line on its log.
#ifndef ACCEL_EXECUTOR_STEP_REPORT_H_
#define ACCEL_EXECUTOR_STEP_REPORT_H_

#include <cstdint>
#include <string>

#include "executor/run_metrics.h"
#include "executor/train/trainer.h"
#include "executor/worker_state.h"

namespace accel::exec {

// Peak resident set size of this process in bytes (getrusage reports KiB on Linux). On CPU
// this is the memory the rank really used; on CUDA it is the host side only.
int64_t PeakResidentBytes();

// The record of the step the trainer just completed: `result`, the step's wall seconds
// `step_seconds`, tokens (consumed since step 0) and tokens per second from
// batch.tokens_per_step, seconds since the launcher started the job (0 without
// env.launch_unix_ns), this process's peak RSS and, where s measures them, tensor bytes from the
// counting CPU allocator or the CUDA caching allocator (whose peaks the caller resets before the
// step). tp_comm_seconds is left to the caller.
StepRecord MakeStepRecord(const RunState& s, const StepResult& result, double step_seconds);

// Logs the progress line of record `r` ("step N/T | loss | lr | grad_norm | tok/s | ms/step |
// ETA", the ETA from this run's mean step time in `o`) every training.log_every_steps steps, at
// the last step and at this run's first step (`first_step`, which also logs the seconds since
// launch when the launcher passed its start time).
void LogProgress(const RunState& s, const StepRecord& r, const LoopOutcome& o, bool first_step);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_STEP_REPORT_H_
