#include "executor/calibrate/calibration.h"

#include <sched.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/blas_threads.h"
#include "executor/calibrate/every_core.h"
#include "executor/calibrate/group_member.h"
#include "executor/calibrate/timing.h"
#include "executor/communicator.h"
#include "ir/enum_names.h"

namespace accel::exec {
namespace {

using calibrate::Clock;
using calibrate::Mean;
using calibrate::Median;
using calibrate::Seconds;

// The compute a worker runs between two collectives, in miniature: four 256³ fp32 matmuls
// (about 2 ms on one core of the build VM).
void ComputeBurst(const at::Tensor& a, const at::Tensor& b) {
  for (int i = 0; i < 4; ++i) at::Tensor c = at::matmul(a, b);
}

// Seconds of one all-reduce of `t` inside a step on this rank: every rank runs `repeats`
// rounds of (ComputeBurst, all-reduce) back to back and the same bursts alone; the difference
// of the mean round and the mean burst is what the collective adds to a step (waking its
// threads and the peers', the ranks' skew), at least the median of back-to-back calls after a
// barrier. Means, since a step pays its collectives' tail too (timing.h Mean). Returns < 0 when
// a collective fails.
double InStepAllReduceSeconds(Communicator& world, at::Tensor& t, int repeats) {
  const at::Tensor a = at::randn({256, 256});
  const at::Tensor b = at::randn({256, 256});
  std::vector<double> alone, bursts;
  for (int i = 0; i < repeats; ++i) {
    if (!world.Barrier().ok()) return -1;
    Clock::time_point start = Clock::now();
    if (!world.AllReduce(t, ReduceOp::kSum).ok()) return -1;
    alone.push_back(Seconds(start));
    if (!world.Barrier().ok()) return -1;
    start = Clock::now();
    ComputeBurst(a, b);
    bursts.push_back(Seconds(start));
  }
  if (!world.Barrier().ok()) return -1;
  std::vector<double> rounds;
  for (int i = 0; i < repeats; ++i) {
    const Clock::time_point start = Clock::now();
    ComputeBurst(a, b);
    if (!world.AllReduce(t, ReduceOp::kSum).ok()) return -1;
    rounds.push_back(Seconds(start));
  }
  return std::max(Mean(rounds) - Mean(bursts), Median(alone));
}

// Rank r of one all-reduce group: returns the process exit code; rank 0 writes "bytes seconds"
// lines to `out_fd`, each size's mean over `rounds` rounds that time every size in turn.
int RunGroupMember(int rank, int group_size, const std::vector<int64_t>& sizes, int repeats,
                   int rounds, const std::string& store_file, int out_fd) {
  absl::StatusOr<GroupMember> member = JoinGlooGroup(rank, group_size, store_file);
  if (!member.ok()) return 3;
  Communicator& world = *member->world;
  std::vector<at::Tensor> tensors;
  for (int64_t bytes : sizes) {
    tensors.push_back(at::ones({std::max<int64_t>(bytes / 4, 1)}, at::kFloat));
    for (int i = 0; i < 2; ++i) {
      if (!world.AllReduce(tensors.back(), ReduceOp::kSum).ok()) return 5;
    }
  }
  std::vector<std::vector<double>> seconds(sizes.size());
  for (int round = 0; round < std::max(rounds, 1); ++round) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      seconds[i].push_back(InStepAllReduceSeconds(world, tensors[i], repeats));
      if (seconds[i].back() < 0) return 5;
    }
  }
  std::string lines;
  for (size_t i = 0; i < sizes.size(); ++i) {
    char line[64];
    std::snprintf(line, sizeof(line), "%lld %.9g\n",
                  static_cast<long long>(tensors[i].numel() * 4), Mean(seconds[i]));
    lines += line;
  }
  if (rank == 0 && ::write(out_fd, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size())) {
    return 7;
  }
  return 0;
}

absl::StatusOr<at::ScalarType> MatmulType(const std::string& dtype) {
  if (dtype == "fp32") return at::kFloat;
  if (dtype == "bf16") return at::kBFloat16;
  if (dtype == "fp16") return at::kHalf;
  return absl::InvalidArgumentError("unknown dtype '" + dtype + "'");
}

// Seconds of one a·b product: the median of five batches (three when one product takes over
// 50 ms), each of enough products to last about 2 ms, after one warm-up product.
double TimeMatmul(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor c = at::matmul(a, b);
  Clock::time_point start = Clock::now();
  c = at::matmul(a, b);
  const double once = std::max(Seconds(start), 1e-9);
  const int repeats = static_cast<int>(std::clamp(2e-3 / once, 1.0, 10000.0));
  const int count = once > 0.05 ? 3 : 5;
  std::vector<double> batches;
  for (int batch = 0; batch < count; ++batch) {
    start = Clock::now();
    for (int i = 0; i < repeats; ++i) c = at::matmul(a, b);
    batches.push_back(Seconds(start) / repeats);
  }
  return Median(std::move(batches));
}

}  // namespace

absl::StatusOr<std::vector<double>> MeasureMatmulGrid(const std::string& dtype,
                                                      const std::vector<int64_t>& sizes,
                                                      const std::string& layout) {
  absl::StatusOr<at::ScalarType> type = MatmulType(dtype);
  if (!type.ok()) return type.status();
  const std::optional<ir::MatmulLayout> operands = ir::ParseMatmulLayout(layout);
  if (!operands) return absl::InvalidArgumentError("unknown matmul layout '" + layout + "'");
  if (sizes.empty()) return absl::InvalidArgumentError("no matmul sizes");
  for (int64_t size : sizes) {
    if (size < 1) return absl::InvalidArgumentError("matrix size must be positive");
  }
  at::set_num_threads(1);
  SetBlasThreads(1);
  std::vector<double> flops;
  try {
    for (int64_t m : sizes) {
      for (int64_t n : sizes) {
        for (int64_t k : sizes) {
          // A transposed view reaches BLAS as transa/transb over the row-major original.
          const at::Tensor a = *operands == ir::MATMUL_LAYOUT_TN ? at::randn({k, m}).to(*type).t()
                                                                 : at::randn({m, k}).to(*type);
          const at::Tensor b = *operands == ir::MATMUL_LAYOUT_NT ? at::randn({n, k}).to(*type).t()
                                                                 : at::randn({k, n}).to(*type);
          const double work = 2.0 * static_cast<double>(m) * static_cast<double>(n) *
                              static_cast<double>(k);
          flops.push_back(work / TimeMatmul(a, b));
        }
      }
    }
  } catch (const c10::Error& e) {
    return absl::UnimplementedError(std::string("no CPU matmul for ") + dtype + ": " +
                                    e.what_without_backtrace());
  }
  return flops;
}

absl::StatusOr<double> MeasureMatmulFlopsPerSecond(const std::string& dtype, int64_t n,
                                                   int repeats) {
  absl::StatusOr<at::ScalarType> matmul_type = MatmulType(dtype);
  if (!matmul_type.ok()) return matmul_type.status();
  const at::ScalarType type = *matmul_type;
  if (n < 1) return absl::InvalidArgumentError("matrix size must be positive");
  at::set_num_threads(1);
  SetBlasThreads(1);
  try {
    at::Tensor a = at::randn({n, n}).to(type);
    at::Tensor b = at::randn({n, n}).to(type);
    at::Tensor c = at::matmul(a, b);
    double best = 1e30;
    for (int i = 0; i < std::max(repeats, 1); ++i) {
      const Clock::time_point start = Clock::now();
      c = at::matmul(a, b);
      best = std::min(best, Seconds(start));
    }
    const double nn = static_cast<double>(n);
    return 2.0 * nn * nn * nn / best;
  } catch (const c10::Error& e) {
    return absl::UnimplementedError(std::string("no CPU matmul for ") + dtype + ": " +
                                    e.what_without_backtrace());
  }
}

absl::StatusOr<double> MeasureMemoryBytesPerSecond(int64_t bytes, int repeats) {
  at::set_num_threads(1);
  SetBlasThreads(1);
  at::Tensor x = at::ones({std::max<int64_t>(bytes / 4, 1)}, at::kFloat);
  at::Tensor y = at::empty_like(x);
  y.copy_(x);
  double best = 1e30;
  for (int i = 0; i < std::max(repeats, 1); ++i) {
    const Clock::time_point start = Clock::now();
    y.copy_(x);
    best = std::min(best, Seconds(start));
  }
  return 2.0 * static_cast<double>(x.numel() * 4) / best;
}

absl::StatusOr<std::vector<planner::CollectiveSample>> MeasureGlooAllReduce(
    int group_size, const std::vector<int64_t>& sizes_bytes, int repeats, int rounds,
    const std::string& store_file) {
  absl::StatusOr<std::string> text = RunForkedGroup(group_size, [&](int rank, int fd) {
    return RunGroupMember(rank, group_size, sizes_bytes, repeats, rounds, store_file, fd);
  });
  if (!text.ok()) {
    return absl::InternalError("an all-reduce process over " + std::to_string(group_size) +
                               " ranks failed");
  }
  std::vector<planner::CollectiveSample> samples;
  long long bytes = 0;
  double seconds = 0;
  for (const char* p = text->c_str(); std::sscanf(p, "%lld %lf", &bytes, &seconds) == 2;) {
    samples.push_back({group_size, static_cast<double>(bytes), seconds});
    p = std::strchr(p, '\n');
    if (p == nullptr) break;
    ++p;
  }
  if (samples.size() != sizes_bytes.size()) {
    return absl::InternalError("all-reduce results over " + std::to_string(group_size) +
                               " ranks are incomplete");
  }
  return samples;
}

int UsableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace accel::exec
