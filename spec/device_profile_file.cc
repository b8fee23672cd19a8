#include "spec/device_profile_file.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "common/diag_codes.h"
#include "common/spellcheck.h"
#include "spec/file_reader.h"
#include "spec/json_object.h"
#include "spec/text_checks.h"

namespace accel::spec {
namespace {

using Json = nlohmann::json;

struct StringKey {
  const char* key;
  std::string DeviceProfileValues::*field;
};
struct NumberKey {
  const char* key;
  double DeviceProfileValues::*field;
  bool fraction;  // an efficiency: (0, 1]
};

constexpr StringKey kStringKeys[] = {
    {"name", &DeviceProfileValues::name},
    {"source", &DeviceProfileValues::source},
};
constexpr NumberKey kNumberKeys[] = {
    {"matmul_fp32_flops_per_second", &DeviceProfileValues::matmul_fp32_flops_per_second, false},
    {"matmul_bf16_flops_per_second", &DeviceProfileValues::matmul_bf16_flops_per_second, false},
    {"matmul_fp16_flops_per_second", &DeviceProfileValues::matmul_fp16_flops_per_second, false},
    {"memory_bytes_per_second", &DeviceProfileValues::memory_bytes_per_second, false},
    {"intra_node_bytes_per_second", &DeviceProfileValues::intra_node_bytes_per_second, false},
    {"intra_node_latency_seconds", &DeviceProfileValues::intra_node_latency_seconds, false},
    {"inter_node_bytes_per_second", &DeviceProfileValues::inter_node_bytes_per_second, false},
    {"inter_node_latency_seconds", &DeviceProfileValues::inter_node_latency_seconds, false},
    {"matmul_efficiency", &DeviceProfileValues::matmul_efficiency, true},
    {"memory_efficiency", &DeviceProfileValues::memory_efficiency, true},
    {"link_efficiency", &DeviceProfileValues::link_efficiency, true},
};

// Values quoted in messages are cut so a hostile file cannot flood the terminal.
std::string Shown(const Json& value) {
  if (value.is_array()) return "an array";
  if (value.is_object()) return "an object";
  std::string text = value.dump();
  return text.size() <= 40 ? text : text.substr(0, 40) + "...";
}

void Issue(DeviceProfileResult& result, std::string message) {
  result.issues.push_back({codes::kDeviceProfileInvalid, std::move(message), {}});
}

void ReadKeys(const Json& object, DeviceProfileResult& result, DeviceProfileValues& values) {
  for (const StringKey& k : kStringKeys) {
    auto it = object.find(k.key);
    if (it == object.end()) {
      Issue(result, std::string("has no '") + k.key + "'");
    } else if (!it->is_string() || it->get<std::string>().empty()) {
      Issue(result, std::string("has '") + k.key + "' = " + Shown(*it) +
                        "; it must be a non-empty string");
    } else {
      values.*k.field = it->get<std::string>();
    }
  }
  for (const NumberKey& k : kNumberKeys) {
    auto it = object.find(k.key);
    if (it == object.end()) {
      Issue(result, std::string("has no '") + k.key + "'");
      continue;
    }
    const bool positive = it->is_number() && std::isfinite(it->get<double>()) &&
                          it->get<double>() > 0;
    if (!positive || (k.fraction && it->get<double>() > 1)) {
      Issue(result, std::string("has '") + k.key + "' = " + Shown(*it) +
                        (k.fraction ? "; it must be a number in (0, 1]"
                                    : "; it must be a positive number"));
      continue;
    }
    values.*k.field = it->get<double>();
  }
  if (auto it = object.find("shared_cores_per_node"); it != object.end()) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() > 1 << 20) {
      Issue(result, "has 'shared_cores_per_node' = " + Shown(*it) +
                        "; it must be an integer from 0 to 1048576");
    } else {
      values.shared_cores_per_node = it->get<int64_t>();
    }
  }
  const std::vector<std::string>& known = DeviceProfileKeys();
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool is_known = false;
    for (const std::string& key : known) is_known = is_known || key == it.key();
    if (is_known) continue;
    const std::string key = it.key().size() <= 40 ? it.key() : it.key().substr(0, 40) + "...";
    std::optional<std::string> close = ClosestMatch(it.key(), known);
    Issue(result, "has unknown key '" + key + "'" +
                      (close ? " (did you mean '" + *close + "'?)" : ""));
  }
}

}  // namespace

const std::vector<std::string>& DeviceProfileKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const StringKey& s : kStringKeys) k.emplace_back(s.key);
    for (const NumberKey& n : kNumberKeys) k.emplace_back(n.key);
    k.emplace_back("shared_cores_per_node");
    return k;
  }();
  return keys;
}

DeviceProfileResult ParseDeviceProfile(std::string_view json_text) {
  DeviceProfileResult result;
  result.text = std::string(json_text);
  JsonObjectProblem problem;
  std::optional<Json> parsed = ParseJsonObject(json_text, "device profile", problem);
  if (!parsed) {
    result.issues.push_back({codes::kDeviceProfileInvalid, problem.message, problem.location});
    return result;
  }
  const Json& json = *parsed;
  DeviceProfileValues values;
  ReadKeys(json, result, values);
  if (result.issues.empty()) result.values = std::move(values);
  return result;
}

DeviceProfileResult ReadDeviceProfile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileLimited(path, kMaxSpecFileBytes);
  if (!text.ok()) {
    DeviceProfileResult result;
    std::string reason(text.status().message());
    if (text.status().code() == absl::StatusCode::kOutOfRange) {
      reason = "it is " + reason + " bytes, more than the 1 MiB limit";
    }
    result.issues.push_back({codes::kDeviceProfileUnreadable, "cannot be read: " + reason, {}});
    return result;
  }
  return ParseDeviceProfile(*text);
}

bool IsDeviceProfilePath(std::string_view value) {
  return value.find('/') != std::string_view::npos ||
         (value.size() >= 5 && value.substr(value.size() - 5) == ".json");
}

std::string DeviceProfileToJson(const DeviceProfileValues& values) {
  std::string out = "{\n";
  for (const StringKey& k : kStringKeys) {
    out += "  " + Json(k.key).dump() + ": " + Json(values.*k.field).dump() + ",\n";
  }
  for (size_t i = 0; i < std::size(kNumberKeys); ++i) {
    char number[40];
    std::snprintf(number, sizeof(number), "%.17g", values.*kNumberKeys[i].field);
    out += "  " + Json(kNumberKeys[i].key).dump() + ": " + number + ",\n";
  }
  return out + "  \"shared_cores_per_node\": " + std::to_string(values.shared_cores_per_node) +
         "\n}\n";
}

}  // namespace accel::spec
