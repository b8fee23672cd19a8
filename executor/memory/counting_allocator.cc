#include "executor/memory/counting_allocator.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/util/Exception.h>
#include <torch/version.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <utility>

namespace accel::exec {
namespace {

// Highest priority: see InstallCountingCpuAllocator in the header.
constexpr uint8_t kInstallPriority = 255;

std::atomic<int64_t> g_live_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

void RaisePeakTo(int64_t bytes) {
  int64_t peak = g_peak_bytes.load(std::memory_order_relaxed);
  while (bytes > peak &&
         !g_peak_bytes.compare_exchange_weak(peak, bytes, std::memory_order_relaxed)) {
  }
}

void AddLive(int64_t bytes) {
  RaisePeakTo(g_live_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

// Every live allocation, keyed by its data pointer: the wrapped allocator's DataPtr (which owns
// the memory and knows how to free it) and the counted size.
//
// Why a table and not a per-allocation context: Allocator::raw_allocate (non-virtual) asserts
// that the DataPtr's context equals its data pointer, and oneDNN through ideep allocates its
// buffers with GetAllocator(kCPU)->raw_allocate/raw_deallocate (ATen's IDeepRegistration.cpp),
// e.g. for every bf16 linear under CPU autocast. A context object would make those calls fail
// with "dptr.get() == dptr.get_context() INTERNAL ASSERT FAILED". So each DataPtr handed out has
// context == data and the deleter below finds the size here.
struct Allocation {
  c10::DataPtr wrapped;
  int64_t bytes = 0;
};

// Sharded to keep threads (autograd, Gloo, intra-op pools) from contending on one lock.
constexpr size_t kShardCount = 64;
struct Shard {
  std::mutex mutex;
  std::unordered_map<void*, Allocation> allocations;
};

Shard& ShardOf(void* data) {
  // Never destroyed: tensors held by other static objects are freed during exit, possibly after
  // this translation unit's statics would have been destroyed.
  static auto* shards = new std::array<Shard, kShardCount>();
  // Allocations are 64-byte aligned: drop the always-zero low bits before picking a shard.
  const auto bits = reinterpret_cast<uintptr_t>(data);
  return (*shards)[((bits >> 6) ^ (bits >> 16)) % kShardCount];
}

// The allocator current at installation, and its raw deleter (for raw_deallocate of pointers it
// handed out through raw_allocate before installation).
c10::Allocator* g_wrapped = nullptr;
c10::DeleterFnPtr g_wrapped_raw_deleter = nullptr;

void CountingDelete(void* data) {
  Allocation allocation;
  bool found = false;
  {
    Shard& shard = ShardOf(data);
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto it = shard.allocations.find(data);
    if (it != shard.allocations.end()) {
      allocation = std::move(it->second);
      shard.allocations.erase(it);
      found = true;
    }
  }
  if (found) {
    g_live_bytes.fetch_sub(allocation.bytes, std::memory_order_relaxed);
    return;  // allocation.wrapped frees the memory through the wrapped deleter here.
  }
  // Not ours: raw_deallocate of memory that the wrapped allocator's raw_allocate returned before
  // installation (DataPtrs made before installation carry their own deleter and never get here).
  // A deleter must not throw (it runs in destructors): leak with a warning rather than terminate.
  if (g_wrapped_raw_deleter == nullptr) {
    TORCH_WARN(
        "counting CPU allocator: leaking a pointer it did not allocate (the wrapped "
        "allocator has no raw deleter)");
    return;
  }
  g_wrapped_raw_deleter(data);
}

class CountingCpuAllocator final : public c10::Allocator {
 public:
  // LibTorch 2.3 made Allocator::allocate non-const (pytorch/pytorch#120969).
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
  c10::DataPtr allocate(size_t bytes) override { return Allocate(bytes); }
#else
  c10::DataPtr allocate(size_t bytes) const override { return Allocate(bytes); }
#endif

  c10::DeleterFnPtr raw_deleter() const override { return &CountingDelete; }

  // Overrides Allocator::copy_data (used by Allocator::clone) in LibTorch 2.x, where it came with
  // the copy-on-write storage work and is now pure virtual; 1.13 has none, so no `override`.
  void copy_data(void* dest, const void* src, std::size_t count) const {
    std::memcpy(dest, src, count);
  }

 private:
  static c10::DataPtr Allocate(size_t bytes) {
    c10::DataPtr wrapped = g_wrapped->allocate(bytes);
    void* data = wrapped.get();
    // Zero-byte (null) results are handed back as they are: nothing to count or to key on.
    if (data == nullptr) return wrapped;
    const c10::Device device = wrapped.device();
    const auto counted = static_cast<int64_t>(bytes);
    {
      Shard& shard = ShardOf(data);
      std::lock_guard<std::mutex> lock(shard.mutex);
      shard.allocations.emplace(data, Allocation{std::move(wrapped), counted});
    }
    AddLive(counted);
    return {data, data, &CountingDelete, device};
  }
};

// Never destroyed: c10::SetAllocator expects an allocator of static lifetime, and frees may come
// during exit.
CountingCpuAllocator* Counting() {
  static auto* allocator = new CountingCpuAllocator();
  return allocator;
}

}  // namespace

void InstallCountingCpuAllocator() {
  static std::once_flag once;
  std::call_once(once, [] {
    g_wrapped = c10::GetCPUAllocator();
    g_wrapped_raw_deleter = g_wrapped->raw_deleter();
    c10::SetCPUAllocator(Counting(), kInstallPriority);
  });
}

bool CountingCpuAllocatorInstalled() { return c10::GetCPUAllocator() == Counting(); }

int64_t LiveTensorBytes() { return g_live_bytes.load(std::memory_order_relaxed); }

int64_t PeakTensorBytes() { return g_peak_bytes.load(std::memory_order_relaxed); }

void ResetPeakTensorBytes() { g_peak_bytes.store(LiveTensorBytes(), std::memory_order_relaxed); }

PeakScope::PeakScope() : start_bytes_(LiveTensorBytes()), outer_peak_(PeakTensorBytes()) {
  ResetPeakTensorBytes();
}

PeakScope::~PeakScope() { RaisePeakTo(outer_peak_); }

int64_t PeakScope::PeakBytes() const { return PeakTensorBytes(); }

}  // namespace accel::exec
