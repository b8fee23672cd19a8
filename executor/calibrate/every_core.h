// Runs one of `accel calibrate`'s per-core measurements in one process per core at once. A CPU
// profile's figures are per core and a job runs a worker on every core: measured alone, a core
// has the shared caches, memory bandwidth and clock to itself, which a job's workers never do.
// Torch-free (fork and pipes).
#ifndef ACCEL_EXECUTOR_CALIBRATE_EVERY_CORE_H_
#define ACCEL_EXECUTOR_CALIBRATE_EVERY_CORE_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accel::exec {

// Forks `processes` (≥ 1) processes that each run `measure` at the same time and returns the
// element-wise mean of their results (which must all have the same length). Call it before
// this process starts any LibTorch thread pool, like MeasureGlooAllReduce. Errors: Internal
// when a process fails, its result cannot be read, or the lengths differ; the first failing
// measurement's own error when it returns one.
absl::StatusOr<std::vector<double>> MeasureOnEveryCore(
    int processes, const std::function<absl::StatusOr<std::vector<double>>()>& measure);

// Forks `group_size` (≥ 1) processes that each run `member(rank, fd)` (rank 0 … group_size − 1,
// its return value the process's exit code) and returns what they wrote to `fd`, a pipe shared
// by all of them (in practice rank 0 writes its ranks' result). For measurements over a process
// group (Gloo collectives, a tensor-parallel step); call it before this process starts any
// LibTorch thread pool. Errors: Internal when a pipe or fork fails or a process exits non-zero.
absl::StatusOr<std::string> RunForkedGroup(int group_size,
                                           const std::function<int(int rank, int fd)>& member);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_EVERY_CORE_H_
