#include "executor/memory/counting_allocator.h"

#include <c10/core/CPUAllocator.h>
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <random>
#include <thread>
#include <vector>

#include "executor/train/autocast.h"

namespace accel::exec {
namespace {

// Made during static initialization, before any test installs the counting allocator (each test
// case also runs alone in its own process under ctest).
torch::Tensor g_tensor_from_before_install = torch::ones({4096});
void* g_raw_from_before_install = c10::GetCPUAllocator()->raw_allocate(1000);

void Install() {
  InstallCountingCpuAllocator();
  REQUIRE(CountingCpuAllocatorInstalled());
}

TEST_CASE("counting allocator: install is idempotent and is what factories use", "[memory]") {
  Install();
  c10::Allocator* installed = c10::GetCPUAllocator();
  InstallCountingCpuAllocator();
  CHECK(c10::GetCPUAllocator() == installed);
  // GetCPUAllocator() is GetAllocator(kCPU): one slot, so both factory paths are counted.
  CHECK(c10::GetAllocator(c10::DeviceType::CPU) == installed);
  torch::Tensor t = torch::zeros({10});
  CHECK(t.storage().allocator() == installed);
}

TEST_CASE("counting allocator: a tensor adds exactly its nbytes and freeing removes them",
          "[memory]") {
  Install();
  struct Case {
    std::vector<int64_t> shape;
    torch::Dtype dtype;
    int64_t bytes;
  };
  // Odd sizes show there is no rounding: the count is numel * itemsize.
  const std::vector<Case> cases = {{{1000}, torch::kFloat32, 4000}, {{3}, torch::kUInt8, 3},
                                   {{7, 3}, torch::kFloat64, 168},  {{5}, torch::kBFloat16, 10},
                                   {{1}, torch::kInt64, 8},         {{0}, torch::kFloat32, 0}};
  for (const auto& c : cases) {
    const int64_t before = LiveTensorBytes();
    {
      torch::Tensor t = torch::empty(c.shape, torch::TensorOptions().dtype(c.dtype));
      CHECK(static_cast<int64_t>(t.nbytes()) == c.bytes);
      CHECK(LiveTensorBytes() - before == c.bytes);
      torch::Tensor view = t.view({-1});  // Views share the storage: no new bytes.
      CHECK(LiveTensorBytes() - before == c.bytes);
    }
    CHECK(LiveTensorBytes() == before);
  }
  const int64_t before = LiveTensorBytes();
  torch::Tensor r = torch::randn({123, 7});
  CHECK(LiveTensorBytes() - before == 123 * 7 * 4);
}

TEST_CASE("counting allocator: peak keeps the maximum until reset", "[memory]") {
  Install();
  const int64_t base = LiveTensorBytes();
  ResetPeakTensorBytes();
  CHECK(PeakTensorBytes() == base);
  { torch::Tensor big = torch::empty({1 << 20}, torch::kUInt8); }
  torch::Tensor small = torch::empty({1000}, torch::kUInt8);
  CHECK(LiveTensorBytes() == base + 1000);
  CHECK(PeakTensorBytes() == base + (1 << 20));
  ResetPeakTensorBytes();
  CHECK(PeakTensorBytes() == base + 1000);
}

TEST_CASE("counting allocator: PeakScope measures a region and keeps the outer peak", "[memory]") {
  Install();
  ResetPeakTensorBytes();
  const int64_t base = LiveTensorBytes();
  { torch::Tensor big = torch::empty({4096}, torch::kUInt8); }
  {
    PeakScope scope;
    CHECK(scope.StartBytes() == base);
    { torch::Tensor t = torch::empty({100}, torch::kUInt8); }
    CHECK(scope.PeakBytes() == base + 100);
    CHECK(scope.PeakAboveStartBytes() == 100);
  }
  CHECK(PeakTensorBytes() == base + 4096);
}

TEST_CASE("counting allocator: memory from before install is freed without counting", "[memory]") {
  Install();
  const int64_t live = LiveTensorBytes();
  // Its DataPtr carries the original allocator's deleter, not the counting one.
  CHECK(g_tensor_from_before_install.storage().data_ptr().get_deleter() !=
        c10::GetCPUAllocator()->raw_deleter());
  g_tensor_from_before_install = torch::Tensor();
  CHECK(LiveTensorBytes() == live);
  // A raw allocation from before install freed through the counting allocator's raw interface
  // goes to the wrapped allocator's raw deleter.
  c10::GetCPUAllocator()->raw_deallocate(g_raw_from_before_install);
  CHECK(LiveTensorBytes() == live);
}

TEST_CASE("counting allocator: raw_allocate works and is counted", "[memory]") {
  Install();
  const int64_t live = LiveTensorBytes();
  void* p = c10::GetCPUAllocator()->raw_allocate(777);
  CHECK(LiveTensorBytes() == live + 777);
  c10::GetCPUAllocator()->raw_deallocate(p);
  CHECK(LiveTensorBytes() == live);
}

TEST_CASE("counting allocator: bf16 autocast linear (oneDNN raw buffers) balances", "[memory]") {
  Install();
  torch::nn::Linear linear(256, 512);
  torch::Tensor x = torch::randn({64, 256});
  const int64_t live = LiveTensorBytes();
  {
    AutocastScope autocast(c10::DeviceType::CPU, ComputePrecision::kBf16);
    torch::Tensor y = linear(x);
    CHECK(y.scalar_type() == torch::kBFloat16);
  }
  CHECK(LiveTensorBytes() == live);
}

TEST_CASE("counting allocator: concurrent allocate/free ends at the starting count", "[memory]") {
  Install();
  const int64_t start = LiveTensorBytes();
  ResetPeakTensorBytes();
  constexpr int kThreads = 8;
  constexpr int kIterations = 3000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      std::mt19937 rng(t);
      std::uniform_int_distribution<int64_t> size(1, 5000);
      std::vector<torch::Tensor> held(16);
      for (int i = 0; i < kIterations; ++i) {
        held[rng() % held.size()] = torch::empty({size(rng)}, torch::kUInt8);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(LiveTensorBytes() == start);
  CHECK(PeakTensorBytes() > start);
  std::printf(
      "[counting_allocator] stress: %d threads x %d allocations, peak %lld bytes above "
      "start, end delta %lld\n",
      kThreads, kIterations, static_cast<long long>(PeakTensorBytes() - start),
      static_cast<long long>(LiveTensorBytes() - start));
}

TEST_CASE("counting allocator: Linear forward+backward peaks above the parameter bytes",
          "[memory]") {
  Install();
  torch::manual_seed(0);
  torch::nn::Linear linear(256, 512);
  torch::Tensor x = torch::randn({64, 256});
  int64_t param_bytes = 0;
  for (const auto& p : linear->parameters()) param_bytes += static_cast<int64_t>(p.nbytes());
  CHECK(param_bytes == (256 * 512 + 512) * 4);
  PeakScope scope;
  torch::Tensor loss = linear(x).relu().sum();
  loss.backward();
  // Gradients alone equal the parameter bytes; activations and temporaries come on top.
  CHECK(scope.PeakAboveStartBytes() > param_bytes);
  std::printf(
      "[counting_allocator] Linear(256,512) on [64,256]: parameters %lld bytes, "
      "live before %lld, peak %lld (+%lld), live after backward %lld\n",
      static_cast<long long>(param_bytes), static_cast<long long>(scope.StartBytes()),
      static_cast<long long>(scope.PeakBytes()),
      static_cast<long long>(scope.PeakAboveStartBytes()),
      static_cast<long long>(LiveTensorBytes()));
}

}  // namespace
}  // namespace accel::exec
