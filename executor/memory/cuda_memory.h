// What PyTorch's CUDA caching allocator holds on one device: the measured side of the memory
// estimate on CUDA, as the counting CPU allocator (counting_allocator.h) is on CPU. Torch-free
// header; the implementation reads c10::cuda::CUDACachingAllocator::getDeviceStats when the
// executor is built against a LibTorch with CUDA (ACCEL_WITH_CUDA), and reports nothing otherwise.
#ifndef ACCEL_EXECUTOR_MEMORY_CUDA_MEMORY_H_
#define ACCEL_EXECUTOR_MEMORY_CUDA_MEMORY_H_

#include <cstdint>

namespace accel::exec {

// Bytes on one CUDA device. "allocated" is what live tensors occupy (rounded up to the
// allocator's 512-byte blocks); "reserved" is what the allocator holds from cudaMalloc, allocated
// plus its cached free blocks (fragmentation): the number a fit check must use, since another
// allocation can fail while reserved memory sits free in blocks of the wrong size.
struct CudaMemoryStats {
  int64_t allocated = 0;
  int64_t reserved = 0;
  int64_t peak_allocated = 0;  // the maxima since the last ResetCudaPeakMemory
  int64_t peak_reserved = 0;
};

// True when this binary reads the CUDA caching allocator (built with CUDA).
bool CudaMemoryStatsAvailable();

// The device's counters; all zero when !CudaMemoryStatsAvailable().
CudaMemoryStats ReadCudaMemoryStats(int device_index);

// Starts new maxima at the current values (c10's resetPeakStats); no-op without CUDA.
void ResetCudaPeakMemory(int device_index);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MEMORY_CUDA_MEMORY_H_
