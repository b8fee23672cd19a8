#ifndef ACCEL_COMMON_UNITS_H_
#define ACCEL_COMMON_UNITS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace accel {

inline constexpr int64_t kKiB = int64_t{1} << 10;
inline constexpr int64_t kMiB = int64_t{1} << 20;
inline constexpr int64_t kGiB = int64_t{1} << 30;
inline constexpr int64_t kTiB = int64_t{1} << 40;

// Parses a byte size: a plain non-negative integer ("1048576"), or a number with a unit:
// binary "KiB", "MiB", "GiB", "TiB" (powers of 1024) or decimal "KB"/"kB", "MB", "GB", "TB"
// (powers of 1000), "B" for bytes. A space between number and unit is allowed, and the number
// may have a fraction ("1.5GiB") when the result is a whole number of bytes.
// Returns nullopt for anything else, negative values, or values above 2^62.
std::optional<int64_t> ParseByteSize(std::string_view text);

// Formats bytes for people with binary units and two decimals: "1.50 GiB", "512.00 MiB",
// "12 B" (bytes below 1 KiB are printed exactly).
std::string FormatBytes(int64_t bytes);

// Formats an integer with thousands separators: 124439808 -> "124,439,808".
std::string FormatCount(int64_t value);

}  // namespace accel

#endif  // ACCEL_COMMON_UNITS_H_
