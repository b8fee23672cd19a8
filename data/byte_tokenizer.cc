#include "data/byte_tokenizer.h"

namespace accel::exec {

std::vector<uint32_t> ByteTokenizer::Encode(std::string_view text) {
  std::vector<uint32_t> tokens;
  tokens.reserve(text.size());
  for (char c : text) tokens.push_back(static_cast<uint8_t>(c));
  return tokens;
}

std::string ByteTokenizer::Decode(std::span<const uint32_t> tokens) {
  std::string text;
  text.reserve(tokens.size());
  for (uint32_t t : tokens) {
    if (t < 256) {
      text.push_back(static_cast<char>(static_cast<uint8_t>(t)));
    } else {
      text.append("\xEF\xBF\xBD");
    }
  }
  return text;
}

}  // namespace accel::exec
