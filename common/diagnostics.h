#ifndef ACCEL_COMMON_DIAGNOSTICS_H_
#define ACCEL_COMMON_DIAGNOSTICS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/source_location.h"

namespace accel {

// How serious a diagnostic is. Only errors make `accel validate` exit 1.
enum class Severity { kError, kWarning, kNote };

// "error", "warning" or "note".
std::string_view SeverityName(Severity severity);

// A secondary location attached to a diagnostic ("num_heads set here"). `file` may be empty
// for a note without a location, which renders as a bare `note: message` line.
struct DiagnosticNote {
  std::string file;
  SourceLocation location;
  std::string message;
};

// One user-facing problem: a bad spec, an impossible plan, a job that does not fit.
// `code` is stable across releases (see common/diag_codes.h) and golden-tested.
struct Diagnostic {
  Severity severity = Severity::kError;
  std::string code;     // "E0203"; empty for plain notes
  std::string file;     // the path as the user gave it, or "--set key=value" for overrides
  SourceLocation location;
  std::string field;    // dotted spec path ("parallel.tensor"), empty when not about a field
  std::string message;  // one line, no trailing period
  std::string origin;   // what found it: "" for the loader, "schema", or a planner pass name
  std::vector<DiagnosticNote> notes;

  // Appends a note and returns *this, so callers can chain.
  Diagnostic& Note(std::string note_file, SourceLocation note_location, std::string note_message);
  Diagnostic& Note(std::string note_message);
};

// Keeps the text of every file diagnostics point into, so renderers can quote the source line.
class SourceManager {
 public:
  // Registers `text` as the contents of `file`; a second call for the same file replaces it.
  void Add(const std::string& file, std::string text);

  // The 1-based `line` of `file` without its newline, or empty when unknown.
  std::string_view Line(const std::string& file, int line) const;

 private:
  struct Entry {
    std::string text;
    std::vector<size_t> line_starts;  // byte offset of each line's first character
  };
  std::map<std::string, Entry> files_;
};

// Collects diagnostics in the order they were found; nothing stops at the first error.
class DiagnosticSink {
 public:
  // Adds a diagnostic and returns a reference to it (valid until the next Add) for notes.
  Diagnostic& Add(Diagnostic diagnostic);
  Diagnostic& Error(std::string code, std::string file, SourceLocation location,
                    std::string field, std::string message);
  Diagnostic& Warning(std::string code, std::string file, SourceLocation location,
                      std::string field, std::string message);

  // Appends every diagnostic of `other`.
  void Append(const DiagnosticSink& other);

  // Turns every warning into an error, keeping its W code (`--werror`): rendered as
  // "error[W0401]: ...", and counted by error_count() instead of warning_count().
  void PromoteWarningsToErrors();

  bool HasErrors() const { return error_count_ > 0; }
  int error_count() const { return error_count_; }
  int warning_count() const { return warning_count_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  bool empty() const { return diagnostics_.empty(); }

 private:
  std::vector<Diagnostic> diagnostics_;
  int error_count_ = 0;
  int warning_count_ = 0;
};

// Renders like a compiler, with the pass that found it (Diagnostic::origin) in brackets:
//   job.yaml:14:11: error[E0403]: tensor degree 3 does not divide num_heads 16 [resolve-auto]
//      tensor: 3
//              ^
//   job.yaml:5:14: note: num_heads set here
// The source line is quoted (prefixed by one space) only when `sources` has it.
std::string RenderText(const std::vector<Diagnostic>& diagnostics, const SourceManager& sources);

// One JSON array of objects {severity, code, file, line, column, field, message, origin, notes}.
std::string RenderJson(const std::vector<Diagnostic>& diagnostics);

// GitHub Actions workflow commands: `::error file=F,line=L,col=C,title=CODE::message`.
// Notes are folded into the message after "%0A" (an encoded newline), as GitHub expects.
std::string RenderGithub(const std::vector<Diagnostic>& diagnostics);

}  // namespace accel

#endif  // ACCEL_COMMON_DIAGNOSTICS_H_
