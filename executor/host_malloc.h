// Keeps freed host memory in the process instead of handing it back to the kernel after every
// step. glibc's malloc serves blocks above its mmap threshold (128 KiB, rising dynamically to at
// most 32 MiB) with fresh mmaps and returns the top of its heap to the kernel once more than
// its trim threshold is free; a training step frees most of its activations at the end of
// backward, so every step refaulted its working set page by page, which on small CPU models
// costs as much as the arithmetic (`perf stat -e page-faults` on `accel run` shows it).
// LibTorch's CPU allocator is plain posix_memalign, so the fix is glibc's own knobs
// (mallopt(3)). Torch-free.
#ifndef ACCEL_EXECUTOR_HOST_MALLOC_H_
#define ACCEL_EXECUTOR_HOST_MALLOC_H_

#include <cstdint>

namespace accel::exec {

// The mmap threshold this sets: glibc's largest (32 MiB on 64-bit, DEFAULT_MMAP_THRESHOLD_MAX).
// Blocks below it come from the heap and are reused; larger ones are still mmapped.
inline constexpr int64_t kHostMmapThresholdBytes = int64_t{32} << 20;

// Sets glibc's M_MMAP_THRESHOLD to kHostMmapThresholdBytes and M_TRIM_THRESHOLD to INT_MAX
// (the heap is returned to the kernel only above 2 GiB free), for the whole process and the
// processes it forks from then on. Call before the first step allocates (setting either turns
// off glibc's dynamic threshold). Returns whether both settings were accepted: false where
// malloc is not glibc's (another C library, or AddressSanitizer's allocator, whose mallopt
// accepts nothing), and then nothing changes. The process's peak RSS is unchanged (the step
// reaches it anyway: `make run` 447 MiB on rank 0, 452 MiB before); its RSS between steps stays
// at that peak.
bool RetainFreedHostMemory();

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_HOST_MALLOC_H_
