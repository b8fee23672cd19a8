// Naming the non-ASCII character hidden in an identifier. A key spelled with a Cyrillic "а"
// (`num_lаyers`) looks like the real key; "did you mean 'num_layers'?" alone leaves the user
// staring at two identical-looking words (#42), so messages point at the character by name.
#ifndef ACCEL_COMMON_NON_ASCII_H_
#define ACCEL_COMMON_NON_ASCII_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace accel {

// The first whole non-ASCII UTF-8 character of a text and its byte offset.
struct NonAsciiCharacter {
  char32_t code_point = 0;
  size_t offset = 0;
};

// The first whole non-ASCII character of `text` (bytes that are not UTF-8 are skipped), or
// nullopt when there is none.
std::optional<NonAsciiCharacter> FirstNonAscii(std::string_view text);

// `text` with each non-ASCII character (and each byte that is not UTF-8) replaced by one '?', for
// "did you mean" distances: a look-alike letter then counts as one substitution, not two or three
// (its UTF-8 bytes), so `gрt2` with a Cyrillic "р" still finds `gpt2`.
std::string AsciiSkeleton(std::string_view text);

// "U+0430 CYRILLIC SMALL LETTER A": the code point and its Unicode name (ICU's u_charName);
// just "U+0430" when ICU has no name for it.
std::string CodePointName(char32_t code_point);

}  // namespace accel

#endif  // ACCEL_COMMON_NON_ASCII_H_
