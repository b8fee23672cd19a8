#ifndef ACCEL_CLI_CALIBRATE_COMMAND_H_
#define ACCEL_CLI_CALIBRATE_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "cli/app.h"

namespace accel::cli {

// `accel calibrate [-o FILE] [--name NAME] [--matmul-size N] [--max-group-size P]`.
struct CalibrateCommandOptions {
  std::string output = "device_profile.json";  // the device-profile JSON written
  std::string name = "cpu-calibrated";         // DeviceProfile.name
  int64_t matmul_size = 512;                   // n of the n×n matmuls
  int max_group_size = 0;                      // largest all-reduce group; 0: usable cores, ≥ 2
};

// Measures this machine (executor/calibrate/calibration.h) and writes a device profile
// (spec/device_profile_file.h) that `cluster.device_profile: FILE` makes the planner use:
// matmul FLOP/s per dtype and memory bandwidth on one thread (per core; shared_cores_per_node
// = usable cores), intra-node link latency and bandwidth fitted (planner::FitAllReduceRing) to
// Gloo all-reduces of 4 KiB to 4 MiB over 2 … max_group_size local processes. Inter-node links
// cannot be measured on one machine: they are copies of the intra-node figures, and the source
// says so. A dtype without a CPU matmul in this LibTorch gets the fp32 figure, also stated.
// Efficiencies are 1 (measured, not peak). Prints each measurement to `out`. Returns 0, or 4
// (kExitRuntime) when a measurement or the write fails (the reason on `err`).
int RunCalibrateCommand(const CalibrateCommandOptions& options, std::ostream& out,
                        std::ostream& err);

// Registers `calibrate` on the app (a CommandRegistrar).
void RegisterCalibrateCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_CALIBRATE_COMMAND_H_
