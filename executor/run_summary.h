// How `accel worker` sums up a run once its loop ends: every rank's measured memory and pipeline
// waits gathered over the world, rank 0's closing log lines and run_dir/summary.json
// (executor/run_metrics.h RunSummary).
#ifndef ACCEL_EXECUTOR_RUN_SUMMARY_H_
#define ACCEL_EXECUTOR_RUN_SUMMARY_H_

#include "absl/status/status.h"
#include "executor/worker_log.h"
#include "executor/worker_state.h"

namespace accel::exec {

// Every rank calls it after the final checkpoint and sample. Gathers over s.world (one
// all-reduce each) the ranks' peak tensor, resident and reserved bytes when s measures memory
// and, with pipeline stages, each stage's share of schedule time blocked in receives. Rank 0
// then logs "done|stopped after step N of T in X s" (seconds since `started`), the memory,
// pipeline and tensor-parallel lines that apply and the summary line (steps, final loss, mean
// tokens per second over this run's timed steps, peak RSS), and writes summary.json into
// env.run_dir (nothing without a run directory). Errors: those of the all-reduces and of the
// atomic write.
absl::Status ReportRunEnd(RunState& s, const LoopOutcome& o, WorkerClock::time_point started);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_RUN_SUMMARY_H_
