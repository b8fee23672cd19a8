// Regular expressions of tokenizer.json pre-tokenizers, run by PCRE2 in UTF mode with Unicode
// properties (\p{L}, \p{N}, \s as Unicode space) and look-ahead, JIT-compiled when available.
#ifndef ACCEL_TOKENIZERS_REGEX_H_
#define ACCEL_TOKENIZERS_REGEX_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace accel::tok {

// A compiled pattern, shareable between threads (each match call has its own match data).
class Regex {
 public:
  // Compiles `pattern` (PCRE2_UTF | PCRE2_UCP; PCRE2_UTF | PCRE2_LITERAL when `literal`). Errors:
  // InvalidArgument "invalid regular expression at offset N: MESSAGE" with PCRE2's message.
  static absl::StatusOr<Regex> Compile(std::string_view pattern, bool literal = false);

  // Calls on_match(begin, end) for every non-empty match, left to right, as a global search
  // (after a match the search resumes at its end; an empty match advances one character).
  // `text` must be valid UTF-8. Should PCRE2 give up (its JIT stack or match limits), the rest of
  // the text is reported as one match, so nothing is lost.
  void ForEachMatch(std::string_view text, const std::function<void(size_t, size_t)>& on_match) const;

 private:
  struct Code;
  explicit Regex(std::shared_ptr<const Code> code) : code_(std::move(code)) {}
  std::shared_ptr<const Code> code_;
};

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_REGEX_H_
