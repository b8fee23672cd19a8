#include "common/spellcheck.h"

#include <algorithm>
#include <cctype>

namespace accel {

int EditDistance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

namespace {
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates) {
  if (word.size() > 256) return std::nullopt;  // keeps the O(n·m) table small on hostile input
  const std::string lower = Lower(word);
  for (const std::string& c : candidates) {
    if (Lower(c) == lower) return c;
  }
  const int limit = std::max<int>(1, static_cast<int>(word.size()) / 3);
  std::optional<std::string> best;
  int best_distance = limit + 1;
  for (const std::string& c : candidates) {
    // The distance is at least the difference in length: skip candidates that cannot win
    // (the unknown keys of a hostile file would otherwise cost a full table each).
    const size_t gap = c.size() > lower.size() ? c.size() - lower.size() : lower.size() - c.size();
    if (gap >= static_cast<size_t>(best_distance)) continue;
    int distance = EditDistance(lower, Lower(c));
    if (distance < best_distance) {
      best_distance = distance;
      best = c;
    }
  }
  return best;
}

}  // namespace accel
