#include "common/units.h"

#include <cmath>
#include <cstdio>

namespace accel {

std::optional<int64_t> ParseByteSize(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  std::string_view number = text.substr(0, i);
  if (number.empty() || number.front() == '.' || number.back() == '.') return std::nullopt;
  if (number.find('.') != number.rfind('.')) return std::nullopt;
  std::string_view unit = text.substr(i);
  if (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);

  long double multiplier = 0;
  if (unit.empty() || unit == "B") multiplier = 1;
  else if (unit == "KiB") multiplier = kKiB;
  else if (unit == "MiB") multiplier = kMiB;
  else if (unit == "GiB") multiplier = kGiB;
  else if (unit == "TiB") multiplier = kTiB;
  else if (unit == "KB" || unit == "kB") multiplier = 1e3;
  else if (unit == "MB") multiplier = 1e6;
  else if (unit == "GB") multiplier = 1e9;
  else if (unit == "TB") multiplier = 1e12;
  else return std::nullopt;

  if (number.find('.') == std::string_view::npos) {
    if (number.size() > 19) return std::nullopt;
    unsigned long long whole = std::stoull(std::string(number));
    long double bytes = static_cast<long double>(whole) * multiplier;
    if (bytes > static_cast<long double>(int64_t{1} << 62)) return std::nullopt;
    return static_cast<int64_t>(whole * static_cast<unsigned long long>(multiplier));
  }
  if (number.size() > 24) return std::nullopt;
  long double value = std::stold(std::string(number)) * multiplier;
  if (value > static_cast<long double>(int64_t{1} << 62)) return std::nullopt;
  long double rounded = std::floor(value);
  if (rounded != value) return std::nullopt;  // fractional bytes
  return static_cast<int64_t>(rounded);
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < kKiB && bytes > -kKiB) return std::to_string(bytes) + " B";
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes) / kKiB;
  int unit = 0;
  while (std::abs(value) >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.2f %s", value, kUnits[unit]);
  return buffer;
}

std::string FormatCount(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  int n = static_cast<int>(digits.size());
  for (int i = 0; i < n; ++i) {
    out += digits[i];
    if ((n - i - 1) % 3 == 0 && i != n - 1) out += ',';
  }
  return value < 0 ? "-" + out : out;
}

}  // namespace accel
