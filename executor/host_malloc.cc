#include "executor/host_malloc.h"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace accel::exec {

bool RetainFreedHostMemory() {
#if defined(__GLIBC__)
  const bool mmap = ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHostMmapThresholdBytes)) == 1;
  const bool trim = ::mallopt(M_TRIM_THRESHOLD, INT_MAX) == 1;
  return mmap && trim;
#else
  return false;
#endif
}

}  // namespace accel::exec
