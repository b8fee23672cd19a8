// UTF-8 well-formedness, the one definition every reader of text uses (spec files, tokenizers,
// training text). Rules: RFC 3629 and Unicode 15 §3.9 Table 3-7 (no overlong forms, no UTF-16
// surrogates, nothing above U+10FFFF).
#ifndef ACCEL_COMMON_UTF8_H_
#define ACCEL_COMMON_UTF8_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace accel {

// The bytes at text[i], i < text.size(): `length` bytes form one whole character when `whole`;
// otherwise `length` (≥ 1) is the maximal subpart of an ill-formed sequence (a lead byte and the
// continuation bytes that fit it: Unicode 15 §3.9, "U+FFFD substitution of maximal subparts").
struct Utf8Sequence {
  size_t length = 1;
  bool whole = true;
};
Utf8Sequence Utf8SequenceAt(std::string_view text, size_t i);

// The length of the UTF-8 sequence a lead byte starts: 1 for ASCII and for a stray continuation
// byte, 2, 3 or 4 otherwise (it does not check the bytes that follow; Utf8SequenceAt does).
inline size_t Utf8LengthOfLead(unsigned char b) { return b < 0xC0 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4; }

// The code point of `character`, one whole UTF-8 character (Utf8SequenceAt says `whole`).
char32_t Utf8CodePoint(std::string_view character);

// True when every byte of text belongs to a whole character.
bool IsValidUtf8(std::string_view text);

// text with every byte that is not part of a whole character replaced by U+FFFD ("\xEF\xBF\xBD"),
// one per byte (as SentencePiece and tokenizers' byte-level decoding do on input).
std::string ReplaceInvalidUtf8(std::string_view text);

// text with each maximal subpart of an ill-formed sequence replaced by one U+FFFD, as Rust's
// String::from_utf8_lossy and the WHATWG TextDecoder do.
std::string DecodeUtf8Lossy(std::string_view text);

// `text` (valid UTF-8) cut to at most `max_bytes` at a character boundary, with "..." for the rest,
// for quoting untrusted values in messages: a cut inside a character would leave a message that
// is not UTF-8, which `--format json` output cannot carry.
std::string CutUtf8(std::string_view text, size_t max_bytes);

}  // namespace accel

#endif  // ACCEL_COMMON_UTF8_H_
