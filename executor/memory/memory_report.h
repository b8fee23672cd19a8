// The measured side of the plan's memory estimate, per rank: what the counting CPU allocator saw
// during training next to what the planner estimated for that rank's pipeline stage. Torch-free:
// the worker feeds it numbers; it reads the plan and renders the run summary.
#ifndef ACCEL_EXECUTOR_MEMORY_MEMORY_REPORT_H_
#define ACCEL_EXECUTOR_MEMORY_MEMORY_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/plan.pb.h"

namespace accel::exec {

// The estimate of pipeline stage `stage` (plan.memory() holds one per stage), or nullptr when the
// plan has none for it.
const ir::MemoryEstimate* EstimateForStage(const ir::Plan& plan, int stage);

// Bytes of the estimate's terms that are tensor storage: every device term except
// "runtime_overhead" (process, Gloo/NCCL buffers, allocator slack), which the counting allocator
// cannot see by design, plus every host term (offload) when `count_host`, since the counting CPU
// allocator sees host memory too (the CUDA caching allocator does not). This is the number a
// measured peak of tensor bytes is compared with.
int64_t EstimatedTensorBytes(const ir::MemoryEstimate& estimate, bool count_host = true);

// One rank's measurement over a run: bytes as counted by executor/memory/counting_allocator.h on
// CPU, or by the CUDA caching allocator (executor/memory/cuda_memory.h) on CUDA.
struct RankMemory {
  int rank = 0;
  int stage = 0;                 // pipeline stage of the rank (RankPlacement.stage)
  int64_t peak_tensor_bytes = 0;  // largest live tensor bytes during any training step
  int64_t peak_resident_bytes = 0;  // getrusage max RSS: the process as the OS sees it
  int64_t peak_reserved_bytes = 0;  // CUDA: the caching allocator's peak reserve; 0 on CPU
  bool cuda = false;                // measured on a CUDA device (host terms not comparable)
};

// The run's memory section as one JSON object:
//   {"estimate": [{"stage": s, "tensor_bytes": n, "terms": {"parameters": n, ...}}, ...],
//    "ranks": [{"rank": r, "stage": s, "peak_tensor_bytes": n, "peak_resident_bytes": n,
//               "estimate_tensor_bytes": n, "measured_over_estimate": x}, ...]}
// and, on CUDA, "peak_reserved_bytes" and "reserved_over_estimate" in each rank's row.
// "terms" sums the device terms of each category (runtime_overhead left out) and lists host
// terms as "host_<category>". measured_over_estimate is null when the stage has no estimate or
// the estimate is 0.
std::string MemoryReportJson(const ir::Plan& plan, const std::vector<RankMemory>& ranks);

// One line for the log: the largest measured peak over `ranks`, its rank, the estimate for that
// rank's stage and their ratio, e.g.
//   "memory: peak tensor bytes 12.4 MiB (rank 1; max over 4 ranks) vs estimate 12.1 MiB for
//    stage 0 without runtime overhead: measured/estimate 1.02".
std::string MemorySummaryLine(const ir::Plan& plan, const std::vector<RankMemory>& ranks);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MEMORY_MEMORY_REPORT_H_
