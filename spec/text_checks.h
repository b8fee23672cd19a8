#ifndef ACCEL_SPEC_TEXT_CHECKS_H_
#define ACCEL_SPEC_TEXT_CHECKS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostics.h"
#include "common/source_location.h"

// Checks on the raw bytes of a spec file, run before YAML parsing so that hostile or accidental
// input (a binary, a huge file, a file written with tabs) gets a clear error.
namespace accel::spec {

// Largest spec file accepted, in bytes (1 MiB). Real job files are a few KiB.
inline constexpr size_t kMaxSpecFileBytes = size_t{1} << 20;

// Adds E0002 when `text` is larger than kMaxSpecFileBytes, or E0003 (at the first offending
// byte) when it holds a NUL or other control byte (except tab, CR, LF) or is not valid UTF-8
// (overlong forms, surrogates and code points above U+10FFFF are invalid). Reports at most one
// error. Returns true when the text is acceptable.
bool CheckSpecText(std::string_view text, const std::string& file, DiagnosticSink& sink);

// A copy of `text` that is safe to quote in a terminal: control bytes and bytes that are not
// part of valid UTF-8 become '?', one for one, so columns stay the same.
std::string SanitizeForDisplay(std::string_view text);

// Locations of the first tab on every line whose indentation contains a tab and that has
// content other than a comment. YAML forbids tabs in indentation; yaml-cpp's own message for
// them ("illegal map value") does not say so.
std::vector<SourceLocation> FindTabIndentation(std::string_view text);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_TEXT_CHECKS_H_
