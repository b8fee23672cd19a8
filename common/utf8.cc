#include "common/utf8.h"

namespace accel {
namespace {

// text with ill-formed bytes replaced by U+FFFD: one per byte, or one per maximal subpart.
std::string Replace(std::string_view text, bool per_subpart) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    Utf8Sequence sequence = Utf8SequenceAt(text, i);
    if (sequence.whole) {
      out.append(text.substr(i, sequence.length));
    } else {
      out += "\xEF\xBF\xBD";
      if (!per_subpart) sequence.length = 1;
    }
    i += sequence.length;
  }
  return out;
}

}  // namespace

Utf8Sequence Utf8SequenceAt(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {1, true};
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the first continuation byte (Table 3-7)
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 3;
    if (lead == 0xE0) lo = 0xA0;  // overlong
    if (lead == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 4;
    if (lead == 0xF0) lo = 0x90;  // overlong
    if (lead == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return {1, false};
  }
  size_t n = 1;
  if (byte(1) >= lo && byte(1) <= hi) {
    n = 2;
    while (n < need && (byte(n) & 0xC0) == 0x80) ++n;
  }
  return {n, n == need};
}

char32_t Utf8CodePoint(std::string_view character) {
  const auto byte = [&](size_t i) {
    return static_cast<char32_t>(static_cast<unsigned char>(character[i]));
  };
  switch (character.size()) {
    case 1: return byte(0);
    case 2: return ((byte(0) & 0x1F) << 6) | (byte(1) & 0x3F);
    case 3: return ((byte(0) & 0x0F) << 12) | ((byte(1) & 0x3F) << 6) | (byte(2) & 0x3F);
    default:
      return ((byte(0) & 0x07) << 18) | ((byte(1) & 0x3F) << 12) | ((byte(2) & 0x3F) << 6) |
             (byte(3) & 0x3F);
  }
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    Utf8Sequence sequence = Utf8SequenceAt(text, i);
    if (!sequence.whole) return false;
    i += sequence.length;
  }
  return true;
}

std::string ReplaceInvalidUtf8(std::string_view text) { return Replace(text, false); }

std::string DecodeUtf8Lossy(std::string_view text) { return Replace(text, true); }

std::string CutUtf8(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "...";
}

}  // namespace accel
