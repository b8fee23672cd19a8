#include "tokenizers/json_locator.h"

#include <charconv>

namespace accel::tok {
namespace {

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
      SkipValue();
      SkipSpace();
      if (Peek() != ',') break;
      Advance();
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
      SkipValue();
      SkipSpace();
      if (Peek() != ',') break;
      Advance();
    }
    pos_ = start;
    return false;
  }

 private:
  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

SourceLocation LocationOfByte(std::string_view text, size_t offset) {
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

SourceLocation LocateJsonPath(std::string_view text, const std::vector<std::string>& path) {
  Scanner scanner(text);
  scanner.SkipSpace();
  for (const std::string& element : path) {
    bool found = false;
    if (scanner.Peek() == '{') {
      found = scanner.EnterMember(element);
    } else if (scanner.Peek() == '[' && element.size() > 2 && element.front() == '[' && element.back() == ']') {
      size_t index = 0;
      const char* last = element.data() + element.size() - 1;
      auto [end, ec] = std::from_chars(element.data() + 1, last, index);
      found = ec == std::errc() && end == last && scanner.EnterElement(index);
    }
    if (!found) break;
  }
  return LocationOfByte(text, scanner.pos());
}

}  // namespace accel::tok
