#ifndef ACCEL_COMMON_CEIL_DIV_H_
#define ACCEL_COMMON_CEIL_DIV_H_

#include <cstdint>

namespace accel {

// ceil(a / b) for a >= 0: how many parts of size b cover a (shards of a tensor, chunks of a
// sequence). A divisor of 0 or 1 leaves `a` whole, so an unsharded axis (degree 1) and an absent
// one (0) read the same.
inline constexpr int64_t CeilDiv(int64_t a, int64_t b) { return b <= 1 ? a : (a + b - 1) / b; }

}  // namespace accel

#endif  // ACCEL_COMMON_CEIL_DIV_H_
