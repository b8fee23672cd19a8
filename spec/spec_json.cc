#include "spec/spec_json.h"


namespace accel::spec {

nlohmann::json YamlToJson(const YamlNode& node) {
  const YamlNode& n = node.content();
  switch (n.kind) {
    case YamlNode::Kind::kMapping: {
      nlohmann::json object = nlohmann::json::object();
      for (const YamlEntry& entry : n.entries) {
        const YamlNode& key = entry.key->content();
        std::string name = key.kind == YamlNode::Kind::kScalar ? key.value : "";
        if (object.contains(name)) continue;
        object[name] = YamlToJson(*entry.value);
      }
      return object;
    }
    case YamlNode::Kind::kSequence: {
      nlohmann::json array = nlohmann::json::array();
      for (const YamlNode* item : n.items) array.push_back(YamlToJson(*item));
      return array;
    }
    case YamlNode::Kind::kScalar:
      break;
  }
  switch (n.scalar_type) {
    case ScalarType::kNull:
      return nullptr;
    case ScalarType::kBool:
      return n.value[0] == 't' || n.value[0] == 'T';
    case ScalarType::kInt: {
      int64_t value = 0;
      if (ParseYamlInt(n.value, &value)) return value;
      return n.value.substr(0, kMaxJsonStringBytes);
    }
    case ScalarType::kFloat: {
      double value = 0;
      if (ParseYamlFloat(n.value, &value)) return value;
      return n.value.substr(0, kMaxJsonStringBytes);
    }
    case ScalarType::kString:
      return n.value.substr(0, kMaxJsonStringBytes);
  }
  return nullptr;
}

JsonPathTarget LocateJsonPath(const YamlNode& root, const std::vector<std::string>& path) {
  JsonPathTarget target{"", {1, 1}};
  const YamlNode* node = &root;
  for (const std::string& part : path) {
    const YamlNode& n = node->content();
    if (n.kind == YamlNode::Kind::kMapping) {
      const YamlEntry* found = nullptr;
      for (const YamlEntry& entry : n.entries) {
        if (entry.key->is_scalar() && entry.key->content().value == part) {
          found = &entry;
          break;
        }
      }
      if (found == nullptr) break;
      target.field += (target.field.empty() ? "" : ".") + part;
      node = found->value;
      target.location = node->is_scalar() ? node->location : found->key->location;
    } else if (n.kind == YamlNode::Kind::kSequence) {
      size_t index = 0;
      bool numeric = !part.empty() && part.size() < 10;
      for (char c : part) numeric = numeric && c >= '0' && c <= '9';
      if (numeric) index = std::stoul(part);
      if (!numeric || index >= n.items.size()) break;
      target.field += "[" + part + "]";
      node = n.items[index];
      target.location = node->location;
    } else {
      break;
    }
  }
  return target;
}

}  // namespace accel::spec
