#include "executor/memory/cuda_memory.h"

#if defined(ACCEL_WITH_CUDA)
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace accel::exec {

#if defined(ACCEL_WITH_CUDA)

namespace {
// Index of the "aggregate" entry of the allocator's StatArray (StatType::AGGREGATE, first in
// every LibTorch version; the enum moved namespace in 2.x).
constexpr size_t kAggregate = 0;
}  // namespace

bool CudaMemoryStatsAvailable() { return true; }

CudaMemoryStats ReadCudaMemoryStats(int device_index) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(
      static_cast<c10::DeviceIndex>(device_index));
  CudaMemoryStats out;
  out.allocated = stats.allocated_bytes[kAggregate].current;
  out.reserved = stats.reserved_bytes[kAggregate].current;
  out.peak_allocated = stats.allocated_bytes[kAggregate].peak;
  out.peak_reserved = stats.reserved_bytes[kAggregate].peak;
  return out;
}

void ResetCudaPeakMemory(int device_index) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device_index));
}

#else

bool CudaMemoryStatsAvailable() { return false; }
CudaMemoryStats ReadCudaMemoryStats(int) { return {}; }
void ResetCudaPeakMemory(int) {}

#endif

}  // namespace accel::exec
