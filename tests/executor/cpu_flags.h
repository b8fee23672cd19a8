#ifndef ACCEL_TESTS_EXECUTOR_CPU_FLAGS_H_
#define ACCEL_TESTS_EXECUTOR_CPU_FLAGS_H_

#include <fstream>
#include <string>

namespace accel::exec {

// Whether /proc/cpuinfo lists `flag` ("avx512bw", "avx512_bf16", ...) for this CPU.
inline bool CpuHasFlag(const std::string& flag) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    return (line + " ").find(" " + flag + " ") != std::string::npos;
  }
  return false;
}

// Whether this CPU has bf16 instructions (AVX512-BF16 or AMX-BF16). Without them LibTorch 1.13
// runs bf16 through other kernels, which allocate different scratch (the memory tests).
inline bool CpuHasBf16Instructions() {
  return CpuHasFlag("avx512_bf16") || CpuHasFlag("amx_bf16");
}

}  // namespace accel::exec

#endif  // ACCEL_TESTS_EXECUTOR_CPU_FLAGS_H_
