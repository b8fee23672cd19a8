// Typed reads of tokenizer.json fields that fail with a located error (JsonDocument::Error).
#ifndef ACCEL_TOKENIZERS_JSON_FIELDS_H_
#define ACCEL_TOKENIZERS_JSON_FIELDS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "common/json_document.h"

namespace accel::tok {

// The "type" string of the object at `field`. Errors: "must be an object with a 'type'" when
// the field is not an object, "has no 'type'" / "'type' must be a string".
absl::StatusOr<std::string> TypeOf(const JsonDocument& doc, const FieldPath& field);

// A string that must be present. Errors: "is missing" (at the parent), "must be a string".
absl::StatusOr<std::string> RequiredString(const JsonDocument& doc, const FieldPath& field);

// An optional boolean (absent or null gives `fallback`). Errors: "must be true or false".
absl::StatusOr<bool> OptionalBool(const JsonDocument& doc, const FieldPath& field, bool fallback);

// Nesting limit for Sequence normalizers, pre-tokenizers and post-processors (real files nest
// one level): deeper fields fail with CheckDepth's error rather than exhausting the stack.
inline constexpr size_t kMaxFieldDepth = 32;

// InvalidArgument "is nested more than 32 levels deep" when `field` is deeper than kMaxFieldDepth.
absl::Status CheckDepth(const JsonDocument& doc, const FieldPath& field);

// A token id: an integer in [0, 2^31). Errors: "must be a token id (an integer from 0)".
absl::StatusOr<uint32_t> TokenId(const JsonDocument& doc, const FieldPath& field);

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_JSON_FIELDS_H_
