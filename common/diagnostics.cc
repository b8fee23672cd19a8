#include "common/diagnostics.h"

#include <nlohmann/json.hpp>

#include "common/terminal_text.h"
#include "common/utf8.h"

namespace accel {

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "error";
}

Diagnostic& Diagnostic::Note(std::string note_file, SourceLocation note_location,
                             std::string note_message) {
  notes.push_back({std::move(note_file), note_location, std::move(note_message)});
  return *this;
}

Diagnostic& Diagnostic::Note(std::string note_message) {
  notes.push_back({"", {}, std::move(note_message)});
  return *this;
}

void SourceManager::Add(const std::string& file, std::string text) {
  Entry entry;
  entry.text = std::move(text);
  entry.line_starts.push_back(0);
  for (size_t i = 0; i < entry.text.size(); ++i) {
    if (entry.text[i] == '\n') entry.line_starts.push_back(i + 1);
  }
  files_[file] = std::move(entry);
}

std::string_view SourceManager::Line(const std::string& file, int line) const {
  auto it = files_.find(file);
  if (it == files_.end() || line < 1) return {};
  const Entry& entry = it->second;
  if (static_cast<size_t>(line) > entry.line_starts.size()) return {};
  size_t begin = entry.line_starts[line - 1];
  if (begin >= entry.text.size()) return {};
  size_t end = entry.text.find('\n', begin);
  if (end == std::string::npos) end = entry.text.size();
  std::string_view view(entry.text.data() + begin, end - begin);
  if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
  return view;
}

Diagnostic& DiagnosticSink::Add(Diagnostic diagnostic) {
  if (diagnostic.severity == Severity::kError) ++error_count_;
  if (diagnostic.severity == Severity::kWarning) ++warning_count_;
  diagnostics_.push_back(std::move(diagnostic));
  return diagnostics_.back();
}

void DiagnosticSink::PromoteWarningsToErrors() {
  for (Diagnostic& d : diagnostics_) {
    if (d.severity != Severity::kWarning) continue;
    d.severity = Severity::kError;
    --warning_count_;
    ++error_count_;
  }
}

namespace {

Diagnostic MakeDiagnostic(Severity severity, std::string code, std::string file,
                          SourceLocation location, std::string field, std::string message) {
  Diagnostic d;
  d.severity = severity;
  d.code = std::move(code);
  d.file = std::move(file);
  d.location = location;
  d.field = std::move(field);
  d.message = std::move(message);
  return d;
}

}  // namespace

Diagnostic& DiagnosticSink::Error(std::string code, std::string file, SourceLocation location,
                                  std::string field, std::string message) {
  return Add(MakeDiagnostic(Severity::kError, std::move(code), std::move(file), location,
                            std::move(field), std::move(message)));
}

Diagnostic& DiagnosticSink::Warning(std::string code, std::string file, SourceLocation location,
                                    std::string field, std::string message) {
  return Add(MakeDiagnostic(Severity::kWarning, std::move(code), std::move(file), location,
                            std::move(field), std::move(message)));
}

void DiagnosticSink::Append(const DiagnosticSink& other) {
  for (const Diagnostic& d : other.diagnostics_) Add(d);
}

namespace {

// Quotes the source line and puts a caret under `column` (a byte column). Control characters
// in the line are escaped (EscapeTerminalControls) and the caret moves right by the width of
// each escape before it; tabs are copied into the caret line so the caret stays under the right
// character whatever the terminal's tab width.
void AppendSnippet(std::string& out, std::string_view line, int column) {
  std::string quoted = " ";
  std::string caret = " ";
  const size_t before = column > 1 ? static_cast<size_t>(column - 1) : 0;
  for (size_t i = 0; i < line.size();) {
    const size_t length = Utf8SequenceAt(line, i).length;
    const std::string_view unit = line.substr(i, length);
    const std::string shown = EscapeTerminalControls(unit);
    quoted += shown;
    if (i < before && shown != unit) caret.append(shown.size(), ' ');
    for (size_t k = i; i < before && shown == unit && k < i + length && k < before; ++k) {
      caret += line[k] == '\t' ? '\t' : ' ';
    }
    i += length;
  }
  if (before > line.size()) caret.append(before - line.size(), ' ');
  out += quoted + "\n" + caret + "^\n";
}

// Every piece of text a renderer copies from a diagnostic goes through here.
std::string TerminalSafe(std::string_view text) { return EscapeTerminalControls(text); }

}  // namespace

std::string RenderText(const std::vector<Diagnostic>& diagnostics, const SourceManager& sources) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    std::string where = TerminalSafe(FileLocationText(d.file, d.location));
    if (!where.empty()) out += where + ": ";
    out += SeverityName(d.severity);
    if (!d.code.empty()) out += "[" + TerminalSafe(d.code) + "]";
    out += ": " + TerminalSafe(d.message);
    // Like compilers' "[-Wflag]", a planner diagnostic names the pass that found it.
    if (!d.origin.empty()) out += " [" + TerminalSafe(d.origin) + "]";
    out += "\n";
    if (d.location.known()) {
      std::string_view line = sources.Line(d.file, d.location.line);
      if (!line.empty()) AppendSnippet(out, line, d.location.column);
    }
    for (const DiagnosticNote& note : d.notes) {
      std::string note_where = TerminalSafe(FileLocationText(note.file, note.location));
      if (!note_where.empty()) out += note_where + ": ";
      out += "note: " + TerminalSafe(note.message) + "\n";
    }
  }
  return out;
}

std::string RenderJson(const std::vector<Diagnostic>& diagnostics) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const Diagnostic& d : diagnostics) {
    nlohmann::ordered_json j;
    j["severity"] = SeverityName(d.severity);
    j["code"] = d.code;
    j["file"] = d.file;
    j["line"] = d.location.line;
    j["column"] = d.location.column;
    j["field"] = d.field;
    j["message"] = d.message;
    j["origin"] = d.origin;
    nlohmann::ordered_json notes = nlohmann::ordered_json::array();
    for (const DiagnosticNote& note : d.notes) {
      notes.push_back({{"file", note.file},
                       {"line", note.location.line},
                       {"column", note.location.column},
                       {"message", note.message}});
    }
    j["notes"] = std::move(notes);
    array.push_back(std::move(j));
  }
  // ensure_ascii writes every non-ASCII character as \uXXXX, so C1 and bidi controls reach a
  // terminal that shows the JSON as text, not as the characters (JSON already escapes C0 and,
  // with ensure_ascii, DEL): the data stays exact for a JSON reader.
  return array.dump(2, ' ', /*ensure_ascii=*/true) + "\n";
}

namespace {

// GitHub workflow-command escaping: data escapes %, CR, LF; properties also escape : and ,.
std::string EscapeData(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string EscapeProperty(std::string_view s) {
  std::string out;
  for (char c : EscapeData(s)) {
    if (c == ':') out += "%3A";
    else if (c == ',') out += "%2C";
    else out += c;
  }
  return out;
}

}  // namespace

std::string RenderGithub(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    const char* command = d.severity == Severity::kError     ? "error"
                          : d.severity == Severity::kWarning ? "warning"
                                                             : "notice";
    out += "::";
    out += command;
    std::vector<std::string> props;
    if (!d.file.empty()) props.push_back("file=" + EscapeProperty(TerminalSafe(d.file)));
    if (d.location.known()) {
      props.push_back("line=" + std::to_string(d.location.line));
      props.push_back("col=" + std::to_string(d.location.column));
    }
    if (!d.code.empty()) props.push_back("title=" + EscapeProperty(TerminalSafe(d.code)));
    for (size_t i = 0; i < props.size(); ++i) out += (i == 0 ? " " : ",") + props[i];
    // Escaped before the notes are joined: their newlines are GitHub's, a CR or LF inside a
    // message is the spec's and shows as `\r` or `\n`.
    std::string message = TerminalSafe(d.message);
    for (const DiagnosticNote& note : d.notes) {
      message += "\n";
      std::string where = TerminalSafe(FileLocationText(note.file, note.location));
      if (!where.empty()) message += where + ": ";
      message += "note: " + TerminalSafe(note.message);
    }
    out += "::" + EscapeData(message) + "\n";
  }
  return out;
}

}  // namespace accel
