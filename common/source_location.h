#ifndef ACCEL_COMMON_SOURCE_LOCATION_H_
#define ACCEL_COMMON_SOURCE_LOCATION_H_

namespace accel {

// A position in a source file. Both fields are 1-based, as compilers print them; 0 means
// "unknown" (for example a value that came from a command-line override or a default).
struct SourceLocation {
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
  friend bool operator==(const SourceLocation&, const SourceLocation&) = default;
};

}  // namespace accel

#endif  // ACCEL_COMMON_SOURCE_LOCATION_H_
