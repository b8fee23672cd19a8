// `accel calibrate`'s measurement of how a CPU worker's speed depends on how many workers share
// the node's cores (accel.ir.WorkerScaling): the per-core figures of a profile are measured with
// one single-threaded process on every core, and a job runs other counts. LibTorch stays in the
// .cc; this header has plain types only.
#ifndef ACCEL_EXECUTOR_CALIBRATE_WORKER_SCALING_H_
#define ACCEL_EXECUTOR_CALIBRATE_WORKER_SCALING_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace accel::exec {

// One worker count's measured efficiency (accel.ir.WorkerScaling): a worker's speed with
// workers_per_node workers on the node's cores, relative to its share of them.
struct WorkerEfficiency {
  int64_t workers_per_node = 0;
  double efficiency = 0;
};

// Median seconds of one training step of the executor's GPT-2 (h 256, 4 heads, ffn 1024,
// 2 layers, vocabulary 256; fp32) on 8 × 128 tokens (forward, cross entropy, backward, SGD
// update) in this process with `threads` intra-op and BLAS threads: the median of 7 timed steps
// after 2 warm-ups. Call it in a process that has not started LibTorch's thread pools yet (a
// MeasureOnEveryCore child). Errors: InvalidArgument for threads < 1; Internal when LibTorch
// throws.
absl::StatusOr<double> MeasureTrainingStepSeconds(int threads);

// Efficiencies for 1 worker with `cores` threads, `cores` workers with one thread each and
// 2·cores workers with one thread each (time-sharing), from the median step seconds each
// worker measured (MeasureTrainingStepSeconds in that many processes at once, mean over the
// processes): efficiency(w) = seconds(cores) · w / cores / seconds(w), so 1 for w = cores by
// construction and 1 wherever a worker's speed is its share of the cores. The counts are timed
// back to back in `rounds` rounds (at least 1), each efficiency the median of its rounds'
// ratios, so that a ratio compares timings seconds apart; `ranges`, when given, receives each
// count's lowest and highest round (how much the machine moved while it was measured). More
// rounds trade calibration time (each round times every count, several training steps each) for
// efficiencies that a disturbance during one round moves less: on a shared VM, single rounds
// minutes apart have disagreed by up to 10%. `cores` ≥ 1 (with 1 core the counts are 1 and 2).
// Errors: those of MeasureOnEveryCore and MeasureTrainingStepSeconds.
absl::StatusOr<std::vector<WorkerEfficiency>> MeasureWorkerScaling(
    int cores, int rounds, std::vector<std::pair<double, double>>* ranges = nullptr);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_WORKER_SCALING_H_
