// Measurements `accel calibrate` takes on this machine for a device profile: matrix-multiply
// throughput per dtype and memory bandwidth on one thread (CPU profiles are per core, see
// accel.ir.DeviceProfile.shared_cores_per_node), and Gloo all-reduce times over groups of local
// processes. LibTorch stays in calibration.cc: this header has plain types only.
#ifndef ACCEL_EXECUTOR_CALIBRATE_CALIBRATION_H_
#define ACCEL_EXECUTOR_CALIBRATE_CALIBRATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/collective_cost.h"

namespace accel::exec {

// FLOP/s of an n×n by n×n matrix multiply in `dtype` ("fp32" | "bf16" | "fp16") on one CPU
// thread: 2·n³ over the fastest of `repeats` timed runs after one warm-up.
// Errors: Unimplemented when this LibTorch has no CPU matmul for the dtype; InvalidArgument for
// an unknown dtype or n < 1.
absl::StatusOr<double> MeasureMatmulFlopsPerSecond(const std::string& dtype, int64_t n,
                                                   int repeats);

// FLOP/s of C[m×n] = A[m×k]·B[k×n] in `dtype` on one CPU thread for every (m, n, k) with each
// of m, n, k in `sizes`, in accel.ir.MatmulGrid order (index (i·S + j)·S + l), with the operands
// laid out as `layout` says (accel.ir.MatmulLayout: "nn" both row-major, "nt" B a transposed
// view of a row-major [n×k], "tn" A one of a row-major [k×m]): 2·m·n·k over the median of five
// timed batches after one warm-up (three when one product takes over 50 ms: the slow bf16
// layouts), each batch repeating the product until it lasts about 2 ms. The median, not the
// best: the step-time model predicts a typical step (the step-time benchmark's median), and on
// a shared machine the fastest batch is the one no neighbour disturbed (the elementwise costs
// are medians too). Errors as MeasureMatmulFlopsPerSecond; InvalidArgument for an empty
// `sizes`, a size < 1 or an unknown layout.
absl::StatusOr<std::vector<double>> MeasureMatmulGrid(const std::string& dtype,
                                                      const std::vector<int64_t>& sizes,
                                                      const std::string& layout = "nn");

// Bytes per second of copying a `bytes`-byte fp32 tensor into another on one thread, counting
// the read and the write (2·bytes over the fastest of `repeats` copies).
absl::StatusOr<double> MeasureMemoryBytesPerSecond(int64_t bytes, int repeats);

// All-reduce (sum, fp32) times over `group_size` local processes meeting through a c10d
// FileStore at `store_file` (which must not exist), as a step sees them: for each size in
// `sizes_bytes`, after two warm-ups, the mean per-round time of `repeats` rounds of (a short
// matmul burst on every rank, the all-reduce) minus the mean burst alone, at least the median
// of back-to-back calls after a barrier; measured on rank 0. That is timed `rounds` times (at
// least 1) over every size in turn and each size's figure is the mean of its rounds, so that
// the sizes share the machine's state and the ring fit over them sees its drift as little as
// possible (on the 2-core build VM, with one round of 41 repeats, a 4 KiB all-reduce once
// measured 2.26 ms and a 64 KiB one 1.68 ms). The mean, not the median: a step pays the tail
// of its many collectives (on the build VM a 1 MiB all-reduce between bursts had a mean 25%
// above its median; in a tp 2 step, 2.8 against 1.7 ms once both ranks had arrived). A
// collective between two pieces of compute costs more than one right after a
// barrier (its threads and the peers' wake, the ranks arrive apart): on the 2-core build VM the
// ring fit's latency was 0.27-0.47 ms in four calibrations, against 0.12-0.18 ms in three timed
// right after a barrier. The processes are forked from this one, so call it before this
// process starts any LibTorch thread pool (before the matmul measurements). Errors: Internal
// when a process fails or its results cannot be read.
absl::StatusOr<std::vector<planner::CollectiveSample>> MeasureGlooAllReduce(
    int group_size, const std::vector<int64_t>& sizes_bytes, int repeats, int rounds,
    const std::string& store_file);

// Cores this process may run on (sched_getaffinity), at least 1.
int UsableCores();

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_CALIBRATION_H_
