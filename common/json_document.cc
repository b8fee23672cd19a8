#include "common/json_document.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/utf8.h"

namespace accel {
namespace {

using Json = nlohmann::json;

// A forward scanner over valid JSON text; it never needs to report errors, and stops at the end
// of the text on malformed input rather than reading past it.
class Scanner {
 public:
  explicit Scanner(std::string_view text) : text_(text) {}

  size_t pos() const { return pos_; }
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void Advance() { if (pos_ < text_.size()) ++pos_; }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' ||
                                   text_[pos_] == '\t')) {
      ++pos_;
    }
  }

  // Reads a string at the cursor and returns its raw contents (escapes left as written, except
  // the common \" and \\, which are unescaped so keys compare as written in the file).
  std::string ReadString() {
    std::string out;
    Advance();  // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) {
        ++pos_;
        if (text_[pos_] != '"' && text_[pos_] != '\\') out.push_back('\\');
      }
      out.push_back(text_[pos_++]);
    }
    Advance();  // closing quote
    return out;
  }

  void SkipValue() {
    SkipSpace();
    char c = Peek();
    if (c == '"') {
      ReadString();
    } else if (c == '{' || c == '[') {
      int depth = 0;
      while (pos_ < text_.size()) {
        char d = text_[pos_];
        if (d == '"') { ReadString(); continue; }
        if (d == '{' || d == '[') ++depth;
        if (d == '}' || d == ']') --depth;
        ++pos_;
        if (depth == 0) return;
      }
    } else {
      while (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '}' && text_[pos_] != ']') ++pos_;
    }
  }

  // Moves to the value of `key` in the object at the cursor; false (cursor unchanged) if absent.
  bool EnterMember(const std::string& key) {
    size_t start = pos_;
    Advance();  // '{'
    for (;;) {
      SkipSpace();
      if (Peek() != '"') break;
      std::string name = ReadString();
      SkipSpace();
      Advance();  // ':'
      SkipSpace();
      if (name == key) return true;
      if (!SkipToNext()) break;
    }
    pos_ = start;
    return false;
  }

  // Moves to element `index` of the array at the cursor; false (cursor unchanged) if absent.
  bool EnterElement(size_t index) {
    size_t start = pos_;
    Advance();  // '['
    for (size_t i = 0;; ++i) {
      SkipSpace();
      if (Peek() == ']' || Peek() == '\0') break;
      if (i == index) return true;
      if (!SkipToNext()) break;
    }
    pos_ = start;
    return false;
  }

 private:
  // Skips the value at the cursor and the comma after it; false when no comma follows.
  bool SkipToNext() {
    SkipValue();
    SkipSpace();
    if (Peek() != ',') return false;
    Advance();
    return true;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// The index i of an element "[i]", or nullopt for anything else (a key).
std::optional<size_t> ArrayIndex(const std::string& element) {
  if (element.size() < 3 || element.front() != '[' || element.back() != ']') return std::nullopt;
  size_t index = 0;
  const char* last = element.data() + element.size() - 1;
  auto [end, ec] = std::from_chars(element.data() + 1, last, index);
  if (ec != std::errc() || end != last) return std::nullopt;
  return index;
}

// nlohmann's what() without its prefix: "[json.exception.parse_error.101] parse error at line 3,
// column 5: syntax error ..." and "[json.exception.out_of_range.406] number overflow ..." keep
// what follows "column 5: " and "] " (the location is reported separately).
std::string ErrorDetail(const std::string& what) {
  size_t start = what.find("] ");
  start = start == std::string::npos ? 0 : start + 2;
  if (what.compare(start, 11, "parse error") == 0) {
    size_t colon = what.find(": ", start);
    if (colon != std::string::npos) start = colon + 2;
  }
  return what.substr(start);
}

// How many bytes before nlohmann's position (the count of bytes read, end of input included)
// the error starts. A token that is not allowed where it stands is located at its first byte;
// nlohmann names it in the message ("unexpected string literal") and `last_token` holds the text
// of a string or number (for literals and punctuation it may hold earlier bytes too). A token
// the lexer could not read, or the end of the input, is located at the last byte read.
size_t ErrorBacktrack(int id, std::string_view detail, const std::string& last_token) {
  constexpr int kNumberOverflow = 406;  // out_of_range.406, just after the number
  if (id == kNumberOverflow) return last_token.size();
  constexpr std::string_view kUnexpected = " - unexpected ";
  size_t at = detail.find(kUnexpected);
  if (at == std::string_view::npos) return 1;
  std::string_view token = detail.substr(at + kUnexpected.size());
  if (token.starts_with("string literal") || token.starts_with("number literal")) return last_token.size();
  if (token.starts_with("true literal") || token.starts_with("null literal")) return 4;
  if (token.starts_with("false literal")) return 5;
  return 1;  // punctuation, or the end of input
}

// Python's json module writes float('nan') and float('inf') as NaN, Infinity and -Infinity
// (allow_nan=True is its default), which JSON does not have (RFC 8259 §6); nlohmann only says
// "invalid literal". When the error at `offset` lies in such a word, moves `offset` to the word
// and returns a message naming it; else returns "".
std::string NonFiniteLiteralError(std::string_view text, size_t& offset) {
  const auto letter = [&](size_t i) { return std::isalpha(static_cast<unsigned char>(text[i])) != 0; };
  if (offset >= text.size() || !letter(offset)) return "";
  size_t start = offset, end = offset;
  while (start > 0 && letter(start - 1)) --start;
  if (start > 0 && text[start - 1] == '-') --start;
  while (end < text.size() && letter(end)) ++end;
  const std::string_view word = text.substr(start, end - start);
  for (std::string_view name : {"NaN", "-NaN", "nan", "-nan", "Infinity", "-Infinity", "inf", "-inf"}) {
    if (word != name) continue;
    offset = start;
    return std::string(word) +
           " is not valid JSON: JSON numbers are finite (Python's json.dump writes NaN and "
           "Infinity unless allow_nan=False); use null or a number";
  }
  return "";
}

// Checks syntax without building a document, stopping at the nesting limit before deep input
// costs anything.
class SyntaxCheck : public nlohmann::json_sax<Json> {
 public:
  explicit SyntaxCheck(int max_depth) : max_depth_(max_depth) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return Enter(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return Leave(); }
  bool start_array(std::size_t) override { return Enter(); }
  bool end_array() override { return Leave(); }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& e) override {
    detail = ErrorDetail(e.what());
    const size_t back = std::max<size_t>(ErrorBacktrack(e.id, detail, last_token), 1);
    offset = position >= back ? position - back : 0;
    return false;
  }

  std::string detail;
  size_t offset = 0;
  bool too_deep = false;

 private:
  bool Enter() {
    if (max_depth_ > 0 && ++depth_ > max_depth_) {
      too_deep = true;
      return false;
    }
    return true;
  }
  bool Leave() {
    --depth_;
    return true;
  }
  int max_depth_;
  int depth_ = 0;
};

// Byte offset of the first bracket nested deeper than `max_depth` (strings skipped).
size_t DeepOffset(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return 0;
}

}  // namespace

std::string FieldName(const FieldPath& path) {
  if (path.empty()) return "(top level)";
  std::string name;
  for (const std::string& element : path) {
    if (!name.empty() && (element.empty() || element.front() != '[')) name += '.';
    name += element;
  }
  return name;
}

FieldPath Child(const FieldPath& path, std::string key) {
  FieldPath child = path;
  child.push_back(std::move(key));
  return child;
}

FieldPath Child(const FieldPath& path, size_t index) { return Child(path, absl::StrCat("[", index, "]")); }

SourceLocation LocateJsonPath(std::string_view text, const FieldPath& path) {
  Scanner scanner(text);
  scanner.SkipSpace();
  for (const std::string& element : path) {
    bool found = false;
    if (scanner.Peek() == '{') {
      found = scanner.EnterMember(element);
    } else if (scanner.Peek() == '[') {
      std::optional<size_t> index = ArrayIndex(element);
      found = index && scanner.EnterElement(*index);
    }
    if (!found) break;
  }
  return LocationOfByte(text, scanner.pos());
}

bool CheckJsonSyntax(std::string_view text, JsonSyntaxError& error, int max_depth) {
  SyntaxCheck check(max_depth);
  bool ok = false;
  try {
    ok = Json::sax_parse(text, &check);
  } catch (const Json::exception& e) {
    // sax_parse reports errors through parse_error; this is a safety net.
    check.detail = ErrorDetail(e.what());
  }
  if (ok) return true;
  error = JsonSyntaxError{};
  error.too_deep = check.too_deep;
  if (check.too_deep) {
    error.offset = DeepOffset(text, max_depth);
    error.detail = absl::StrCat("nested deeper than ", max_depth, " levels");
  } else {
    error.offset = check.offset;
    error.detail = std::move(check.detail);
    if (std::string non_finite = NonFiniteLiteralError(text, error.offset); !non_finite.empty()) {
      error.detail = std::move(non_finite);
    }
  }
  error.location = LocationOfByte(text, error.offset);
  return false;
}

std::optional<nlohmann::json> ParseJson(std::string_view text, JsonSyntaxError& error) {
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded()) return json;
  // Invalid text is read again to locate the error: nlohmann's DOM parser keeps no token.
  if (CheckJsonSyntax(text, error)) error = JsonSyntaxError{0, {1, 1}, "syntax error", false};
  return std::nullopt;
}

absl::StatusOr<JsonDocument> JsonDocument::Parse(std::string file, std::string text) {
  JsonSyntaxError error;
  std::optional<Json> root = ParseJson(text, error);
  if (!root) return absl::InvalidArgumentError(absl::StrCat(FileLocationText(file, error.location), ": invalid JSON: ", error.detail));
  JsonDocument document;
  document.root_ = std::make_shared<const Json>(std::move(*root));
  document.file_ = std::make_shared<const std::string>(std::move(file));
  document.text_ = std::make_shared<const std::string>(std::move(text));
  return document;
}

absl::Status JsonDocument::Error(const FieldPath& field, const std::string& message) const {
  return absl::InvalidArgumentError(
      absl::StrCat(FileLocationText(*file_, LocateJsonPath(*text_, field)), ": ", FieldName(field), ": ", message));
}

const nlohmann::json* JsonDocument::Find(const FieldPath& path) const {
  const Json* node = root_.get();
  for (const std::string& element : path) {
    if (node->is_array()) {
      std::optional<size_t> index = ArrayIndex(element);
      if (!index || *index >= node->size()) return nullptr;
      node = &(*node)[*index];
    } else if (node->is_object()) {
      auto it = node->find(element);
      if (it == node->end()) return nullptr;
      node = &*it;
    } else {
      return nullptr;
    }
  }
  return node->is_null() ? nullptr : node;
}

std::string ShownJsonValue(const nlohmann::json& value, size_t max_bytes) {
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  return CutUtf8(value.dump(), max_bytes);
}

}  // namespace accel
