// Thread control of the BLAS library LibTorch's CPU matmuls call. Debian's LibTorch calls
// OpenBLAS built with its own pthreads pool (libopenblas0-pthread), which ignores
// at::set_num_threads and sizes itself at load time from OPENBLAS_NUM_THREADS, else
// OMP_NUM_THREADS, else every core. A worker or a measurement that sets LibTorch's intra-op
// threads must set these too, or BLAS threads and OpenMP threads oversubscribe the cores, which
// slows a step several times and makes `accel calibrate` time a two-thread matmul as one
// core's. Torch-free.
#ifndef ACCEL_EXECUTOR_BLAS_THREADS_H_
#define ACCEL_EXECUTOR_BLAS_THREADS_H_

namespace accel::exec {

// Sets the BLAS library's thread count to `threads` (>= 1) through openblas_set_num_threads
// when the process has OpenBLAS loaded (looked up with dlsym, so builds against another BLAS
// need nothing). Returns whether a BLAS thread control was found and called.
bool SetBlasThreads(int threads);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_BLAS_THREADS_H_
