// Everything `accel calibrate` measures on this machine for a device profile, in the order the
// measurements must run, returned as plain numbers: cli/calibrate_command.cc turns them into a
// device-profile file (spec/device_profile_file.h). LibTorch stays in the measurements' .cc
// files; this header has plain types only.
#ifndef ACCEL_EXECUTOR_CALIBRATE_DEVICE_PROFILE_MEASUREMENT_H_
#define ACCEL_EXECUTOR_CALIBRATE_DEVICE_PROFILE_MEASUREMENT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/calibrate/elementwise_costs.h"
#include "executor/calibrate/worker_scaling.h"

namespace accel::exec {

// What to measure.
struct DeviceProfileMeasurementOptions {
  int64_t matmul_size = 512;  // n of the n×n single-thread matmuls giving the peaks
  // Sizes of the "nn" matmul throughput grids (every m, n, k among them; accel.ir.MatmulGrid),
  // at least 2, increasing.
  std::vector<int64_t> matmul_sizes = {64, 128, 256, 512, 1024, 2048};
  // The transposed-operand grids ("nt", "tn") take the matmul_sizes up to this, at least two.
  int64_t transposed_grid_max_size = 1024;
  int max_group_size = 0;  // largest all-reduce group; 0: usable cores, at least 2
};

// One matmul throughput grid (accel.ir.MatmulGrid): FLOP/s per core of every (m, n, k) of
// `sizes`, in MatmulGrid order, for operands in `dtype` laid out as `layout` ("nn", "nt", "tn").
struct MatmulGridMeasurement {
  std::string dtype;
  std::vector<int64_t> sizes;
  std::vector<double> flops_per_second;
  std::string layout = "nn";
};

// The measured quantities; units as in accel.ir.DeviceProfile (seconds, bytes, FLOP).
struct DeviceProfileMeasurement {
  int cores = 0;           // usable cores: the processes of the every-core measurements
  int max_group_size = 0;  // the largest all-reduce group measured
  // The ring model (planner::FitAllReduceRing) fitted to the Gloo all-reduce samples over
  // 2 … max_group_size local processes; the latency at least 1e-7 s.
  double intra_node_bytes_per_second = 0;
  double intra_node_latency_seconds = 0;
  // What a blocking collective adds in a tensor-parallel step beyond its ring time (≥ 0), and
  // the share of a data-parallel step's bucket all-reduces hidden on shared cores (0 to 1).
  double blocking_collective_seconds = 0;
  double shared_core_bucket_overlap = 0;
  // Measured with one process on every core at once; a dtype, layout or measurement that failed
  // is left out (empty, or 0 for the AdamW step), and `method` says so.
  std::vector<MatmulGridMeasurement> matmul_grids;
  std::vector<ElementwiseOpCost> elementwise_costs;
  std::vector<WorkerEfficiency> worker_scaling;
  double adamw_seconds_per_parameter = 0;
  // One thread: n×n matmul peaks (a dtype without a CPU matmul gets the fp32 figure, and
  // `method` says so) and copy bandwidth (reads and writes counted).
  double matmul_fp32_flops_per_second = 0;
  double matmul_bf16_flops_per_second = 0;
  double matmul_fp16_flops_per_second = 0;
  double memory_bytes_per_second = 0;
  // How each figure was measured and what could not be, for the profile's source after
  // "accel calibrate on HOST: ".
  std::string method;
};

// Measures this machine. The order is fixed: first the measurements over forked process groups
// (all-reduce samples, then the tensor- and data-parallel reference steps that use their ring
// fit), then those forked onto every core (matmul grids, elementwise costs, worker scaling,
// AdamW step), all before this process starts any LibTorch thread pool, since a process forked
// after that inherits the pools without their threads; last the single-thread matmul
// peaks and memory bandwidth in this process. Freed host memory is retained first, as `accel
// run`'s workers do (executor/host_malloc.h). Writes a line per measurement to `progress`.
// Errors: those of the all-reduce samples, the reference steps, the fp32 matmul and the memory
// measurement; "cannot fit the all-reduce times: ..." when the ring fit fails.
absl::StatusOr<DeviceProfileMeasurement> MeasureDeviceProfile(
    const DeviceProfileMeasurementOptions& options, std::ostream& progress);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_DEVICE_PROFILE_MEASUREMENT_H_
