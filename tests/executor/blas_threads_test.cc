#include "executor/blas_threads.h"

#include <dlfcn.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <catch2/catch.hpp>

namespace accel::exec {
namespace {

// OpenBLAS's own getter, found the way SetBlasThreads finds the setter.
int BlasThreads() {
  using GetThreads = int (*)();
  void* symbol = ::dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  REQUIRE(symbol != nullptr);
  return reinterpret_cast<GetThreads>(symbol)();
}

TEST_CASE("SetBlasThreads sizes OpenBLAS's own thread pool, which at::set_num_threads leaves alone",
          "[blas]") {
  // Debian's LibTorch multiplies through OpenBLAS; without it there is nothing to control.
  if (::dlsym(RTLD_DEFAULT, "openblas_set_num_threads") == nullptr) {
    CHECK_FALSE(SetBlasThreads(1));
    return;
  }
  const int before = BlasThreads();
  REQUIRE(SetBlasThreads(1));
  CHECK(BlasThreads() == 1);
  at::set_num_threads(2);
  CHECK(BlasThreads() == 1);  // LibTorch's intra-op setting does not reach OpenBLAS
  REQUIRE(SetBlasThreads(2));
  CHECK(BlasThreads() == 2);
  CHECK(SetBlasThreads(0));  // clamped to one thread
  CHECK(BlasThreads() == 1);
  SetBlasThreads(before);
  at::set_num_threads(1);
}

}  // namespace
}  // namespace accel::exec
