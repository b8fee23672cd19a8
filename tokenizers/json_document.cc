#include "tokenizers/json_document.h"

#include <charconv>

#include "absl/strings/str_cat.h"
#include "tokenizers/json_locator.h"

namespace accel::tok {
namespace {

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 3, column 5: syntax
// error ..."; the location is printed separately, so keep what follows the location.
std::string ParseErrorTail(const std::string& what) {
  size_t at = what.find("parse error");
  size_t colon = what.find(": ", at == std::string::npos ? 0 : at);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

std::string Where(const std::string& file, SourceLocation location) {
  return absl::StrCat(file, ":", location.line, ":", location.column);
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

absl::StatusOr<JsonDocument> JsonDocument::Parse(std::string file, std::string text) {
  JsonDocument document;
  try {
    document.root_ = std::make_shared<const nlohmann::json>(nlohmann::json::parse(text));
  } catch (const nlohmann::json::parse_error& e) {
    size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    return absl::InvalidArgumentError(
        absl::StrCat(Where(file, LocationOfByte(text, offset)), ": invalid JSON: ", ParseErrorTail(e.what())));
  } catch (const nlohmann::json::exception& e) {
    // Other lexer errors carry no position (out_of_range.406 "number overflow parsing '1e999'"):
    // locate the quoted text they name, else the start of the file.
    std::string what = e.what();
    size_t open = what.find('\''), close = what.rfind('\'');
    size_t at = open != std::string::npos && close > open + 1 ? text.find(what.substr(open + 1, close - open - 1)) : 0;
    size_t tail = what.find("] ");
    return absl::InvalidArgumentError(absl::StrCat(Where(file, LocationOfByte(text, at == std::string::npos ? 0 : at)),
                                                   ": invalid JSON: ", tail == std::string::npos ? what : what.substr(tail + 2)));
  }
  document.file_ = std::make_shared<const std::string>(std::move(file));
  document.text_ = std::make_shared<const std::string>(std::move(text));
  return document;
}

absl::Status JsonDocument::Error(const FieldPath& field, const std::string& message) const {
  return absl::InvalidArgumentError(
      absl::StrCat(Where(*file_, LocateJsonPath(*text_, field)), ": ", FieldName(field), ": ", message));
}

const nlohmann::json* JsonDocument::Find(const FieldPath& path) const {
  const nlohmann::json* node = root_.get();
  for (const std::string& element : path) {
    if (node->is_array()) {
      // An index "[i]"; keys that look like one ("[UNK]") only address objects.
      size_t index = 0;
      const char* last = element.data() + element.size() - 1;
      if (element.size() < 3 || element.front() != '[' || *last != ']') return nullptr;
      auto [end, ec] = std::from_chars(element.data() + 1, last, index);
      if (ec != std::errc() || end != last || index >= node->size()) return nullptr;
      node = &(*node)[index];
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

}  // namespace accel::tok
