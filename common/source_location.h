#ifndef ACCEL_COMMON_SOURCE_LOCATION_H_
#define ACCEL_COMMON_SOURCE_LOCATION_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace accel {

// A position in a source file. Both fields are 1-based, as compilers print them; 0 means
// "unknown" (for example a value that came from a command-line override or a default).
struct SourceLocation {
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

// The 1-based line:column of byte `offset` in `text` (columns count bytes; an offset past the end
// is the end).
inline SourceLocation LocationOfByte(std::string_view text, size_t offset) {
  SourceLocation location{1, 1};
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++location.line;
      location.column = 1;
    } else {
      ++location.column;
    }
  }
  return location;
}

// "file:line:column" as compilers print a position, or just "file" when `location` is unknown.
inline std::string FileLocationText(const std::string& file, SourceLocation location) {
  if (!location.known()) return file;
  return file + ":" + std::to_string(location.line) + ":" + std::to_string(location.column);
}

}  // namespace accel

#endif  // ACCEL_COMMON_SOURCE_LOCATION_H_
