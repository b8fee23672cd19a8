// Exact live and peak tensor bytes on CPU: a c10::Allocator that wraps the CPU allocator that is
// current when it is installed and counts every byte requested through it. The measured side of
// the plan's per-rank memory estimate (docs/design.md, "Executor seams: measured memory"); the CUDA
// counterpart is the caching allocator's own statistics.
//
// What is counted: every storage that LibTorch allocates through c10::GetCPUAllocator() (which is
// c10::GetAllocator(kCPU); at::empty_cpu and so every CPU factory, op result and autograd buffer
// use it; resize_ regrows a storage through the allocator the storage was made with): parameters,
// gradients, optimizer states, activations saved for backward, temporaries, communication buffers
// allocated as tensors, RNG state tensors, and oneDNN/ideep scratch buffers (ideep allocates
// through this allocator's raw interface, e.g. for bf16 matmuls under CPU autocast). The count is
// the requested size (a tensor's storage nbytes = numel * itemsize for a contiguous tensor), not
// the malloc'd size: the default allocator's 64-byte alignment and the heap's own overhead are not
// included. Zero-byte requests count 0.
//
// What is not counted: memory that does not pass through the CPU allocator: Gloo's and c10d's
// internal buffers and sockets, BLAS/OpenMP workspaces (malloc), libtorch's static state and
// operator registry, protobuf/plan objects, tensors made with from_blob over foreign memory,
// pinned-memory and CUDA allocations, and storages allocated before installation (they are freed
// through their own deleter and never touch the counters).
#ifndef ACCEL_EXECUTOR_MEMORY_COUNTING_ALLOCATOR_H_
#define ACCEL_EXECUTOR_MEMORY_COUNTING_ALLOCATOR_H_

#include <cstdint>

namespace accel::exec {

// Installs the counting allocator process-wide as the CPU allocator, wrapping the one current at
// the first call (c10::SetCPUAllocator with the highest priority, 255: c10::SetAllocator replaces
// the registered allocator only when the new priority is >= the old one, and the default CPU
// allocator registers itself at priority 0 during static initialization; a later SetCPUAllocator
// with a lower priority, e.g. a library's static registration, is then ignored, so allocations stay
// counted). Later calls do nothing.
// Call it once at startup, before other threads allocate tensors: c10::SetAllocator itself is not
// synchronized. Storages allocated before the call keep their original deleter and are never
// counted, neither when allocated nor when freed.
void InstallCountingCpuAllocator();

// Whether the counting allocator is the current CPU allocator (c10::GetCPUAllocator()).
bool CountingCpuAllocatorInstalled();

// Bytes currently held by storages allocated through the counting allocator (0 before
// installation). Thread-safe (relaxed atomics): exact when no other thread is allocating.
int64_t LiveTensorBytes();

// Largest LiveTensorBytes() reached since installation or since the last ResetPeakTensorBytes().
int64_t PeakTensorBytes();

// Sets the peak to the current live bytes, so the next PeakTensorBytes() measures one phase.
// An allocation racing with the reset may be missed by the new peak.
void ResetPeakTensorBytes();

// Measures the peak of one region. On construction resets the peak to the live bytes (remembering
// the previous peak); on destruction raises the process peak back to at least the remembered one,
// so nested scopes and an enclosing PeakTensorBytes() reading stay correct. Single-threaded use:
// scopes on different threads interfere (the peak is process-wide).
class PeakScope {
 public:
  PeakScope();
  ~PeakScope();
  PeakScope(const PeakScope&) = delete;
  PeakScope& operator=(const PeakScope&) = delete;

  // Live bytes when the scope began.
  int64_t StartBytes() const { return start_bytes_; }
  // Peak live bytes since the scope began (>= StartBytes()).
  int64_t PeakBytes() const;
  // PeakBytes() - StartBytes(): the extra memory the region needed at its worst point.
  int64_t PeakAboveStartBytes() const { return PeakBytes() - start_bytes_; }

 private:
  int64_t start_bytes_;
  int64_t outer_peak_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MEMORY_COUNTING_ALLOCATOR_H_
