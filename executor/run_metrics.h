// What rank 0 records about a run: one JSON line per optimizer step in metrics.jsonl and the
// run summary (summary.json). Torch-free, so its format is testable without LibTorch.
#ifndef ACCEL_EXECUTOR_RUN_METRICS_H_
#define ACCEL_EXECUTOR_RUN_METRICS_H_

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace accel::exec {

// One optimizer step as seen by rank 0. Times in seconds, memory in bytes.
struct StepRecord {
  int64_t step = 0;                 // 1-based count of optimizer updates done
  double loss = 0;                  // mean over the step's micro-batches and data-parallel ranks
  double lr = 0;
  double grad_norm = 0;             // global norm before clipping
  int64_t tokens = 0;               // tokens consumed by the job since step 0
  double step_seconds = 0;
  double tokens_per_second = 0;     // global tokens of this step / step_seconds
  double since_launch_seconds = 0;  // 0 when the launcher did not pass its start time
  int64_t peak_resident_bytes = 0;  // process max RSS so far (getrusage)
  // Tensor bytes: the peak during this step and the live bytes after it, from the counting CPU
  // allocator on CPU and the CUDA caching allocator's allocated bytes on CUDA; empty when not
  // measured.
  std::optional<int64_t> peak_tensor_bytes;
  std::optional<int64_t> live_tensor_bytes;
  // CUDA only: the caching allocator's peak reserved bytes during this step (allocated plus
  // cached free blocks).
  std::optional<int64_t> peak_reserved_bytes;
  int64_t buckets = 0;                  // gradient buckets reduced this step
  int64_t buckets_launched_in_backward = 0;
  double backward_seconds = 0;
  double comm_wait_seconds = 0;         // time spent waiting for gradient collectives
  // Tensor parallelism only: wall seconds this rank spent inside the model's tensor-parallel
  // collectives this step (transfer, reduction and waiting for the peers; executor/comm_timer.h).
  std::optional<double> tp_comm_seconds;
  double loss_scale = 1;                // the step's loss scale (1 without loss scaling)
  bool skipped = false;                 // gradients overflowed: the optimizer did not step
  double unix_time = 0;
  // Mixture of experts only (empty otherwise): token slots each routed expert received this
  // step, over every MoE block, micro-batch and data-parallel rank (a token counts once per
  // top-k choice); and the mean load-balancing loss of one MoE block (Switch form, k for
  // perfectly even routing; unweighted by moe.aux_loss_coef).
  std::vector<int64_t> expert_tokens;
  std::optional<double> aux_loss;
};

// The record as one JSON object on one line (no trailing newline); non-finite numbers as null.
std::string StepRecordJson(const StepRecord& record);

// The run as rank 0 sums it up at the end (summary.json).
struct RunSummary {
  int64_t steps_done = 0;        // optimizer steps completed, restored ones included
  int64_t steps_this_run = 0;
  double final_loss = 0;
  double tokens_per_second = 0;  // mean over this run's steps after its first
  int world_size = 0;
  bool stopped = false;          // stopped early on request
  // The memory section (executor/memory/memory_report.h MemoryReportJson); null when not
  // measured.
  std::optional<std::string> memory_json;
  // Pipeline parallelism only: the plan's bubble fraction and, per stage, the share of its
  // schedule time each stage spent blocked in receives (summed over its ranks' timed steps),
  // written as {"planned_bubble": x, "measured_wait_per_stage": [...]}.
  std::optional<double> planned_bubble;
  std::vector<double> measured_wait_per_stage;
  // Tensor parallelism only: rank 0's tensor-parallel collectives per timed step, measured (calls
  // and seconds) and as the plan's step-time estimate counts them (calls, and the exposed
  // seconds of the plan's "tp" and "tp_kv" CommunicationTime entries, which are those of the
  // slowest pipeline stage, planned_stage), written as {"collectives_per_step": n,
  // "seconds_per_step": x, "planned_collectives_per_step": n, "planned_exposed_seconds": x,
  // "planned_stage": s}.
  struct TensorParallelTime {
    double collectives_per_step = 0;
    double seconds_per_step = 0;
    int64_t planned_collectives_per_step = 0;
    double planned_exposed_seconds = 0;
    int32_t planned_stage = 0;
  };
  std::optional<TensorParallelTime> tensor_parallel;
};

// The summary as one JSON object plus a newline.
std::string RunSummaryJson(const RunSummary& summary);

// Appends StepRecordJson lines to a file, flushed after each line so a crash loses at most the
// step in flight.
class MetricsFile {
 public:
  // Opens `path`. resumed_step < 0: a new run, the file is truncated. Otherwise a run resumed
  // after update resumed_step continues the file: records of later steps (written by an attempt
  // that died before its next checkpoint, and about to be redone) are dropped first, so every
  // step appears once. Errors: FailedPrecondition SymlinkRefusal (common/no_follow.h) when path
  // is a symbolic link; Internal when the file cannot be read or written.
  absl::Status Open(const std::string& path, int64_t resumed_step);
  void Append(const StepRecord& record);
  void Close() { out_.close(); }

 private:
  std::ofstream out_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_RUN_METRICS_H_
