#include "cli/calibrate_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/exit_codes.h"
#include "executor/calibrate/device_profile_measurement.h"
#include "spec/device_profile_file.h"

namespace accel::cli {
namespace {

std::string G(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", v);
  return buffer;
}

std::string Hostname() {
  char name[256] = {0};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "this machine";
  return name;
}

exec::DeviceProfileMeasurementOptions MeasurementOptions(const CalibrateCommandOptions& options) {
  exec::DeviceProfileMeasurementOptions m;
  m.matmul_size = options.matmul_size;
  m.matmul_sizes = options.matmul_sizes;
  m.transposed_grid_max_size = options.transposed_grid_max_size;
  m.max_group_size = options.max_group_size;
  return m;
}

// The profile file's values: the measured figures, inter-node links copied from the intra-node
// ones (one machine cannot measure them; the source says so), efficiencies 1 (measured, not
// peak) and the profile's source naming this host.
spec::DeviceProfileValues ProfileValues(const std::string& name,
                                        const exec::DeviceProfileMeasurement& m) {
  spec::DeviceProfileValues v;
  v.name = name;
  v.blocking_collective_seconds = m.blocking_collective_seconds;
  v.shared_core_bucket_overlap = m.shared_core_bucket_overlap;
  for (const exec::MatmulGridMeasurement& g : m.matmul_grids) {
    v.matmul_grids.push_back({g.dtype, g.sizes, g.flops_per_second, g.layout});
  }
  for (const exec::ElementwiseOpCost& c : m.elementwise_costs) {
    v.elementwise_costs.push_back(
        {c.op, c.dtype, c.forward_seconds_per_element, c.backward_seconds_per_element});
  }
  for (const exec::WorkerEfficiency& w : m.worker_scaling) {
    v.worker_scaling.push_back({w.workers_per_node, w.efficiency});
  }
  v.adamw_seconds_per_parameter = m.adamw_seconds_per_parameter;
  v.matmul_fp32_flops_per_second = m.matmul_fp32_flops_per_second;
  v.matmul_bf16_flops_per_second = m.matmul_bf16_flops_per_second;
  v.matmul_fp16_flops_per_second = m.matmul_fp16_flops_per_second;
  v.memory_bytes_per_second = m.memory_bytes_per_second;
  v.intra_node_bytes_per_second = m.intra_node_bytes_per_second;
  v.intra_node_latency_seconds = m.intra_node_latency_seconds;
  v.inter_node_bytes_per_second = v.intra_node_bytes_per_second;
  v.inter_node_latency_seconds = v.intra_node_latency_seconds;
  v.matmul_efficiency = v.memory_efficiency = v.link_efficiency = 1.0;
  v.shared_cores_per_node = m.cores;
  v.source = "accel calibrate on " + Hostname() + ": " + m.method;
  return v;
}

}  // namespace

int RunCalibrateCommand(const CalibrateCommandOptions& options, std::ostream& out,
                        std::ostream& err) {
  const std::vector<int64_t>& sizes = options.matmul_sizes;
  if (sizes.size() < 2 || sizes.size() > spec::kMaxMatmulGridSizes ||
      !std::is_sorted(sizes.begin(), sizes.end(), std::less_equal<int64_t>())) {
    err << "error: --matmul-sizes must be 2 to " << spec::kMaxMatmulGridSizes
        << " strictly increasing sizes\n";
    return kExitUsage;
  }
  absl::StatusOr<exec::DeviceProfileMeasurement> measured =
      exec::MeasureDeviceProfile(MeasurementOptions(options), out);
  if (!measured.ok()) {
    err << "error: " << measured.status().message() << "\n";
    return kExitRuntime;
  }
  const spec::DeviceProfileValues v = ProfileValues(options.name, *measured);
  out << "matmul fp32 " << G(v.matmul_fp32_flops_per_second) << " FLOP/s, bf16 "
      << G(v.matmul_bf16_flops_per_second) << ", fp16 " << G(v.matmul_fp16_flops_per_second)
      << " (one thread, n = " << options.matmul_size << ")\n"
      << "memory " << G(v.memory_bytes_per_second) << " B/s (one thread)\n"
      << "links: latency " << G(v.intra_node_latency_seconds * 1e6) << " us, bandwidth "
      << G(v.intra_node_bytes_per_second) << " B/s\n";
  std::ofstream file(options.output, std::ios::binary);
  file << spec::DeviceProfileToJson(v);
  file.close();
  if (!file) {
    err << "error: cannot write " << options.output << "\n";
    return kExitRuntime;
  }
  out << "wrote " << options.output << "\n";
  return kExitOk;
}

void ReexecCalibrateWithPassiveOpenMp(int argc, char** argv, std::ostream& err) {
  if (argc < 2 || std::string(argv[1]) != "calibrate") return;
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  if (policy != nullptr && std::string(policy) == "PASSIVE") return;
  if (::setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  err << "warning: cannot re-execute with OMP_WAIT_POLICY=PASSIVE (" << std::strerror(errno)
      << "); multi-threaded measurements run with OpenMP threads spinning\n";
}

void RegisterCalibrateCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<CalibrateCommandOptions>();
  CLI::App* sub = app.add_subcommand(
      "calibrate", "Measure this machine (matmul per dtype, memory, Gloo collectives) and write a "
                   "device profile for cluster.device_profile");
  sub->add_option("-o,--output", options->output, "Device-profile JSON to write")
      ->capture_default_str();
  sub->add_option("--name", options->name, "Profile name")->capture_default_str();
  sub->add_option("--matmul-size", options->matmul_size, "n of the n x n matmuls")
      ->check(CLI::Range(int64_t{16}, int64_t{8192}))
      ->capture_default_str();
  sub->add_option("--matmul-sizes", options->matmul_sizes,
                  "Sizes of the matmul throughput grids (m, n and k each take every one)")
      ->delimiter(',')
      ->check(CLI::Range(int64_t{1}, int64_t{8192}))
      ->capture_default_str();
  sub->add_option("--transposed-grid-max-size", options->transposed_grid_max_size,
                  "Largest size of the nt and tn matmul grids (at least two sizes are kept)")
      ->check(CLI::Range(int64_t{1}, int64_t{8192}))
      ->capture_default_str();
  sub->add_option("--max-group-size", options->max_group_size,
                  "Largest all-reduce group (default: usable cores, at least 2)")
      ->check(CLI::Range(2, 64));
  sub->callback([options, &context] {
    context.exit_code = RunCalibrateCommand(*options, *context.out, *context.err);
  });
}

}  // namespace accel::cli
