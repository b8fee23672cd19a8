// The byte-level alphabet of GPT-2 (and every ByteLevel tokenizer since): each of the 256 byte
// values is shown as one printable Unicode character, so byte strings can be BPE vocabulary
// entries (OpenAI gpt-2 encoder.py bytes_to_unicode; Hugging Face tokenizers byte_level.rs).
#ifndef ACCEL_TOKENIZERS_BYTE_LEVEL_H_
#define ACCEL_TOKENIZERS_BYTE_LEVEL_H_

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace accel::tok {

// The UTF-8 encoding of the character that stands for each byte: printable Latin-1 bytes
// ('!'..'~', '¡'..'¬', '®'..'ÿ') stand for themselves, the others map to U+0100 onwards in order.
const std::array<std::string, 256>& ByteLevelAlphabet();

// The bytes a byte-level string stands for ("Ġhello" -> " hello"); nullopt when it contains a
// character outside the alphabet (such a vocabulary entry can never be produced from bytes).
std::optional<std::string> ByteLevelDecode(std::string_view text);

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_BYTE_LEVEL_H_
