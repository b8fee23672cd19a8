// A parsed JSON file (tokenizer.json) that can say where each of its fields is, for errors of
// the form "tokenizer.json:12:5: model.merges[3]: MESSAGE".
#ifndef ACCEL_TOKENIZERS_JSON_DOCUMENT_H_
#define ACCEL_TOKENIZERS_JSON_DOCUMENT_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accel::tok {

// A field inside the document: object keys and bracketed array indices, {"model", "merges", "[3]"}.
using FieldPath = std::vector<std::string>;

// "model.merges[3]" for {"model", "merges", "[3]"}; "(top level)" for {}.
std::string FieldName(const FieldPath& path);

// `path` with one more element: a key, or an index shown as "[i]".
FieldPath Child(const FieldPath& path, std::string key);
FieldPath Child(const FieldPath& path, size_t index);

// A tokenizer.json (or any JSON file) parsed once, with its text kept for locating fields.
// Cheap to copy (shared contents).
class JsonDocument {
 public:
  // Parses `text`, read from `file` (the name used in messages). Errors: InvalidArgument
  // "FILE:LINE:COL: invalid JSON: MESSAGE" at the offending byte.
  static absl::StatusOr<JsonDocument> Parse(std::string file, std::string text);

  // The parsed top-level value, and the file name used in messages.
  const nlohmann::json& root() const { return *root_; }
  const std::string& file() const { return *file_; }

  // InvalidArgument "FILE:LINE:COL: FIELD: MESSAGE", located at the field (or the deepest of its
  // parents that exists).
  absl::Status Error(const FieldPath& field, const std::string& message) const;

  // The value at `path` when it exists and is not null, else nullptr.
  const nlohmann::json* Find(const FieldPath& path) const;

 private:
  std::shared_ptr<const std::string> file_;
  std::shared_ptr<const std::string> text_;
  std::shared_ptr<const nlohmann::json> root_;
};

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_JSON_DOCUMENT_H_
