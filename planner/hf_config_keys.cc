#include "planner/hf_config_keys.h"

#include <cmath>

#include "common/diag_codes.h"

namespace accel::planner {
namespace {

// Values quoted in messages are cut to this many bytes.
constexpr size_t kShownKeyValueBytes = 60;

const nlohmann::json& EmptyJsonObject() {
  static const nlohmann::json* empty = new nlohmann::json(nlohmann::json::object());
  return *empty;
}

}  // namespace

HfConfigKeys::HfConfigKeys(const nlohmann::json& object, std::string_view text, FieldPath path,
                           std::vector<HfConfigIssue>& issues)
    : object_(&object), text_(text), path_(std::move(path)), issues_(&issues) {}

const nlohmann::json* HfConfigKeys::Find(const char* key) const {
  if (!object_->is_object()) return nullptr;
  auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

std::string HfConfigKeys::Name(const char* key) const { return FieldName(Child(path_, key)); }

void HfConfigKeys::Issue(const char* code, const char* key, std::string message) {
  if (quiet_) return;
  issues_->push_back({code, std::move(message), LocateJsonPath(text_, Child(path_, key))});
}

int64_t HfConfigKeys::Required(const char* key, const char* what) {
  if (Find(key) == nullptr) {
    Issue(codes::kModelConfigInvalid, key, "has no '" + Name(key) + "' (" + what + ")");
    return 0;
  }
  return Optional(key, 0);
}

int64_t HfConfigKeys::Optional(const char* key, int64_t fallback) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_number_integer() || value->get<int64_t>() < 1) {
    Issue(codes::kModelConfigInvalid, key,
          "has '" + Name(key) + "' = " + ShownJsonValue(*value, kShownKeyValueBytes) +
              "; it must be a positive integer");
    return 0;
  }
  return value->get<int64_t>();
}

double HfConfigKeys::Number(const char* key, double fallback) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_number() || !std::isfinite(value->get<double>())) {
    Issue(codes::kModelConfigInvalid, key,
          "has '" + Name(key) + "' = " + ShownJsonValue(*value, kShownKeyValueBytes) +
              "; it must be a number");
    return fallback;
  }
  return value->get<double>();
}

bool HfConfigKeys::Flag(const char* key, bool fallback) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_boolean()) {
    Issue(codes::kModelConfigInvalid, key,
          "has '" + Name(key) + "' = " + ShownJsonValue(*value, kShownKeyValueBytes) +
              "; it must be true or false");
    return fallback;
  }
  return value->get<bool>();
}

std::string HfConfigKeys::Text(const char* key, const std::string& fallback) {
  const nlohmann::json* value = Find(key);
  if (value == nullptr) return fallback;
  if (!value->is_string()) {
    Issue(codes::kModelConfigInvalid, key,
          "has '" + Name(key) + "' = " + ShownJsonValue(*value, kShownKeyValueBytes) +
              "; it must be a string");
    return fallback;
  }
  return value->get<std::string>();
}

void HfConfigKeys::Refuse(const char* key, const std::string& reason) {
  const nlohmann::json* value = Find(key);
  const std::string shown = value ? ShownJsonValue(*value, kShownKeyValueBytes) : "null";
  Issue(codes::kModelTypeUnsupported, key, "has '" + Name(key) + "' = " + shown + "; " + reason);
}

HfConfigKeys HfConfigKeys::Object(const char* key) {
  const nlohmann::json* value = Find(key);
  if (value != nullptr && value->is_object()) {
    return HfConfigKeys(*value, text_, Child(path_, key), *issues_);
  }
  Issue(codes::kModelConfigInvalid, key,
        value == nullptr ? "has no '" + Name(key) + "' object"
                         : "has '" + Name(key) + "' = " +
                               ShownJsonValue(*value, kShownKeyValueBytes) +
                               "; it must be an object");
  HfConfigKeys empty(EmptyJsonObject(), text_, Child(path_, key), *issues_);
  empty.quiet_ = true;
  return empty;
}

}  // namespace accel::planner
