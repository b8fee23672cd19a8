// How a Split pre-tokenizer turns pattern matches into pieces (Hugging Face tokenizers
// SplitDelimiterBehavior, normalizer.rs split()).
#ifndef ACCEL_TOKENIZERS_SPLIT_BEHAVIOR_H_
#define ACCEL_TOKENIZERS_SPLIT_BEHAVIOR_H_

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace accel::tok {

enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

// "Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"; nullopt otherwise.
std::optional<SplitBehavior> ParseSplitBehavior(std::string_view name);

// A run of text [begin, end) that the pattern matched (is_match) or that lies between matches.
struct Segment {
  size_t begin;
  size_t end;
  bool is_match;
};

// The pieces [begin, end) that `segments` (covering the text in order, none empty) become.
std::vector<Segment> ApplySplitBehavior(const std::vector<Segment>& segments, SplitBehavior behavior);

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_SPLIT_BEHAVIOR_H_
