// The located JSON reader (common/json_document.h): syntax errors at the offending byte, field
// errors at the field. Readers built on it keep their own message tests (tests/tokenizers,
// tests/importers, tests/spec).
#include <catch2/catch.hpp>

#include <string>

#include "common/json_document.h"

namespace accel {
namespace {

JsonSyntaxError SyntaxError(std::string_view text, int max_depth = 0) {
  JsonSyntaxError error;
  REQUIRE_FALSE(CheckJsonSyntax(text, error, max_depth));
  // The parser that builds the value reports the same error.
  if (max_depth == 0) {
    JsonSyntaxError parsed;
    CHECK_FALSE(ParseJson(text, parsed).has_value());
    CHECK(parsed.offset == error.offset);
    CHECK(parsed.detail == error.detail);
  }
  CHECK(error.location == LocationOfByte(text, error.offset));
  return error;
}

TEST_CASE("LocationOfByte counts lines and bytes from 1", "[json]") {
  CHECK(LocationOfByte("ab\ncd", 0) == SourceLocation{1, 1});
  CHECK(LocationOfByte("ab\ncd", 2) == SourceLocation{1, 3});
  CHECK(LocationOfByte("ab\ncd", 4) == SourceLocation{2, 2});
  CHECK(LocationOfByte("ab\ncd", 99) == SourceLocation{2, 3});  // just after the end
  CHECK(LocationOfByte("\xC3\xA9x", 2) == SourceLocation{1, 3});  // columns count bytes
}

TEST_CASE("field paths are named as tokenizers write them", "[json]") {
  CHECK(FieldName({}) == "(top level)");
  CHECK(FieldName({"model", "merges", "[3]"}) == "model.merges[3]");
  CHECK(FieldName(Child(Child({"a"}, 2), "b")) == "a[2].b");
}

TEST_CASE("JSON locations of fields", "[json]") {
  std::string text = "{\n  \"a\": 1,\n  \"model\": {\"merges\": [\"x y\",\n    [\"p\", \"q\"]]}\n}";
  CHECK(LocateJsonPath(text, {}) == SourceLocation{1, 1});
  CHECK(LocateJsonPath(text, {"a"}) == SourceLocation{2, 8});
  CHECK(LocateJsonPath(text, {"model", "merges", "[1]"}) == SourceLocation{4, 5});
  CHECK(LocateJsonPath(text, {"model", "merges", "[7]"}) == SourceLocation{3, 23});  // the array
  CHECK(LocateJsonPath(text, {"model", "vocab"}) == SourceLocation{3, 12});          // the object
  // Keys with escaped quotes compare as written; values skipped over may hold brackets.
  CHECK(LocateJsonPath("{\"s\": \"]}\", \"q\\\"k\": 2}", {"q\"k"}) == SourceLocation{1, 21});
}

TEST_CASE("a JsonDocument finds fields and locates errors at them", "[json]") {
  absl::StatusOr<JsonDocument> doc =
      JsonDocument::Parse("f.json", "{\"vocab\": {\"[UNK]\": 0},\n \"merges\": [\"a b\", null]}");
  REQUIRE(doc.ok());
  CHECK(doc->file() == "f.json");
  CHECK(doc->root().is_object());
  REQUIRE(doc->Find({"vocab", "[UNK]"}) != nullptr);  // a key like an index, on an object
  CHECK(*doc->Find({"merges", "[0]"}) == "a b");
  CHECK(doc->Find({"merges", "[1]"}) == nullptr);  // null
  CHECK(doc->Find({"merges", "[2]"}) == nullptr);  // past the end
  CHECK(doc->Find({"merges", "0"}) == nullptr);    // not an index
  CHECK(doc->Find({"merges", "[0]", "x"}) == nullptr);
  CHECK(doc->Error({"merges", "[0]"}, "is odd").message() == "f.json:2:13: merges[0]: is odd");
  CHECK(doc->Error({"merges", "[5]"}, "is missing").message() == "f.json:2:12: merges[5]: is missing");
  CHECK(doc->Error({}, "is empty").code() == absl::StatusCode::kInvalidArgument);

  absl::StatusOr<JsonDocument> bad = JsonDocument::Parse("t.json", "{\n  \"model\": {\"type\": \"BPE\",}\n}");
  CHECK(bad.status().message() ==
        "t.json:2:27: invalid JSON: syntax error while parsing object key - unexpected '}'; expected string literal");
}

TEST_CASE("a token out of place is located at its first byte", "[json]") {
  JsonSyntaxError e = SyntaxError("{\n  \"train_batch_size\": 8\n  \"fp16\": {}\n}\n");
  CHECK(e.location == SourceLocation{3, 3});
  CHECK(e.detail == "syntax error while parsing object - unexpected string literal; expected '}'");
  CHECK_FALSE(e.too_deep);
  CHECK(SyntaxError("[1, 2] 30").location == SourceLocation{1, 8});
  CHECK(SyntaxError("{\"a\": 1 true}").location == SourceLocation{1, 9});
  CHECK(SyntaxError("[false false]").location == SourceLocation{1, 8});
  CHECK(SyntaxError("[null null]").location == SourceLocation{1, 7});
  CHECK(SyntaxError("{\"a\": 1,}").location == SourceLocation{1, 9});
}

TEST_CASE("a token that cannot be read is located where reading stopped", "[json]") {
  JsonSyntaxError e = SyntaxError("{\"a\": tru}");
  CHECK(e.location == SourceLocation{1, 10});
  CHECK(e.detail.starts_with("syntax error while parsing value - invalid literal; last read: "));
  // Bytes that are not UTF-8 are quoted as they are; callers sanitize.
  e = SyntaxError("{\x82model_type\": 1}");
  CHECK(e.location == SourceLocation{1, 2});
  CHECK(e.detail ==
        "syntax error while parsing object key - invalid literal; last read: '{\x82'; expected string literal");
}

TEST_CASE("text that ends too early is located at its end", "[json]") {
  JsonSyntaxError e = SyntaxError("{\"a\": [1, 2");
  CHECK(e.location == SourceLocation{1, 12});
  CHECK(e.detail == "syntax error while parsing array - unexpected end of input; expected ']'");
  e = SyntaxError("");
  CHECK(e.location == SourceLocation{1, 1});
  CHECK(e.detail == "syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal");
}

TEST_CASE("a number too large for a double is located at the number", "[json]") {
  // nlohmann's message has no position; the same text earlier in a string is not the number.
  JsonSyntaxError e = SyntaxError("{\"x\": \"1e400\",\n \"n\": 1e400}");
  CHECK(e.location == SourceLocation{2, 7});
  CHECK(e.detail == "number overflow parsing '1e400'");
}

TEST_CASE("CheckJsonSyntax stops at the nesting limit", "[json]") {
  JsonSyntaxError error;
  CHECK(CheckJsonSyntax("[[1], {\"a\": 2}]", error, 2));
  CHECK(CheckJsonSyntax(std::string(1000, '[') + std::string(1000, ']'), error));  // no limit
  JsonSyntaxError e = SyntaxError("[\"[[[\", [[1]]]", 2);
  CHECK(e.too_deep);
  CHECK(e.location == SourceLocation{1, 10});  // brackets inside strings do not count
  CHECK(e.detail == "nested deeper than 2 levels");
  // A syntax error before the limit is reached is reported as such.
  e = SyntaxError("[1,,[[[1]]]]", 2);
  CHECK_FALSE(e.too_deep);
  CHECK(e.location == SourceLocation{1, 4});
}

TEST_CASE("ParseJson returns any JSON value", "[json]") {
  JsonSyntaxError error;
  std::optional<nlohmann::json> json = ParseJson(" [1, \"x\", {\"a\": null}] ", error);
  REQUIRE(json.has_value());
  CHECK(json->size() == 3);
  REQUIRE(ParseJson("2", error).has_value());
  CHECK(ParseJson("2", error)->is_number());
}

}  // namespace
}  // namespace accel
