// tokenizer.json "pre_tokenizer": cuts text into pieces that BPE encodes independently (Hugging
// Face tokenizers pre_tokenizers/). Supported types: Split (Regex or String pattern, every
// behavior, invert), ByteLevel (add_prefix_space, use_regex with GPT-2's pattern), Digits and
// Sequence. ByteLevel's byte-to-character mapping is not applied to the text: the BPE model keys
// its vocabulary by the bytes each entry stands for instead (same result, no copies).
#ifndef ACCEL_TOKENIZERS_PRE_TOKENIZER_H_
#define ACCEL_TOKENIZERS_PRE_TOKENIZER_H_

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/json_document.h"

namespace accel::tok {

// Pieces of text: views into the text being encoded or into strings the list owns (text a
// pre-tokenizer added, such as ByteLevel's prefix space).
struct Pieces {
  std::vector<std::string_view> views;
  std::deque<std::string> owned;
};

// One pre-tokenizer (or a Sequence of them); immutable, shared by threads.
class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;

  // Replaces every piece by the pieces it splits into, in order. Pieces are valid UTF-8.
  virtual void Apply(Pieces& pieces) const = 0;

  // True when a text that starts a line with an ASCII letter or digit right after '\n' splits
  // into the same pieces as its two halves, cut before that character. Claimed only for Split
  // patterns known to have this property (GPT-2's, Llama-3's, Qwen2/3's, digits; Isolated, not
  // inverted): an arbitrary pattern may match across the cut.
  virtual bool LineLocal() const = 0;

  // True when the pipeline contains ByteLevel (the model then works on bytes).
  virtual bool ByteLevel() const = 0;
};

// Builds the pre-tokenizer at `field`. Errors: InvalidArgument located at the field for an
// unsupported type, a missing or mistyped parameter, or a pattern PCRE2 rejects ("invalid
// regular expression at offset N: ...").
absl::StatusOr<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const JsonDocument& doc, const FieldPath& field);

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_PRE_TOKENIZER_H_
