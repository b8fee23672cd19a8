#include "executor/host_malloc.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

namespace accel::exec {
namespace {

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// A step's allocation pattern in miniature: 16 blocks of 4 MiB written, then all freed (64 MiB
// at the top of the heap, far above glibc's dynamic trim threshold of 8 MiB after the first
// round). Returns the minor page faults of rounds 3 to 5, when the heap is warm.
long WarmRoundFaults() {
  constexpr size_t kBlock = size_t{4} << 20;
  long before = 0;
  for (int round = 0; round < 5; ++round) {
    if (round == 2) before = MinorFaults();
    std::vector<char*> blocks;
    for (int i = 0; i < 16; ++i) {
      blocks.push_back(static_cast<char*>(std::malloc(kBlock)));
      std::memset(blocks.back(), round + 1, kBlock);
    }
    for (char* b : blocks) std::free(b);
  }
  return MinorFaults() - before;
}

// Runs WarmRoundFaults in a child process (mallopt settings are process-wide), after
// RetainFreedHostMemory when `retain`; returns the child's exit code: 1 when the settings were
// refused, 2 when the warm rounds faulted more than one 4 MiB block's pages (1,024), else 0.
int ChildExit(bool retain) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (retain && !RetainFreedHostMemory()) ::_exit(1);
    ::_exit(WarmRoundFaults() > 1024 ? 2 : 0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

TEST_CASE("RetainFreedHostMemory keeps a freed step's memory for the next one", "[malloc]") {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer replaces malloc; its mallopt accepts nothing.
  CHECK_FALSE(RetainFreedHostMemory());
#elif defined(__GLIBC__)
  // glibc's defaults hand the freed 64 MiB back and fault it in again every round (3 rounds ×
  // 16,384 pages); with the settings the warm rounds reuse the heap.
  CHECK(ChildExit(false) == 2);
  CHECK(ChildExit(true) == 0);
#else
  CHECK_FALSE(RetainFreedHostMemory());
#endif
}

}  // namespace
}  // namespace accel::exec
