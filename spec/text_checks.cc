#include "spec/text_checks.h"

#include <cstdio>

#include "common/diag_codes.h"
#include "common/utf8.h"

namespace accel::spec {
namespace {

// Length of the whole UTF-8 character starting at `i`, or 0 when the bytes there are ill-formed.
size_t Utf8SequenceLength(std::string_view text, size_t i) {
  Utf8Sequence sequence = Utf8SequenceAt(text, i);
  return sequence.whole ? sequence.length : 0;
}

bool IsControl(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7F; }

std::string Hex(unsigned char c) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "0x%02x", c);
  return buffer;
}

}  // namespace

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
      sink.Error(codes::kNotText, file, LocationOfByte(text, i), "",
                 "file contains a NUL byte at offset " + std::to_string(i) +
                     "; it looks like binary data, not a YAML spec");
      return false;
    }
    if (IsControl(c)) {
      sink.Error(codes::kNotText, file, LocationOfByte(text, i), "",
                 "file contains control byte " + Hex(c) + " at offset " + std::to_string(i) +
                     "; spec files must be UTF-8 text");
      return false;
    }
    size_t length = Utf8SequenceLength(text, i);
    if (length == 0) {
      sink.Error(codes::kNotText, file, LocationOfByte(text, i), "",
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
