#ifndef ACCEL_COMMON_SPELLCHECK_H_
#define ACCEL_COMMON_SPELLCHECK_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace accel {

// Damerau-Levenshtein (optimal string alignment) distance between `a` and `b`, case-sensitive:
// insertions, deletions, substitutions and adjacent transpositions each cost 1.
int EditDistance(std::string_view a, std::string_view b);

// The candidate closest to `word` for a "did you mean" hint, or nullopt when none is close:
// accepted when the distance is at most max(1, len(word)/3), or when one is a case-insensitive
// match. Ties go to the earliest candidate, so results are deterministic.
std::optional<std::string> ClosestMatch(std::string_view word,
                                        const std::vector<std::string>& candidates);

}  // namespace accel

#endif  // ACCEL_COMMON_SPELLCHECK_H_
