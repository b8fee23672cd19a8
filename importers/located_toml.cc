#include "importers/located_toml.h"

#include <algorithm>
#include <sstream>

// tomlplusplus 3.3.0 (Debian 12) has internal checks that hostile input can fail: an assert (an
// abort in debug builds) and, with NDEBUG, __builtin_assume / __builtin_unreachable, which are
// undefined behaviour (found by fuzz/torchtitan_import_fuzzer). FindUnparseable below rejects
// the inputs known to reach them; as a second line, its preprocessor header is included first so
// the three macros throw instead: caught below as a TOML error, or std::terminate inside its
// noexcept functions, either way defined behaviour.
#include <toml++/impl/preprocessor.h>

namespace accel::importers::toml_guard {
struct InternalCheckFailed {};
[[noreturn]] inline void Fail() { throw InternalCheckFailed{}; }
}  // namespace accel::importers::toml_guard

#undef TOML_ASSERT
#define TOML_ASSERT(expr) ((expr) ? static_cast<void>(0) : ::accel::importers::toml_guard::Fail())
#undef TOML_ASSERT_ASSUME
#define TOML_ASSERT_ASSUME(expr) TOML_ASSERT(expr)
#undef TOML_UNREACHABLE
#define TOML_UNREACHABLE ::accel::importers::toml_guard::Fail()

#include <toml++/toml.h>

#include "common/diag_codes.h"
#include "importers/spec_builder.h"
#include "spec/text_checks.h"

namespace accel::importers {
namespace {

SourceLocation Location(const toml::source_region& region) {
  return {static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
}

class Converter {
 public:
  explicit Converter(spec::YamlDocument& document) : document_(document) {}

  const spec::YamlNode* Convert(const toml::node& node) {
    spec::YamlNode& out = document_.nodes.emplace_back();
    out.location = Location(node.source());
    if (const toml::table* table = node.as_table()) {
      out.kind = spec::YamlNode::Kind::kMapping;
      // toml::table iterates in key order; configs read best in document order.
      std::vector<std::pair<const toml::key*, const toml::node*>> entries;
      for (auto&& [key, value] : *table) entries.emplace_back(&key, &value);
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        const auto& x = a.first->source().begin;
        const auto& y = b.first->source().begin;
        return x.line != y.line ? x.line < y.line : x.column < y.column;
      });
      for (const auto& [key, value] : entries) {
        spec::YamlNode& key_node = document_.nodes.emplace_back();
        key_node.location = Location(key->source());
        key_node.value = std::string(key->str());
        key_node.quoted = true;
        key_node.scalar_type = spec::ScalarType::kString;
        out.entries.push_back({&key_node, Convert(*value)});
      }
    } else if (const toml::array* array = node.as_array()) {
      out.kind = spec::YamlNode::Kind::kSequence;
      for (const toml::node& item : *array) out.items.push_back(Convert(item));
    } else {
      Scalar(node, out);
    }
    return &out;
  }

 private:
  static void Scalar(const toml::node& node, spec::YamlNode& out) {
    out.kind = spec::YamlNode::Kind::kScalar;
    if (auto v = node.value<std::string>(); v && node.is_string()) {
      out.value = *v;
      out.quoted = true;
      out.scalar_type = spec::ScalarType::kString;
    } else if (node.is_integer()) {
      out.value = std::to_string(node.as_integer()->get());
      out.scalar_type = spec::ScalarType::kInt;
    } else if (node.is_floating_point()) {
      out.value = YamlFloat(node.as_floating_point()->get());
      out.scalar_type = spec::ScalarType::kFloat;
    } else if (node.is_boolean()) {
      out.value = node.as_boolean()->get() ? "true" : "false";
      out.scalar_type = spec::ScalarType::kBool;
    } else {
      std::ostringstream text;
      if (node.is_date()) text << node.as_date()->get();
      else if (node.is_time()) text << node.as_time()->get();
      else if (node.is_date_time()) text << node.as_date_time()->get();
      out.value = text.str();
      out.quoted = true;
      out.scalar_type = spec::ScalarType::kString;
    }
  }

  spec::YamlDocument& document_;
};

bool IsKeyStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '"' || c == '\'' || c == ']';
}

// A character of a bare key or value (a number, date, boolean). A quote right after one opens
// no string for tomlplusplus: it scans `1"...` as one value and may test every character up to
// the line's end as whitespace, reaching the same incomplete table (found by
// fuzz/torchtitan_import_fuzzer), also past a later quote that looks like a string's start
// (`1"-x="é`). TOML never allows such a quote, so the scanner rejects it there. A '.' before a
// quote is a dotted key (a."b") and does open a string.
bool IsBareChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '+' || c == ':';
}

// Skips a string starting at text[i] (a quote); returns the index after it. Multi-line strings
// (triple quotes) may span lines; basic strings ('"') honour backslash escapes.
size_t SkipString(std::string_view text, size_t i) {
  const char quote = text[i];
  const bool multi = text.compare(i, 3, std::string(3, quote)) == 0;
  i += multi ? 3 : 1;
  while (i < text.size()) {
    if (quote == '"' && text[i] == '\\') {
      i += 2;
    } else if (multi && text.compare(i, 3, std::string(3, quote)) == 0) {
      return i + 3;
    } else if (!multi && (text[i] == quote || text[i] == '\n')) {
      return i + 1;
    } else {
      ++i;
    }
  }
  return i;
}

// Input that reaches a failing internal check of tomlplusplus 3.3.0 (see the top of this file):
// a table header whose '[' or '[[' is not followed by a key or ']' ("[\n", "[ # x"), and
// non-ASCII characters outside strings and comments (its Unicode whitespace table is
// incomplete, e.g. for U+FECF). A bare value (a number, date, boolean) is scanned as
// tomlplusplus scans it, to the next whitespace, ',', ']', '}' or '#', testing every character
// on the way, quotes and '=' included: a quote or non-ASCII character there is rejected too
// (`l = -.x="é`, found by fuzz/torchtitan_import_fuzzer). TOML 1.0 allows none of these, so
// rejecting them first loses nothing.
struct Unparseable {
  size_t offset = std::string_view::npos;
  const char* message = "";
};

constexpr const char* kNonAscii = "a non-ASCII character outside a string or comment";

bool EndsBareValue(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',' || c == ']' || c == '}' || c == '#';
}

// The bare value starting at text[i]: the index after it, or the offending character.
Unparseable ScanBareValue(std::string_view text, size_t& i) {
  for (; i < text.size() && !EndsBareValue(text[i]); ++i) {
    if (static_cast<unsigned char>(text[i]) >= 0x80) return {i, kNonAscii};
    if (text[i] == '"' || text[i] == '\'') return {i, "a quote inside a bare value"};
  }
  return {};
}

// A table header at text[i] ('[' at a line's start outside any value): checks its name's start
// and skips it.
Unparseable ScanHeader(std::string_view text, size_t& i) {
  size_t j = i + 1;
  if (j < text.size() && text[j] == '[') ++j;
  while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
  if (j < text.size() && !IsKeyStart(text[j])) return {j, "expected a table name after '['"};
  while (i < text.size() && text[i] != '\n' && text[i] != '#') {  // the rest of the header
    if (text[i] == '"' || text[i] == '\'') {
      i = SkipString(text, i);
    } else if (static_cast<unsigned char>(text[i]) >= 0x80) {
      return {i, kNonAscii};
    } else {
      ++i;
    }
  }
  return {};
}

// Scans like the parser: headers at the start of a line outside values; keys; values after '=',
// and in arrays after '[' or ','; strings and comments skipped. `open` holds the brackets of the
// arrays ('[') and inline tables ('{') around the current position.
Unparseable FindUnparseable(std::string_view text) {
  std::string open;
  bool line_start = true;
  char previous = '\n';  // the last character outside whitespace, strings counting as '"'
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    const bool value_position =
        previous == '=' || (!open.empty() && open.back() == '[' && (previous == '[' || previous == ','));
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    Unparseable bad;
    if ((c == '"' || c == '\'') && i > 0 && IsBareChar(text[i - 1])) {
      return {i, "a quote right after a bare key or value"};
    } else if (c == '"' || c == '\'') {
      i = SkipString(text, i);
      previous = '"';
    } else if (static_cast<unsigned char>(c) >= 0x80) {
      return {i, kNonAscii};
    } else if (c == '[' && open.empty() && line_start && !value_position) {
      bad = ScanHeader(text, i);
      previous = ']';
    } else if (value_position && c != '[' && c != '{' && c != ']' && c != '}' && c != ',') {
      bad = ScanBareValue(text, i);
      previous = 'v';
    } else {
      if (c == '[' || c == '{') open.push_back(c);
      if ((c == ']' || c == '}') && !open.empty()) open.pop_back();
      previous = c;
      ++i;
    }
    if (bad.offset != std::string_view::npos) return bad;
    line_start = false;
  }
  return {};
}

}  // namespace

std::unique_ptr<spec::YamlDocument> ParseLocatedToml(std::string_view text,
                                                     const std::string& file,
                                                     DiagnosticSink& sink) {
  if (Unparseable bad = FindUnparseable(text); bad.offset != std::string_view::npos) {
    sink.Error(codes::kImportSyntax, file, LocationOfByte(text, bad.offset), "",
               std::string("not valid TOML: ") + bad.message);
    return nullptr;
  }
  toml::table table;
  try {
    table = toml::parse(text, std::string_view(file));
  } catch (const toml_guard::InternalCheckFailed&) {
    sink.Error(codes::kImportSyntax, file, {1, 1}, "",
               "not valid TOML: tomlplusplus stopped at an internal check (an input it does not "
               "handle, e.g. an unusual Unicode character where whitespace may be)");
    return nullptr;
  } catch (const toml::parse_error& e) {
    SourceLocation at = Location(e.source());
    if (!at.known()) at = {1, 1};
    sink.Error(codes::kImportSyntax, file, at, "",
               "not valid TOML: " + std::string(e.description()));
    return nullptr;
  }
  auto document = std::make_unique<spec::YamlDocument>();
  Converter converter(*document);
  document->root = converter.Convert(table);
  return document;
}

}  // namespace accel::importers
