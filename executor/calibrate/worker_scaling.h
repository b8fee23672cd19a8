// `accel calibrate`'s measurement of how a CPU worker's speed depends on how many workers share
// the node's cores (accel.ir.WorkerScaling): the per-core figures of a profile are measured with
// one single-threaded process on every core, and a job runs other counts. LibTorch stays in the
// .cc; this header has plain types only.
#ifndef ACCEL_EXECUTOR_CALIBRATE_WORKER_SCALING_H_
#define ACCEL_EXECUTOR_CALIBRATE_WORKER_SCALING_H_

#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "spec/device_profile_file.h"

namespace accel::exec {

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
// count's lowest and highest round (how much the machine moved while it was measured). A round
// takes about 6 s on the 2-core build VM, whose single-round efficiencies moved by up to 10%
// between calibrations minutes apart (0.90 and 0.98 for two workers per core), while 5 rounds
// within half a minute spanned 0.955-1.003. On that VM (2026-11-24): 0.67 for one worker on
// both cores, 0.97 for two per core; with them the step-time benchmark's dp 1 row went from
// −30% to +4.9% (README, step time). `cores` ≥ 1 (with 1 core the counts are 1 and 2). Errors:
// those of MeasureOnEveryCore and MeasureTrainingStepSeconds.
absl::StatusOr<std::vector<spec::WorkerScalingValues>> MeasureWorkerScaling(
    int cores, int rounds, std::vector<std::pair<double, double>>* ranges = nullptr);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_WORKER_SCALING_H_
