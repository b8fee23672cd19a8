#ifndef ACCEL_CLI_CALIBRATE_COMMAND_H_
#define ACCEL_CLI_CALIBRATE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace accel::cli {

// `accel calibrate [-o FILE] [--name NAME] [--matmul-size N] [--matmul-sizes A,B,...]
// [--max-group-size P]`.
struct CalibrateCommandOptions {
  std::string output = "device_profile.json";  // the device-profile JSON written
  std::string name = "cpu-calibrated";         // DeviceProfile.name
  int64_t matmul_size = 512;                   // n of the n×n matmuls giving the peaks
  // Sizes of the matmul throughput grids (every m, n, k among them; accel.ir.MatmulGrid):
  // 64 … 2048 covers the products of the small jobs a CPU runs; the step-time model clamps
  // larger shapes to the largest measured one.
  std::vector<int64_t> matmul_sizes = {64, 128, 256, 512, 1024, 2048};
  // The transposed-operand grids ("nt", "tn": backward products and nn.Linear's forward) take
  // the matmul_sizes up to this, at least two. Larger sizes cost the most where a dtype has no
  // fast CPU kernel for a transposed operand (bf16 without AVX512-BW), where a 2048 grid can
  // add minutes to a calibration; larger shapes take the grid's edge, where throughput has
  // levelled off.
  int64_t transposed_grid_max_size = 1024;
  int max_group_size = 0;                      // largest all-reduce group; 0: usable cores, ≥ 2
};

// Measures this machine (executor/calibrate/device_profile_measurement.h) and writes a device
// profile (spec/device_profile_file.h) that `cluster.device_profile: FILE` makes the planner use:
// matmul FLOP/s per dtype and memory bandwidth on one thread (per core; shared_cores_per_node
// = usable cores), matmul throughput grids per dtype, NN over `matmul_sizes` and NT and TN over
// those up to transposed_grid_max_size (the step-time model times each of a job's matmuls at
// its own shape and operand layout from them) and the per-element cost of the
// elementwise ops planner/elementwise_ops.h names for fp32 and bf16, both with one thread on
// every core at once (executor/calibrate/every_core.h: a job's workers share caches, memory
// bandwidth and clock the same way), intra-node link latency and bandwidth fitted (planner::FitAllReduceRing) to
// Gloo all-reduces of 4 KiB to 4 MiB over 2 … max_group_size local processes, each timed as a
// step sees it, between bursts of compute (exec::MeasureGlooAllReduce). Inter-node links
// cannot be measured on one machine: they are copies of the intra-node figures, and the source
// says so. A dtype without a CPU matmul in this LibTorch gets the fp32 figure, also stated.
// Efficiencies are 1 (measured, not peak). Prints each measurement to `out`. Returns 0, or 4
// (kExitRuntime) when a measurement or the write fails (the reason on `err`).
int RunCalibrateCommand(const CalibrateCommandOptions& options, std::ostream& out,
                        std::ostream& err);

// For `accel-executor calibrate ...` (argv[1] == "calibrate"): when OMP_WAIT_POLICY is not
// PASSIVE, sets it and re-executes this binary (/proc/self/exe) with the same arguments, so the
// measurements run OpenMP as `accel run`'s workers do (launcher/worker_env.h). libgomp
// reads the variable once, when it loads, so setting it later does nothing. With libgomp's
// spinning default, idle OpenMP threads keep their cores busy: where workers and BLAS threads
// share few cores, a training step can take more than twice as long, and calibrate would measure
// one worker on all cores at a fraction of its share. Returns at once for
// another command or when the variable is already PASSIVE; when execv fails, warns on `err`
// and returns (the measurements then run with spinning OpenMP threads).
void ReexecCalibrateWithPassiveOpenMp(int argc, char** argv, std::ostream& err);

// Registers `calibrate` on the app (a CommandRegistrar).
void RegisterCalibrateCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_CALIBRATE_COMMAND_H_
