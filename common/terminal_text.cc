#include "common/terminal_text.h"

#include <cstdio>

#include "common/utf8.h"

namespace accel {
namespace {

// `\xHH` for one byte: an ASCII control, or a byte of an ill-formed UTF-8 sequence.
std::string ByteEscape(unsigned char b) {
  char buffer[8];
  std::snprintf(buffer, sizeof buffer, "\\x%02x", static_cast<unsigned>(b));
  return buffer;
}

// The escape of a control character (IsTerminalControl).
std::string TerminalEscape(char32_t c) {
  if (c == '\n') return "\\n";
  if (c == '\r') return "\\r";
  if (c < 0x80) return ByteEscape(static_cast<unsigned char>(c));
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
  return buffer;
}

}  // namespace

bool IsTerminalControl(char32_t c) {
  if (c == '\t') return false;
  if (c < 0x20 || (c >= 0x7F && c <= 0x9F)) return true;
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069) || c == 0x2028 || c == 0x2029;
}

namespace {

std::string EscapeTerminalText(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const Utf8Sequence sequence = Utf8SequenceAt(text, i);
    if (!sequence.whole) {
      for (size_t k = 0; k < sequence.length; ++k) {
        out += ByteEscape(static_cast<unsigned char>(text[i + k]));
      }
    } else {
      const std::string_view character = text.substr(i, sequence.length);
      const char32_t c = Utf8CodePoint(character);
      if (IsTerminalControl(c) && !(keep_newlines && c == '\n')) out += TerminalEscape(c);
      else out.append(character);
    }
    i += sequence.length;
  }
  return out;
}

}  // namespace

std::string EscapeTerminalControls(std::string_view text) {
  return EscapeTerminalText(text, false);
}

std::string EscapeTerminalControlsKeepingLines(std::string_view text) {
  return EscapeTerminalText(text, true);
}

}  // namespace accel
