#include "tokenizers/byte_level.h"


namespace accel::tok {
namespace {

std::string Utf8(char32_t c) {
  std::string out;
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
  return out;
}

bool StandsForItself(int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

// The byte each code point of the alphabet stands for (-1 for others); the alphabet ends at U+0143.
const std::array<int, 0x144>& InverseAlphabet() {
  static const auto* inverse = [] {
    auto* table = new std::array<int, 0x144>;
    table->fill(-1);
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) (*table)[StandsForItself(b) ? static_cast<char32_t>(b) : next++] = b;
    return table;
  }();
  return *inverse;
}

}  // namespace

const std::array<std::string, 256>& ByteLevelAlphabet() {
  static const auto* alphabet = [] {
    auto* table = new std::array<std::string, 256>;
    char32_t next = 0x100;
    for (int b = 0; b < 256; ++b) (*table)[b] = Utf8(StandsForItself(b) ? static_cast<char32_t>(b) : next++);
    return table;
  }();
  return *alphabet;
}

std::optional<std::string> ByteLevelDecode(std::string_view text) {
  const auto& inverse = InverseAlphabet();
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    // Every character of the alphabet is 1 or 2 bytes of UTF-8.
    unsigned char lead = static_cast<unsigned char>(text[i]);
    char32_t c = 0;
    if (lead < 0x80) {
      c = lead;
      i += 1;
    } else if ((lead & 0xE0) == 0xC0 && i + 1 < text.size() && (static_cast<unsigned char>(text[i + 1]) & 0xC0) == 0x80) {
      c = (char32_t{lead & 0x1Fu} << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3F);
      i += 2;
    } else {
      return std::nullopt;
    }
    if (c >= inverse.size() || inverse[c] < 0) return std::nullopt;
    out.push_back(static_cast<char>(inverse[c]));
  }
  return out;
}

}  // namespace accel::tok
