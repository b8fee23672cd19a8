#include "executor/calibrate/device_profile_measurement.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "common/remove_tree.h"
#include "executor/calibrate/calibration.h"
#include "executor/calibrate/data_parallel_step.h"
#include "executor/calibrate/every_core.h"
#include "executor/calibrate/optimizer_step.h"
#include "executor/calibrate/tensor_parallel_step.h"
#include "executor/host_malloc.h"
#include "planner/collective_cost.h"
#include "planner/elementwise_ops.h"

namespace accel::exec {
namespace {

std::string G(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", v);
  return buffer;
}

// MeasureGlooAllReduce's (burst, all-reduce) repeats per size and round, and its rounds: more of
// either average more of a shared machine's noise out of the ring fit, while calibration time
// grows with both, for every group size measured.
constexpr int kAllReduceRepeats = 41;
constexpr int kAllReduceRounds = 5;

// Paired rounds of the reference steps (paired_rounds.h): their median is steadier against the
// machine's drift with more rounds, each of which times several steps in both modes.
constexpr int kTensorParallelStepRounds = 9;
constexpr int kDataParallelStepRounds = 9;

// The planner's default bucket size for the reference model (h², h = 256: resolve_auto.cc).
constexpr int64_t kReferenceBucketElements = 256 * 256;

// Rounds of MeasureWorkerScaling (worker_scaling.h says what more of them trade).
constexpr int kWorkerScalingRounds = 5;

// Removes a temporary directory of the measurements. RemoveTree, not std::filesystem::remove_all
// (common/remove_tree.h says why); a directory left behind is not worth failing for.
void RemoveTemporaryDirectory(const std::filesystem::path& dir) {
  std::error_code ignored;
  RemoveTree(dir.string(), ignored);
}

// Gloo all-reduce samples over 2 … max ranks; runs before any LibTorch thread pool starts.
absl::StatusOr<std::vector<planner::CollectiveSample>> Collectives(int max_group, std::ostream& out) {
  std::vector<planner::CollectiveSample> all;
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("accel-calibrate-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (int p = 2; p <= max_group; p *= 2) {
    const std::string store = (dir / ("store" + std::to_string(p))).string();
    auto samples = MeasureGlooAllReduce(p, {4096, 65536, 1 << 20, 4 << 20},
                                        kAllReduceRepeats, kAllReduceRounds, store);
    if (!samples.ok()) {
      RemoveTemporaryDirectory(dir);
      return samples.status();
    }
    for (const planner::CollectiveSample& s : *samples) {
      out << "all-reduce over " << p << " processes, " << G(s.bytes) << " B: " << G(s.seconds * 1e6)
          << " us in a step\n";
      all.push_back(s);
    }
  }
  RemoveTemporaryDirectory(dir);
  return all;
}

// Runs `measure` with a rendezvous file in a fresh temporary directory named after `tag`,
// removed afterwards.
template <typename Measure>
auto WithStoreFile(const std::string& tag, const Measure& measure) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("accel-calibrate-" + tag + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto result = measure((dir / "store").string());
  RemoveTemporaryDirectory(dir);
  return result;
}

// Σ ring-model seconds (`fit`) of a reference step's skippable all-reduces.
double RingSecondsOfCalls(const PairedStepSample& sample, const planner::RingFit& fit) {
  double ring = 0;
  for (double bytes : sample.call_bytes) {
    ring += planner::RingSeconds(planner::Collective::kAllReduce, sample.group_size, 1, bytes,
                                 fit.bytes_per_second, fit.latency_seconds);
  }
  return ring;
}

// "<what> GPT-2 step over 2 processes: W ms with its N <calls>, W' ms without, paired
// difference D ms (ring model R ms): " for the progress lines.
std::string PairedStepLine(const std::string& what, const std::string& calls,
                           const PairedStepSample& sample, double ring) {
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
    return MeasureTensorParallelStep(2, kTensorParallelStepRounds, store);
  });
  if (!sample.ok()) return sample.status();
  const double ring = RingSecondsOfCalls(*sample, fit);
  const double calls = static_cast<double>(sample->call_bytes.size());
  const double blocking = std::max(0.0, (sample->paired_difference_seconds - ring) / calls);
  out << PairedStepLine("tensor-parallel", "all-reduces", *sample, ring) << G(blocking * 1e6)
      << " us more per blocking collective\n";
  return blocking;
}

// DeviceProfile.shared_core_bucket_overlap from a data-parallel reference step over 2 ranks:
// 1 − paired with − without difference / Σ ring seconds of its bucket all-reduces, clamped to
// [0, 1]; the ring seconds use `fit`. Runs before any LibTorch thread pool starts.
absl::StatusOr<double> SharedCoreBucketOverlap(const planner::RingFit& fit, std::ostream& out) {
  auto sample = WithStoreFile("dp", [](const std::string& store) {
    return MeasureDataParallelStep(2, kDataParallelStepRounds, kReferenceBucketElements, store);
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
  absl::StatusOr<std::vector<double>> seconds = MeasureOnEveryCore(cores, [] {
    absl::StatusOr<double> s = MeasureAdamWSecondsPerParameter(int64_t{1} << 22);
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
std::vector<MatmulGridMeasurement> MatmulGrids(const DeviceProfileMeasurementOptions& options,
                                               int cores, std::ostream& out, std::string& notes) {
  std::vector<MatmulGridMeasurement> grids;
  for (const char* dtype : {"fp32", "bf16", "fp16"}) {
    for (const char* layout : {"nn", "nt", "tn"}) {
      const std::vector<int64_t> sizes =
          std::string(layout) == "nn"
              ? options.matmul_sizes
              : TransposedGridSizes(options.matmul_sizes, options.transposed_grid_max_size);
      absl::StatusOr<std::vector<double>> flops = MeasureOnEveryCore(
          cores, [&] { return MeasureMatmulGrid(dtype, sizes, layout); });
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

// One dtype's elementwise op costs, the mean over `cores` processes at once. Each process sends
// its costs as (forward, backward) pairs in planner::ElementwiseOp order.
absl::StatusOr<std::vector<double>> ElementwiseSecondsOnEveryCore(int cores, const char* dtype) {
  return MeasureOnEveryCore(cores, [&] {
    absl::StatusOr<std::vector<ElementwiseOpCost>> costs = MeasureElementwiseCosts(dtype);
    if (!costs.ok()) return absl::StatusOr<std::vector<double>>(costs.status());
    std::vector<double> flat;
    for (const ElementwiseOpCost& c : *costs) {
      flat.push_back(c.forward_seconds_per_element);
      flat.push_back(c.backward_seconds_per_element);
    }
    return absl::StatusOr<std::vector<double>>(flat);
  });
}

// Elementwise op costs for fp32 and bf16 compute, measured on `cores` cores at once; a dtype
// this LibTorch cannot run is left out, with a note.
std::vector<ElementwiseOpCost> ElementwiseCosts(int cores, std::ostream& out, std::string& notes) {
  std::vector<ElementwiseOpCost> all;
  for (const char* dtype : {"fp32", "bf16"}) {
    absl::StatusOr<std::vector<double>> seconds = ElementwiseSecondsOnEveryCore(cores, dtype);
    if (!seconds.ok() || seconds->size() != static_cast<size_t>(2 * planner::kElementwiseOpCount)) {
      notes += std::string("; no ") + dtype + " elementwise costs";
      out << "no " << dtype << " elementwise costs: "
          << (seconds.ok() ? "wrong count" : std::string(seconds.status().message())) << "\n";
      continue;
    }
    out << "elementwise " << dtype << " (ns per element, forward / backward):";
    for (int i = 0; i < planner::kElementwiseOpCount; ++i) {
      ElementwiseOpCost c{std::string(planner::ElementwiseOpName(static_cast<planner::ElementwiseOp>(i))),
                          dtype, (*seconds)[2 * i], (*seconds)[2 * i + 1]};
      out << " " << c.op << " " << G(c.forward_seconds_per_element * 1e9) << " / "
          << G(c.backward_seconds_per_element * 1e9);
      all.push_back(c);
    }
    out << "\n";
  }
  return all;
}

// Worker efficiencies by workers per node (MeasureWorkerScaling), with the range of their
// rounds; none, with a note, when the measurement fails.
std::vector<WorkerEfficiency> WorkerScaling(int cores, std::ostream& out, std::string& notes) {
  std::vector<std::pair<double, double>> ranges;
  absl::StatusOr<std::vector<WorkerEfficiency>> scaling =
      MeasureWorkerScaling(cores, kWorkerScalingRounds, &ranges);
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

// The measurements over forked process groups: all-reduce samples, their ring fit, and the
// tensor- and data-parallel reference steps that use it. Before any LibTorch thread pool.
absl::Status MeasureLinks(DeviceProfileMeasurement& m, std::ostream& out) {
  auto samples = Collectives(std::max(m.max_group_size, 2), out);
  if (!samples.ok()) return samples.status();
  auto fit = planner::FitAllReduceRing(*samples);
  if (!fit.ok()) {
    return absl::Status(fit.status().code(), "cannot fit the all-reduce times: " +
                                                 std::string(fit.status().message()));
  }
  auto blocking = BlockingCollectiveSeconds(*fit, out);
  if (!blocking.ok()) return blocking.status();
  auto overlap = SharedCoreBucketOverlap(*fit, out);
  if (!overlap.ok()) return overlap.status();
  m.blocking_collective_seconds = *blocking;
  m.shared_core_bucket_overlap = *overlap;
  m.intra_node_bytes_per_second = fit->bytes_per_second;
  m.intra_node_latency_seconds = std::max(fit->latency_seconds, 1e-7);
  return absl::OkStatus();
}

// The single-thread peaks, in this process (which starts LibTorch's thread pools): n×n matmuls
// per dtype (bf16 and fp16 fall back to the fp32 figure, with a note) and copy bandwidth.
absl::Status MeasureSingleThread(const DeviceProfileMeasurementOptions& options,
                                 DeviceProfileMeasurement& m, std::string& notes) {
  auto fp32 = MeasureMatmulFlopsPerSecond("fp32", options.matmul_size, 5);
  if (!fp32.ok()) return fp32.status();
  m.matmul_fp32_flops_per_second = *fp32;
  for (const char* dtype : {"bf16", "fp16"}) {
    auto flops = MeasureMatmulFlopsPerSecond(dtype, options.matmul_size, 5);
    double& target = std::string(dtype) == "bf16" ? m.matmul_bf16_flops_per_second
                                                  : m.matmul_fp16_flops_per_second;
    target = flops.ok() ? *flops : *fp32;
    if (!flops.ok()) notes += std::string("; no ") + dtype + " CPU matmul here: fp32 figure used";
  }
  auto memory = MeasureMemoryBytesPerSecond(int64_t{64} << 20, 5);
  if (!memory.ok()) return memory.status();
  m.memory_bytes_per_second = *memory;
  return absl::OkStatus();
}

// How everything was measured, followed by `notes` (what could not be).
std::string Method(const DeviceProfileMeasurementOptions& options,
                   const DeviceProfileMeasurement& m, const std::string& notes) {
  return std::to_string(options.matmul_size) + "x" + std::to_string(options.matmul_size) +
         " matmuls and a 64 MiB copy on one " + "thread (per core, " + std::to_string(m.cores) +
         " cores); matmul grids over " + std::to_string(options.matmul_sizes.size()) +
         " sizes from " + std::to_string(options.matmul_sizes.front()) + " to " +
         std::to_string(options.matmul_sizes.back()) + " (nt and tn layouts to " +
         std::to_string(TransposedGridSizes(options.matmul_sizes,
                                            options.transposed_grid_max_size).back()) +
         ") and elementwise op costs with " +
         "one thread on every core at once; worker efficiency from a GPT-2 training step " +
         "with one worker on every core, one per core and two per core (median of " +
         std::to_string(kWorkerScalingRounds) + " rounds); Gloo all-reduce " +
         "between matmul bursts (as in a step), means of " + std::to_string(kAllReduceRounds) +
         " rounds over 2.." + std::to_string(m.max_group_size) + " local processes fitted to " +
         "the ring model; a " +
         "tensor-parallel GPT-2 step over 2 processes with its all-reduces and without them " +
         "(median of " + std::to_string(kTensorParallelStepRounds) + " paired rounds) for " +
         "what a blocking collective adds, and a data-parallel one with its bucket " +
         "all-reduces and without them for the part of the buckets hidden; the AdamW step " +
         "on every core at once; inter-node " +
         "not measured (copied from intra-node)" + notes;
}

}  // namespace

absl::StatusOr<DeviceProfileMeasurement> MeasureDeviceProfile(
    const DeviceProfileMeasurementOptions& options, std::ostream& progress) {
  // Measure what the workers run: `accel run` workers keep freed memory (executor/host_malloc.h),
  // and the measurement processes forked below inherit the setting.
  RetainFreedHostMemory();
  DeviceProfileMeasurement m;
  m.cores = UsableCores();
  m.max_group_size =
      options.max_group_size > 0 ? options.max_group_size : std::max(m.cores, 2);
  if (absl::Status s = MeasureLinks(m, progress); !s.ok()) return s;
  std::string notes;
  // In forked processes, before this one starts LibTorch's thread pools.
  m.matmul_grids = MatmulGrids(options, m.cores, progress, notes);
  m.elementwise_costs = ElementwiseCosts(m.cores, progress, notes);
  m.worker_scaling = WorkerScaling(m.cores, progress, notes);
  m.adamw_seconds_per_parameter = AdamWSecondsPerParameter(m.cores, progress, notes);
  if (absl::Status s = MeasureSingleThread(options, m, notes); !s.ok()) return s;
  m.method = Method(options, m, notes);
  return m;
}

}  // namespace accel::exec
