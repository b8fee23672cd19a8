#include "common/non_ascii.h"

#include <unicode/uchar.h>

#include <cstdio>

#include "common/utf8.h"

namespace accel {

std::optional<NonAsciiCharacter> FirstNonAscii(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Utf8Sequence sequence = Utf8SequenceAt(text, i);
    if (sequence.whole && sequence.length > 1) {
      return NonAsciiCharacter{Utf8CodePoint(text.substr(i, sequence.length)), i};
    }
    i += sequence.length;
  }
  return std::nullopt;
}

std::string AsciiSkeleton(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Utf8Sequence sequence = Utf8SequenceAt(text, i);
    out += sequence.length == 1 && sequence.whole ? text[i] : '?';
    i += sequence.length;
  }
  return out;
}

std::string CodePointName(char32_t code_point) {
  char text[16];
  std::snprintf(text, sizeof text, "U+%04X", static_cast<unsigned>(code_point));
  char name[128];
  UErrorCode status = U_ZERO_ERROR;
  const int32_t length = u_charName(static_cast<UChar32>(code_point), U_UNICODE_CHAR_NAME, name,
                                    sizeof name, &status);
  if (U_FAILURE(status) || length <= 0 || length >= static_cast<int32_t>(sizeof name)) return text;
  return std::string(text) + " " + std::string(name, static_cast<size_t>(length));
}

}  // namespace accel
