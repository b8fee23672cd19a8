#include "importers/located_json.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/diag_codes.h"
#include "spec/text_checks.h"

namespace accel::importers {
namespace {

using Json = nlohmann::json;

constexpr int kMaxDepth = 64;

// Checks syntax without building a document: nlohmann's DOM would be thrown away, and a SAX
// handler can stop at the nesting limit before deep input costs anything.
class SyntaxCheck : public nlohmann::json_sax<Json> {
 public:
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
    // `position` is just past the offending token: point at its first byte instead.
    const size_t length = std::max<size_t>(last_token.size(), 1);
    error_offset = position >= length ? position - length : 0;
    std::string what = e.what();
    // "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error ..."
    size_t at = what.find("parse error");
    size_t colon = what.find(": ", at == std::string::npos ? 0 : at);
    message = colon == std::string::npos ? what : what.substr(colon + 2);
    return false;
  }

  std::string message;
  size_t error_offset = 0;
  bool too_deep = false;

 private:
  bool Enter() {
    if (++depth_ > kMaxDepth) {
      too_deep = true;
      return false;
    }
    return true;
  }
  bool Leave() {
    --depth_;
    return true;
  }
  int depth_ = 0;
};

// Byte offset of the first bracket nested deeper than kMaxDepth (strings skipped).
size_t DeepOffset(std::string_view text) {
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
      if (++depth > kMaxDepth) return i;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return 0;
}

}  // namespace

std::unique_ptr<spec::YamlDocument> ParseLocatedJson(std::string_view text,
                                                     const std::string& file,
                                                     DiagnosticSink& sink) {
  SyntaxCheck check;
  bool ok = false;
  try {
    ok = Json::sax_parse(text, &check);
  } catch (const Json::exception& e) {
    check.message = e.what();
  }
  if (check.too_deep) {
    sink.Error(codes::kImportSyntax, file, spec::LocationOfOffset(text, DeepOffset(text)), "",
               "JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
    return nullptr;
  }
  if (!ok) {
    sink.Error(codes::kImportSyntax, file, spec::LocationOfOffset(text, check.error_offset), "",
               "not valid JSON: " + check.message);
    return nullptr;
  }
  std::string yaml(text);
  for (char& c : yaml) {
    if (c == '\t') c = ' ';
  }
  return spec::ParseYaml(yaml, file, sink);
}

}  // namespace accel::importers
