#include "spec/overrides.h"

namespace accel::spec {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace

std::optional<Override> ParseOverride(std::string_view argument) {
  size_t equals = argument.find('=');
  if (equals == std::string_view::npos) return std::nullopt;
  std::string_view key = Trim(argument.substr(0, equals));
  Override result;
  result.value = std::string(Trim(argument.substr(equals + 1)));
  size_t bracket = key.find('[');
  if (bracket != std::string_view::npos) {
    std::string_view index = key.substr(bracket);
    key = key.substr(0, bracket);
    if (index.size() < 3 || index.back() != ']') return std::nullopt;
    std::string_view digits = index.substr(1, index.size() - 2);
    const bool negative = digits.front() == '-';
    if (negative) digits.remove_prefix(1);
    if (digits.empty()) return std::nullopt;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
    }
    if (negative || digits.size() > 4) {
      result.bad_index = std::string(index.substr(1, index.size() - 2));
    } else {
      result.index = 0;
      for (char c : digits) result.index = result.index * 10 + (c - '0');
    }
  }
  if (key.empty()) return std::nullopt;
  bool segment_start = true;
  for (char c : key) {
    if (c == '.') {
      if (segment_start) return std::nullopt;  // ".a", "a..b"
      segment_start = true;
      continue;
    }
    if (!IsNameChar(c)) return std::nullopt;
    segment_start = false;
  }
  if (segment_start) return std::nullopt;  // "a."
  result.path = std::string(key);
  return result;
}

}  // namespace accel::spec
