#include "tokenizers/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "common/utf8.h"
#include "absl/strings/str_cat.h"

namespace accel::tok {

struct Regex::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Code() { pcre2_code_free(code); }
};

namespace {

// Per-thread match data and JIT stack, reused across calls (PCRE2 objects are not thread-safe).
struct MatchScratch {
  pcre2_match_data* data = pcre2_match_data_create(4, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(64 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  MatchScratch() {
    if (stack != nullptr && context != nullptr) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~MatchScratch() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
};

MatchScratch& Scratch() {
  thread_local MatchScratch scratch;
  return scratch;
}

}  // namespace

absl::StatusOr<Regex> Regex::Compile(std::string_view pattern, bool literal) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  // PCRE2_LITERAL admits no PCRE2_UCP (nor needs it).
  uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP);
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options,
                                   &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return absl::InvalidArgumentError(
        absl::StrCat("invalid regular expression at offset ", offset, ": ", reinterpret_cast<char*>(message)));
  }
  auto compiled = std::make_shared<Code>();
  compiled->code = code;
  compiled->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  return Regex(std::move(compiled));
}

void Regex::ForEachMatch(std::string_view text, const std::function<void(size_t, size_t)>& on_match) const {
  MatchScratch& scratch = Scratch();
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start < text.size()) {
    int rc = code_->jit ? pcre2_jit_match(code_->code, subject, text.size(), start, 0, scratch.data, scratch.context)
                        : -1;
    if (!code_->jit || (rc < 0 && rc != PCRE2_ERROR_NOMATCH)) {
      // Interpreter: used without JIT, and as a second try when the JIT stack ran out.
      rc = pcre2_match(code_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, scratch.data, nullptr);
    }
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) {
      on_match(start, text.size());
      return;
    }
    PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(scratch.data);
    size_t begin = ovector[0], end = ovector[1];
    if (end > begin) {
      on_match(begin, end);
      start = end;
    } else {
      start = begin + Utf8LengthOfLead(static_cast<unsigned char>(text[begin]));
    }
  }
}

}  // namespace accel::tok
