#include "cli/calibrate_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/exit_codes.h"
#include "executor/calibrate/calibration.h"
#include "executor/calibrate/data_parallel_step.h"
#include "executor/calibrate/elementwise_costs.h"
#include "executor/calibrate/every_core.h"
#include "executor/calibrate/optimizer_step.h"
#include "executor/calibrate/tensor_parallel_step.h"
#include "executor/calibrate/worker_scaling.h"
#include "executor/host_malloc.h"
#include "planner/collective_cost.h"
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

// exec::MeasureGlooAllReduce's (burst, all-reduce) repeats per size and round, and its rounds:
// about 6 s per group size on the 2-core build VM.
constexpr int kAllReduceRepeats = 41;
constexpr int kAllReduceRounds = 5;

// Gloo all-reduce samples over 2 … max ranks; runs before any LibTorch thread pool starts.
absl::StatusOr<std::vector<planner::CollectiveSample>> Collectives(int max_group, std::ostream& out) {
  std::vector<planner::CollectiveSample> all;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("accel-calibrate-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (int p = 2; p <= max_group; p *= 2) {
    const std::string store = (dir / ("store" + std::to_string(p))).string();
    auto samples = exec::MeasureGlooAllReduce(p, {4096, 65536, 1 << 20, 4 << 20},
                                             kAllReduceRepeats, kAllReduceRounds, store);
    if (!samples.ok()) {
      std::filesystem::remove_all(dir);
      return samples.status();
    }
    for (const planner::CollectiveSample& s : *samples) {
      out << "all-reduce over " << p << " processes, " << G(s.bytes) << " B: " << G(s.seconds * 1e6)
          << " us in a step\n";
      all.push_back(s);
    }
  }
  std::filesystem::remove_all(dir);
  return all;
}

// exec::MeasureTensorParallelStep's rounds: about 2 s each on the 2-core build VM.
constexpr int kTensorParallelStepRounds = 9;

// Runs `measure` with a rendezvous file in a fresh temporary directory named after `tag`,
// removed afterwards.
template <typename Measure>
auto WithStoreFile(const std::string& tag, const Measure& measure) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("accel-calibrate-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto result = measure((dir / "store").string());
  std::filesystem::remove_all(dir);
  return result;
}

// Σ ring-model seconds (`fit`) of a reference step's skippable all-reduces.
double RingSecondsOfCalls(const exec::PairedStepSample& sample, const planner::RingFit& fit) {
  double ring = 0;
  for (double bytes : sample.call_bytes) {
    ring += planner::RingSeconds(planner::Collective::kAllReduce, sample.group_size, 1, bytes,
                                 fit.bytes_per_second, fit.latency_seconds);
  }
  return ring;
}

// "<what> GPT-2 step over 2 processes: W ms with its N <calls>, W' ms without, paired
// difference D ms (ring model R ms): " for calibrate's output.
std::string PairedStepLine(const std::string& what, const std::string& calls,
                           const exec::PairedStepSample& sample, double ring) {
  return what + " GPT-2 step over " + std::to_string(sample.group_size) + " processes: " +
         G(sample.with_collectives_seconds * 1e3) + " ms with its " +
         std::to_string(sample.call_bytes.size()) + " " + calls + ", " +
         G(sample.without_collectives_seconds * 1e3) + " ms without, paired difference " +
         G(sample.paired_difference_seconds * 1e3) + " ms (ring model " + G(ring * 1e3) +
         " ms): ";
}

// DeviceProfile.blocking_collective_seconds from a tensor-parallel reference step over 2
// ranks: (paired with − without difference − Σ ring seconds of its all-reduces) / calls, at
// least 0; the ring seconds use `fit`. Runs before any LibTorch thread pool starts.
absl::StatusOr<double> BlockingCollectiveSeconds(const planner::RingFit& fit, std::ostream& out) {
  auto sample = WithStoreFile("tp", [](const std::string& store) {
    return exec::MeasureTensorParallelStep(2, kTensorParallelStepRounds, store);
  });
  if (!sample.ok()) return sample.status();
  const double ring = RingSecondsOfCalls(*sample, fit);
  const double calls = static_cast<double>(sample->call_bytes.size());
  const double blocking = std::max(0.0, (sample->paired_difference_seconds - ring) / calls);
  out << PairedStepLine("tensor-parallel", "all-reduces", *sample, ring) << G(blocking * 1e6)
      << " us more per blocking collective\n";
  return blocking;
}

// exec::MeasureDataParallelStep's rounds: about 3 s each on the 2-core build VM.
constexpr int kDataParallelStepRounds = 9;

// The planner's default bucket size for the reference model (h², h = 256: resolve_auto.cc).
constexpr int64_t kReferenceBucketElements = 256 * 256;

// DeviceProfile.shared_core_bucket_overlap from a data-parallel reference step over 2 ranks:
// 1 − paired with − without difference / Σ ring seconds of its bucket all-reduces, clamped to
// [0, 1]; the ring seconds use `fit`. Runs before any LibTorch thread pool starts.
absl::StatusOr<double> SharedCoreBucketOverlap(const planner::RingFit& fit, std::ostream& out) {
  auto sample = WithStoreFile("dp", [](const std::string& store) {
    return exec::MeasureDataParallelStep(2, kDataParallelStepRounds, kReferenceBucketElements,
                                         store);
  });
  if (!sample.ok()) return sample.status();
  const double ring = RingSecondsOfCalls(*sample, fit);
  const double overlap =
      ring > 0 ? std::clamp(1.0 - sample->paired_difference_seconds / ring, 0.0, 1.0) : 0.0;
  out << PairedStepLine("data-parallel", "bucket all-reduces", *sample, ring) << G(overlap * 100)
      << "% of the buckets hidden on shared cores\n";
  return overlap;
}

// The AdamW step's seconds per parameter, one thread on each of `cores` cores at once (the
// mean over them); 0, with a note, when it cannot be measured.
double AdamWSecondsPerParameter(int cores, std::ostream& out, std::string& notes) {
  absl::StatusOr<std::vector<double>> seconds = exec::MeasureOnEveryCore(cores, [] {
    absl::StatusOr<double> s = exec::MeasureAdamWSecondsPerParameter(int64_t{1} << 22);
    if (!s.ok()) return absl::StatusOr<std::vector<double>>(s.status());
    return absl::StatusOr<std::vector<double>>(std::vector<double>{*s});
  });
  if (!seconds.ok() || seconds->size() != 1) {
    notes += "; no AdamW step";
    out << "no AdamW step: "
        << (seconds.ok() ? "wrong count" : std::string(seconds.status().message())) << "\n";
    return 0;
  }
  out << "AdamW step: " << G((*seconds)[0] * 1e9) << " ns per parameter (one thread on each of "
      << cores << " cores at once, 4,194,304 parameters)\n";
  return (*seconds)[0];
}

// The sizes of the transposed-layout grids: those of `sizes` up to `max_size`, at least the
// first two.
std::vector<int64_t> TransposedGridSizes(const std::vector<int64_t>& sizes, int64_t max_size) {
  std::vector<int64_t> out;
  for (int64_t s : sizes) {
    if (s <= max_size || out.size() < 2) out.push_back(s);
  }
  return out;
}

// Matmul grids per dtype, measured on `cores` cores at once: "nn" over options.matmul_sizes,
// "nt" and "tn" (the backward products' layouts, and nn.Linear's forward) over
// TransposedGridSizes; a dtype without a CPU matmul, or a layout that fails, is left out, with a
// note.
std::vector<spec::MatmulGridValues> MatmulGrids(const CalibrateCommandOptions& options, int cores,
                                                std::ostream& out, std::string& notes) {
  std::vector<spec::MatmulGridValues> grids;
  for (const char* dtype : {"fp32", "bf16", "fp16"}) {
    for (const char* layout : {"nn", "nt", "tn"}) {
      const std::vector<int64_t> sizes =
          std::string(layout) == "nn"
              ? options.matmul_sizes
              : TransposedGridSizes(options.matmul_sizes, options.transposed_grid_max_size);
      absl::StatusOr<std::vector<double>> flops = exec::MeasureOnEveryCore(
          cores, [&] { return exec::MeasureMatmulGrid(dtype, sizes, layout); });
      if (!flops.ok()) {
        // Without an nn grid the dtype has no CPU matmul at all: its other layouts are skipped.
        const bool nn = std::string(layout) == "nn";
        notes += std::string("; no ") + dtype + (nn ? "" : std::string(" ") + layout) +
                 " matmul grid";
        if (nn) break;
        continue;
      }
      const auto [low, high] = std::minmax_element(flops->begin(), flops->end());
      out << "matmul " << dtype << " " << layout << " by shape, " << sizes.front() << " to "
          << sizes.back() << ": " << G(*low) << " to " << G(*high)
          << " FLOP/s per core (one thread on each of " << cores << " cores at once)\n";
      grids.push_back({dtype, sizes, *flops, layout});
    }
  }
  return grids;
}

// Elementwise op costs for fp32 and bf16 compute, measured on `cores` cores at once; a dtype
// this LibTorch cannot run is left out, with a note.
std::vector<spec::ElementwiseCostValues> ElementwiseCosts(int cores, std::ostream& out,
                                                          std::string& notes) {
  std::vector<spec::ElementwiseCostValues> all;
  for (const char* dtype : {"fp32", "bf16"}) {
    // Each process sends its costs as (forward, backward) pairs in kElementwiseOpNames order.
    absl::StatusOr<std::vector<double>> seconds = exec::MeasureOnEveryCore(cores, [&] {
      absl::StatusOr<std::vector<spec::ElementwiseCostValues>> costs =
          exec::MeasureElementwiseCosts(dtype);
      if (!costs.ok()) return absl::StatusOr<std::vector<double>>(costs.status());
      std::vector<double> flat;
      for (const spec::ElementwiseCostValues& c : *costs) {
        flat.push_back(c.forward_seconds_per_element);
        flat.push_back(c.backward_seconds_per_element);
      }
      return absl::StatusOr<std::vector<double>>(flat);
    });
    if (!seconds.ok() || seconds->size() != 2 * spec::kElementwiseOpNames.size()) {
      notes += std::string("; no ") + dtype + " elementwise costs";
      out << "no " << dtype << " elementwise costs: "
          << (seconds.ok() ? "wrong count" : std::string(seconds.status().message())) << "\n";
      continue;
    }
    out << "elementwise " << dtype << " (ns per element, forward / backward):";
    for (size_t i = 0; i < spec::kElementwiseOpNames.size(); ++i) {
      spec::ElementwiseCostValues c{std::string(spec::kElementwiseOpNames[i]), dtype,
                                    (*seconds)[2 * i], (*seconds)[2 * i + 1]};
      out << " " << c.op << " " << G(c.forward_seconds_per_element * 1e9) << " / "
          << G(c.backward_seconds_per_element * 1e9);
      all.push_back(c);
    }
    out << "\n";
  }
  return all;
}

// Rounds of exec::MeasureWorkerScaling: a half-minute on the 2-core build VM.
constexpr int kWorkerScalingRounds = 5;

// Worker efficiencies by workers per node (exec::MeasureWorkerScaling), with the range of their
// rounds; none, with a note, when the measurement fails.
std::vector<spec::WorkerScalingValues> WorkerScaling(int cores, std::ostream& out,
                                                     std::string& notes) {
  std::vector<std::pair<double, double>> ranges;
  absl::StatusOr<std::vector<spec::WorkerScalingValues>> scaling =
      exec::MeasureWorkerScaling(cores, kWorkerScalingRounds, &ranges);
  if (!scaling.ok()) {
    notes += "; no worker scaling";
    out << "no worker scaling: " << scaling.status().message() << "\n";
    return {};
  }
  out << "worker efficiency by workers per node (a training step, one thread per core or "
         "fewer; median and range of its rounds):";
  for (size_t i = 0; i < scaling->size(); ++i) {
    out << " " << (*scaling)[i].workers_per_node << ": " << G((*scaling)[i].efficiency) << " ("
        << G(ranges[i].first) << "-" << G(ranges[i].second) << ")";
  }
  out << "\n";
  return *scaling;
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
  // Measure what the workers run: `accel run` workers keep freed memory (executor/host_malloc.h),
  // and the measurement processes forked below inherit the setting.
  exec::RetainFreedHostMemory();
  const int cores = exec::UsableCores();
  const int max_group = options.max_group_size > 0 ? options.max_group_size : std::max(cores, 2);
  auto samples = Collectives(std::max(max_group, 2), out);
  if (!samples.ok()) {
    err << "error: " << samples.status().message() << "\n";
    return kExitRuntime;
  }
  auto fit = planner::FitAllReduceRing(*samples);
  if (!fit.ok()) {
    err << "error: cannot fit the all-reduce times: " << fit.status().message() << "\n";
    return kExitRuntime;
  }
  auto blocking = BlockingCollectiveSeconds(*fit, out);
  if (!blocking.ok()) {
    err << "error: " << blocking.status().message() << "\n";
    return kExitRuntime;
  }
  auto overlap = SharedCoreBucketOverlap(*fit, out);
  if (!overlap.ok()) {
    err << "error: " << overlap.status().message() << "\n";
    return kExitRuntime;
  }
  spec::DeviceProfileValues v;
  v.name = options.name;
  v.blocking_collective_seconds = *blocking;
  v.shared_core_bucket_overlap = *overlap;
  std::string notes;
  // In forked processes, before this one starts LibTorch's thread pools.
  v.matmul_grids = MatmulGrids(options, cores, out, notes);
  v.elementwise_costs = ElementwiseCosts(cores, out, notes);
  v.worker_scaling = WorkerScaling(cores, out, notes);
  v.adamw_seconds_per_parameter = AdamWSecondsPerParameter(cores, out, notes);
  auto fp32 = exec::MeasureMatmulFlopsPerSecond("fp32", options.matmul_size, 5);
  if (!fp32.ok()) {
    err << "error: " << fp32.status().message() << "\n";
    return kExitRuntime;
  }
  v.matmul_fp32_flops_per_second = *fp32;
  for (const char* dtype : {"bf16", "fp16"}) {
    auto flops = exec::MeasureMatmulFlopsPerSecond(dtype, options.matmul_size, 5);
    double& target = std::string(dtype) == "bf16" ? v.matmul_bf16_flops_per_second
                                                  : v.matmul_fp16_flops_per_second;
    target = flops.ok() ? *flops : *fp32;
    if (!flops.ok()) notes += std::string("; no ") + dtype + " CPU matmul here: fp32 figure used";
  }
  auto memory = exec::MeasureMemoryBytesPerSecond(int64_t{64} << 20, 5);
  if (!memory.ok()) {
    err << "error: " << memory.status().message() << "\n";
    return kExitRuntime;
  }
  v.memory_bytes_per_second = *memory;
  v.intra_node_bytes_per_second = fit->bytes_per_second;
  v.intra_node_latency_seconds = std::max(fit->latency_seconds, 1e-7);
  v.inter_node_bytes_per_second = v.intra_node_bytes_per_second;
  v.inter_node_latency_seconds = v.intra_node_latency_seconds;
  v.matmul_efficiency = v.memory_efficiency = v.link_efficiency = 1.0;
  v.shared_cores_per_node = cores;
  v.source = "accel calibrate on " + Hostname() + ": " + std::to_string(options.matmul_size) +
             "x" + std::to_string(options.matmul_size) + " matmuls and a 64 MiB copy on one " +
             "thread (per core, " + std::to_string(cores) + " cores); matmul grids over " +
             std::to_string(options.matmul_sizes.size()) + " sizes from " +
             std::to_string(options.matmul_sizes.front()) + " to " +
             std::to_string(options.matmul_sizes.back()) + " (nt and tn layouts to " +
             std::to_string(TransposedGridSizes(options.matmul_sizes,
                                                options.transposed_grid_max_size).back()) +
             ") and elementwise op costs with " +
             "one thread on every core at once; worker efficiency from a GPT-2 training step " +
             "with one worker on every core, one per core and two per core (median of " +
             std::to_string(kWorkerScalingRounds) + " rounds); Gloo all-reduce " +
             "between matmul bursts (as in a step), means of " + std::to_string(kAllReduceRounds) +
             " rounds over 2.." +
             std::to_string(max_group) + " local processes fitted to the ring model; a " +
             "tensor-parallel GPT-2 step over 2 processes with its all-reduces and without them " +
             "(median of " + std::to_string(kTensorParallelStepRounds) + " paired rounds) for " +
             "what a blocking collective adds, and a data-parallel one with its bucket " +
             "all-reduces and without them for the part of the buckets hidden; the AdamW step " +
             "on every core at once; inter-node " +
             "not measured (copied from intra-node)" + notes;
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
