// The one reader of JSON files whose errors name FILE:LINE:COLUMN (tokenizer.json, a model
// config.json, device profiles, DeepSpeed configs): syntax errors are located at the offending
// byte, and errors about a field at the field's value. nlohmann::json keeps no positions, so a
// field is found again in the text when an error needs its place.
#ifndef ACCEL_COMMON_JSON_DOCUMENT_H_
#define ACCEL_COMMON_JSON_DOCUMENT_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/source_location.h"

namespace accel {

// A field inside a JSON document: object keys and, inside arrays, bracketed decimal indices,
// {"model", "merges", "[3]"}. The empty path is the top-level value.
using FieldPath = std::vector<std::string>;

// "model.merges[3]" for {"model", "merges", "[3]"}; "(top level)" for {}.
std::string FieldName(const FieldPath& path);

// `path` with one more element: a key, or an index shown as "[i]".
FieldPath Child(const FieldPath& path, std::string key);
FieldPath Child(const FieldPath& path, size_t index);

// Where the value at `path` starts in `text`, which must be valid JSON (on other text the answer
// is some position inside it). When an element is missing, the location of the deepest
// container that exists is returned (so "has no 'merges'" points at the "model" object). Keys
// compare as written in the file, except that \" and \\ are unescaped.
SourceLocation LocateJsonPath(std::string_view text, const FieldPath& path);

// Why a text is not JSON, as nlohmann::json reads it (RFC 8259: no comments, no trailing commas).
struct JsonSyntaxError {
  // Byte offset of the error in the text: the first byte of a token that is not allowed where it
  // stands (a string, number, literal or punctuation) or of a number too large for a double; the
  // byte at which a token could not be read (an invalid literal or string); the end of the text
  // when it ends too early; the first bracket nested too deep.
  size_t offset = 0;
  SourceLocation location;  // LocationOfByte(text, offset)
  // What is wrong, without nlohmann's "[json.exception...] parse error at line L, column C: "
  // prefix: "syntax error while parsing object - unexpected string literal; expected '}'",
  // "number overflow parsing '1e400'", "nested deeper than 64 levels". It may quote bytes of the
  // text that are not UTF-8 ("last read: '\x82'"); callers that need UTF-8 sanitize it.
  std::string detail;
  bool too_deep = false;  // the error is the nesting limit of CheckJsonSyntax
};

// Checks that `text` holds one JSON value whose arrays and objects nest at most `max_depth`
// deep (0: no limit), without building it, so deep or large input costs little. Returns false
// and fills `error` when it does not.
bool CheckJsonSyntax(std::string_view text, JsonSyntaxError& error, int max_depth = 0);

// Parses `text` as one JSON value (any type, any depth). Returns nullopt and fills `error` when it
// is not JSON.
std::optional<nlohmann::json> ParseJson(std::string_view text, JsonSyntaxError& error);

// A JSON value as a message quotes it: scalars as JSON text cut to `max_bytes` (CutUtf8), arrays
// and objects by kind only ("an array", "an object"). Dumping a container would quote the whole
// file and recurse as deep as it nests (a config.json of 100,000 nested '[' overflowed the stack).
std::string ShownJsonValue(const nlohmann::json& value, size_t max_bytes);

// A JSON file parsed once, with its text kept for locating fields. Cheap to copy (shared
// contents).
class JsonDocument {
 public:
  // Parses `text`, read from `file` (the name used in messages). Errors: InvalidArgument
  // "FILE:LINE:COL: invalid JSON: DETAIL" (JsonSyntaxError's location and detail).
  static absl::StatusOr<JsonDocument> Parse(std::string file, std::string text);

  // The parsed top-level value, and the file name used in messages.
  const nlohmann::json& root() const { return *root_; }
  const std::string& file() const { return *file_; }

  // InvalidArgument "FILE:LINE:COL: FIELD: MESSAGE" (FIELD as FieldName writes it), located at
  // the field's value (or the deepest of its parents that exists).
  absl::Status Error(const FieldPath& field, const std::string& message) const;

  // The value at `path` when it exists and is not null, else nullptr. An element "[i]" indexes
  // arrays only; on an object it is a key like any other ("[UNK]").
  const nlohmann::json* Find(const FieldPath& path) const;

 private:
  std::shared_ptr<const std::string> file_;
  std::shared_ptr<const std::string> text_;
  std::shared_ptr<const nlohmann::json> root_;
};

}  // namespace accel

#endif  // ACCEL_COMMON_JSON_DOCUMENT_H_
