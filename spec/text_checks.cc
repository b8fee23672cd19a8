#include "spec/text_checks.h"

#include <cstdio>

#include "common/diag_codes.h"

namespace accel::spec {
namespace {

// Length of the valid UTF-8 sequence starting at `i`, or 0 when the bytes there are invalid.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    length = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    length = 3;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    length = 4;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return length;
}

bool IsControl(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F; }

std::string Hex(unsigned char c) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "0x%02x", c);
  return buffer;
}

}  // namespace

SourceLocation LocationOfOffset(std::string_view text, size_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

bool CheckSpecText(std::string_view text, const std::string& file, DiagnosticSink& sink) {
  if (text.size() > kMaxSpecFileBytes) {
    sink.Error(codes::kFileTooLarge, file, {}, "",
               "file is " + std::to_string(text.size()) +
                   " bytes; spec files are limited to 1 MiB (1048576 bytes)");
    return false;
  }
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0) {
      sink.Error(codes::kNotText, file, LocationOfOffset(text, i), "",
                 "file contains a NUL byte at offset " + std::to_string(i) +
                     "; it looks like binary data, not a YAML spec");
      return false;
    }
    if (IsControl(c)) {
      sink.Error(codes::kNotText, file, LocationOfOffset(text, i), "",
                 "file contains control byte " + Hex(c) + " at offset " + std::to_string(i) +
                     "; spec files must be UTF-8 text");
      return false;
    }
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      sink.Error(codes::kNotText, file, LocationOfOffset(text, i), "",
                 "invalid UTF-8 byte " + Hex(c) + " at offset " + std::to_string(i) +
                     "; spec files must be UTF-8 text");
      return false;
    }
    i += length;
  }
  return true;
}

std::string SanitizeForDisplay(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0 || IsControl(c)) {
      out += '?';
      ++i;
      continue;
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

std::vector<SourceLocation> FindTabIndentation(std::string_view text) {
  std::vector<SourceLocation> found;
  int line = 1;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view row = text.substr(start, end - start);
    size_t i = 0;
    size_t first_tab = std::string_view::npos;
    while (i < row.size() && (row[i] == ' ' || row[i] == '\t')) {
      if (row[i] == '\t' && first_tab == std::string_view::npos) first_tab = i;
      ++i;
    }
    bool has_content = i < row.size() && row[i] != '#' && row[i] != '\r';
    if (first_tab != std::string_view::npos && has_content) {
      found.push_back({line, static_cast<int>(first_tab) + 1});
    }
    if (end == text.size()) break;
    start = end + 1;
    ++line;
  }
  return found;
}

}  // namespace accel::spec
