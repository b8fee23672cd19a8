#include "tokenizers/json_fields.h"

namespace accel::tok {

absl::StatusOr<std::string> TypeOf(const JsonDocument& doc, const FieldPath& field) {
  const nlohmann::json* node = doc.Find(field);
  if (node == nullptr || !node->is_object()) return doc.Error(field, "must be an object with a 'type'");
  const nlohmann::json* type = doc.Find(Child(field, "type"));
  if (type == nullptr) return doc.Error(field, "has no 'type'");
  if (!type->is_string()) return doc.Error(Child(field, "type"), "must be a string");
  return type->get<std::string>();
}

absl::StatusOr<std::string> RequiredString(const JsonDocument& doc, const FieldPath& field) {
  const nlohmann::json* node = doc.Find(field);
  if (node == nullptr) return doc.Error(field, "is missing");
  if (!node->is_string()) return doc.Error(field, "must be a string");
  return node->get<std::string>();
}

absl::StatusOr<bool> OptionalBool(const JsonDocument& doc, const FieldPath& field, bool fallback) {
  const nlohmann::json* node = doc.Find(field);
  if (node == nullptr) return fallback;
  if (!node->is_boolean()) return doc.Error(field, "must be true or false");
  return node->get<bool>();
}

absl::Status CheckDepth(const JsonDocument& doc, const FieldPath& field) {
  if (field.size() <= kMaxFieldDepth) return absl::OkStatus();
  return doc.Error(field, "is nested more than " + std::to_string(kMaxFieldDepth) + " levels deep");
}

absl::StatusOr<uint32_t> TokenId(const JsonDocument& doc, const FieldPath& field) {
  const nlohmann::json* node = doc.Find(field);
  if (node == nullptr || !node->is_number_integer() || node->get<int64_t>() < 0 ||
      node->get<int64_t>() >= (int64_t{1} << 31)) {
    return doc.Error(field, "must be a token id (an integer from 0)");
  }
  return static_cast<uint32_t>(node->get<int64_t>());
}

}  // namespace accel::tok
