// Byte-level tokenizer: every byte of the UTF-8 text is one token (vocabulary 256). No merges, no
// special tokens, so decoding is exact for any input.
#ifndef ACCEL_DATA_BYTE_TOKENIZER_H_
#define ACCEL_DATA_BYTE_TOKENIZER_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace accel::exec {

// Maps bytes to token ids 0..255 and back.
class ByteTokenizer {
 public:
  // Number of distinct tokens.
  static constexpr int64_t kVocabSize = 256;

  // One token per byte of text, in order: token = static_cast<uint8_t>(byte).
  static std::vector<uint32_t> Encode(std::string_view text);

  // Inverse of Encode. Tokens >= 256 are not bytes and decode to U+FFFD's UTF-8 encoding.
  static std::string Decode(std::span<const uint32_t> tokens);
};

}  // namespace accel::exec

#endif  // ACCEL_DATA_BYTE_TOKENIZER_H_
