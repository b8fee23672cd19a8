// Text from untrusted input (a spec's keys and values, a config.json) made safe to print on a
// terminal. Terminals act on control characters: ESC starts escape sequences that move the
// cursor and erase lines, CR returns to the start of the line, and bidi overrides reorder what
// follows; a hostile spec quoting them in an error message could erase the error and print a
// fake "checked 1 file: 1 valid". Every diagnostic renderer (common/diagnostics.h) passes its
// text through here.
#ifndef ACCEL_COMMON_TERMINAL_TEXT_H_
#define ACCEL_COMMON_TERMINAL_TEXT_H_

#include <string>
#include <string_view>

namespace accel {

// Whether a terminal may act on code point `c` instead of showing it: C0 controls (U+0000 to
// U+001F) except TAB, DEL (U+007F), C1 controls (U+0080 to U+009F; U+009B is an 8-bit CSI),
// the bidirectional controls (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069:
// the "Trojan Source" characters, CVE-2021-42574) and the line and paragraph separators
// U+2028 and U+2029. TAB is kept: it only moves the cursor right, and source-line quotes need it
// to keep the caret aligned.
bool IsTerminalControl(char32_t c);

// `text` with every IsTerminalControl character written as a C-style escape: LF, CR as `\n`,
// `\r`; other C0 controls and DEL as `\xHH` (ESC is `\x1b`, BEL `\x07`); C1, bidi and separator
// characters as `\uHHHH` (U+202E is `\u202e`). Bytes that are not part of a whole UTF-8
// character are written `\xHH` too (a lone 0x9B byte is CSI to a terminal that reads Latin-1).
// Everything else, backslashes included, is copied unchanged.
std::string EscapeTerminalControls(std::string_view text);

// The same for multi-line text a command prints as its result (`accel plan`'s summary, `accel
// estimate-memory`), which quotes a spec's paths and names: line feeds are kept, everything else
// EscapeTerminalControls escapes is escaped.
std::string EscapeTerminalControlsKeepingLines(std::string_view text);

}  // namespace accel

#endif  // ACCEL_COMMON_TERMINAL_TEXT_H_
