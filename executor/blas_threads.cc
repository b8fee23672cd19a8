#include "executor/blas_threads.h"

#include <dlfcn.h>

#include <algorithm>

namespace accel::exec {

bool SetBlasThreads(int threads) {
  using SetThreads = void (*)(int);
  void* symbol = ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  if (symbol == nullptr) return false;
  reinterpret_cast<SetThreads>(symbol)(std::max(1, threads));
  return true;
}

}  // namespace accel::exec
