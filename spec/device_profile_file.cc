#include "spec/device_profile_file.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "common/diag_codes.h"
#include "common/json_document.h"
#include "common/utf8.h"
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

// An optional number from 0 to `max` (0 when absent: not measured; written only when > 0).
struct OptionalNumberKey {
  const char* key;
  double DeviceProfileValues::*field;
  double max;
  const char* rule;  // what the error says it must be
};

constexpr double kUnbounded = std::numeric_limits<double>::max();

constexpr OptionalNumberKey kOptionalNumberKeys[] = {
    {"blocking_collective_seconds", &DeviceProfileValues::blocking_collective_seconds, kUnbounded,
     "a number of seconds >= 0"},
    {"adamw_seconds_per_parameter", &DeviceProfileValues::adamw_seconds_per_parameter, kUnbounded,
     "a number of seconds >= 0"},
    {"shared_core_bucket_overlap", &DeviceProfileValues::shared_core_bucket_overlap, 1.0,
     "a number from 0 to 1"},
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

// Values and keys quoted in messages are cut to this many bytes, so a hostile file cannot flood
// the terminal.
constexpr size_t kMaxShownProfileBytes = 40;

std::string Cut(const std::string& text) { return CutUtf8(text, kMaxShownProfileBytes); }
std::string Shown(const Json& value) { return ShownJsonValue(value, kMaxShownProfileBytes); }

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
  for (const OptionalNumberKey& k : kOptionalNumberKeys) {
    auto it = object.find(k.key);
    if (it == object.end()) continue;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0 ||
        it->get<double>() > k.max) {
      Issue(result, std::string("has '") + k.key + "' = " + Shown(*it) + "; it must be " + k.rule);
    } else {
      values.*k.field = it->get<double>();
    }
  }
  const std::vector<std::string>& known = DeviceProfileKeys();
  for (auto it = object.begin(); it != object.end(); ++it) {
    bool is_known = false;
    for (const std::string& key : known) is_known = is_known || key == it.key();
    if (is_known) continue;
    const std::string key = Cut(it.key());
    std::optional<std::string> close = ClosestMatch(it.key(), known);
    Issue(result, "has unknown key '" + key + "'" +
                      (close ? " (did you mean '" + *close + "'?)" : ""));
  }
}

bool IsSize(const Json& v) {
  return v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 1 << 20;
}

bool IsPositive(const Json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
}

// One grid of "matmul_grids"; `where` is "matmul_grids[i]". Issues are added to `result`.
std::optional<MatmulGridValues> ReadGrid(const Json& grid, const std::string& where,
                                         DeviceProfileResult& result) {
  if (!grid.is_object()) {
    Issue(result, "has '" + where + "' = " + Shown(grid) + "; it must be an object");
    return std::nullopt;
  }
  const size_t before = result.issues.size();
  MatmulGridValues out;
  const auto dtype = grid.find("dtype");
  if (dtype == grid.end() || !dtype->is_string() ||
      (*dtype != "fp32" && *dtype != "bf16" && *dtype != "fp16")) {
    Issue(result, "has '" + where + ".dtype' = " +
                      (dtype == grid.end() ? std::string("nothing") : Shown(*dtype)) +
                      "; it must be \"fp32\", \"bf16\" or \"fp16\"");
  } else {
    out.dtype = dtype->get<std::string>();
  }
  const auto layout = grid.find("layout");
  if (layout != grid.end() &&
      (!layout->is_string() || (*layout != "nn" && *layout != "nt" && *layout != "tn"))) {
    Issue(result, "has '" + where + ".layout' = " + Shown(*layout) +
                      "; it must be \"nn\", \"nt\" or \"tn\"");
  } else if (layout != grid.end()) {
    out.layout = layout->get<std::string>();
  }
  const auto sizes = grid.find("sizes");
  bool sizes_ok = sizes != grid.end() && sizes->is_array() && sizes->size() >= 2 &&
                  sizes->size() <= kMaxMatmulGridSizes;
  for (size_t i = 0; sizes_ok && i < sizes->size(); ++i) {
    sizes_ok = IsSize((*sizes)[i]) && (i == 0 || (*sizes)[i].get<int64_t>() > out.sizes.back());
    if (sizes_ok) out.sizes.push_back((*sizes)[i].get<int64_t>());
  }
  if (!sizes_ok) {
    Issue(result, "has '" + where + ".sizes' = " +
                      (sizes == grid.end() ? std::string("nothing") : Shown(*sizes)) +
                      "; it must be 2 to " + std::to_string(kMaxMatmulGridSizes) +
                      " strictly increasing integers from 1 to 1048576");
  }
  const auto flops = grid.find("flops_per_second");
  const size_t want = sizes_ok ? out.sizes.size() * out.sizes.size() * out.sizes.size() : 0;
  bool flops_ok = flops != grid.end() && flops->is_array() && (!sizes_ok || flops->size() == want);
  for (size_t i = 0; flops_ok && i < flops->size(); ++i) {
    flops_ok = IsPositive((*flops)[i]);
    if (flops_ok) out.flops_per_second.push_back((*flops)[i].get<double>());
  }
  if (!flops_ok) {
    Issue(result, "has '" + where + ".flops_per_second' that is not " +
                      (sizes_ok ? std::to_string(want) + " (sizes³) " : std::string()) +
                      "finite positive numbers");
  }
  for (auto it = grid.begin(); it != grid.end(); ++it) {
    if (it.key() != "dtype" && it.key() != "layout" && it.key() != "sizes" &&
        it.key() != "flops_per_second") {
      const std::string key = Cut(it.key());
      Issue(result, "has unknown key '" + where + "." + key + "'");
    }
  }
  if (result.issues.size() != before) return std::nullopt;
  return out;
}

// One entry of "elementwise_costs"; `where` is "elementwise_costs[i]".
std::optional<ElementwiseCostValues> ReadCost(const Json& cost, const std::string& where,
                                              DeviceProfileResult& result) {
  if (!cost.is_object()) {
    Issue(result, "has '" + where + "' = " + Shown(cost) + "; it must be an object");
    return std::nullopt;
  }
  const size_t before = result.issues.size();
  ElementwiseCostValues out;
  const auto op = cost.find("op");
  bool op_ok = op != cost.end() && op->is_string();
  if (op_ok) {
    op_ok = false;
    for (std::string_view name : kElementwiseOpNames) op_ok = op_ok || *op == name;
  }
  if (op_ok) {
    out.op = op->get<std::string>();
  } else {
    std::vector<std::string> names(kElementwiseOpNames.begin(), kElementwiseOpNames.end());
    std::optional<std::string> close =
        op != cost.end() && op->is_string() ? ClosestMatch(op->get<std::string>(), names)
                                            : std::nullopt;
    Issue(result, "has '" + where + ".op' = " +
                      (op == cost.end() ? std::string("nothing") : Shown(*op)) +
                      "; it must name an elementwise op" +
                      (close ? " (did you mean '" + *close + "'?)" : ""));
  }
  const auto dtype = cost.find("dtype");
  if (dtype == cost.end() || !dtype->is_string() ||
      (*dtype != "fp32" && *dtype != "bf16" && *dtype != "fp16")) {
    Issue(result, "has '" + where + ".dtype' = " +
                      (dtype == cost.end() ? std::string("nothing") : Shown(*dtype)) +
                      "; it must be \"fp32\", \"bf16\" or \"fp16\"");
  } else {
    out.dtype = dtype->get<std::string>();
  }
  for (auto [key, field] : {std::pair{"forward_seconds_per_element",
                                      &ElementwiseCostValues::forward_seconds_per_element},
                            std::pair{"backward_seconds_per_element",
                                      &ElementwiseCostValues::backward_seconds_per_element}}) {
    const auto it = cost.find(key);
    if (it == cost.end() || !IsPositive(*it)) {
      Issue(result, "has '" + where + "." + key + "' = " +
                        (it == cost.end() ? std::string("nothing") : Shown(*it)) +
                        "; it must be a positive number");
    } else {
      out.*field = it->get<double>();
    }
  }
  for (auto it = cost.begin(); it != cost.end(); ++it) {
    if (it.key() != "op" && it.key() != "dtype" && it.key() != "forward_seconds_per_element" &&
        it.key() != "backward_seconds_per_element") {
      const std::string key = Cut(it.key());
      Issue(result, "has unknown key '" + where + "." + key + "'");
    }
  }
  if (result.issues.size() != before) return std::nullopt;
  return out;
}

// One entry of "worker_scaling"; `where` is "worker_scaling[i]".
std::optional<WorkerScalingValues> ReadScaling(const Json& entry, const std::string& where,
                                               DeviceProfileResult& result) {
  if (!entry.is_object()) {
    Issue(result, "has '" + where + "' = " + Shown(entry) + "; it must be an object");
    return std::nullopt;
  }
  const size_t before = result.issues.size();
  WorkerScalingValues out;
  const auto workers = entry.find("workers_per_node");
  if (workers == entry.end() || !IsSize(*workers)) {
    Issue(result, "has '" + where + ".workers_per_node' = " +
                      (workers == entry.end() ? std::string("nothing") : Shown(*workers)) +
                      "; it must be an integer from 1 to 1048576");
  } else {
    out.workers_per_node = workers->get<int64_t>();
  }
  const auto efficiency = entry.find("efficiency");
  if (efficiency == entry.end() || !IsPositive(*efficiency)) {
    Issue(result, "has '" + where + ".efficiency' = " +
                      (efficiency == entry.end() ? std::string("nothing") : Shown(*efficiency)) +
                      "; it must be a positive number");
  } else {
    out.efficiency = efficiency->get<double>();
  }
  for (auto it = entry.begin(); it != entry.end(); ++it) {
    if (it.key() != "workers_per_node" && it.key() != "efficiency") {
      Issue(result, "has unknown key '" + where + "." + Cut(it.key()) + "'");
    }
  }
  if (result.issues.size() != before) return std::nullopt;
  return out;
}

// The optional array `key` of a profile, at most `limit` entries (`noun` names them in the
// message, e.g. "grids, one per dtype"): each entry read by `read` (named "key[i]" in its
// messages) and appended to `out` unless it has issues; `duplicate(seen, entry)` gives the
// message for an entry that repeats an earlier one, "" when they differ.
template <typename T, typename Read, typename Duplicate>
void ReadArray(const Json& object, const std::string& key, size_t limit, const std::string& noun,
               Read read, Duplicate duplicate, DeviceProfileResult& result, std::vector<T>& out) {
  const auto array = object.find(key);
  if (array == object.end()) return;
  if (!array->is_array() || array->size() > limit) {
    Issue(result, "has '" + key + "' = " + Shown(*array) + "; it must be an array of at most " +
                      std::to_string(limit) + " " + noun);
    return;
  }
  for (size_t i = 0; i < array->size(); ++i) {
    std::optional<T> entry = read((*array)[i], key + "[" + std::to_string(i) + "]", result);
    if (!entry) continue;
    for (const T& seen : out) {
      const std::string message = duplicate(seen, *entry);
      if (!message.empty()) Issue(result, message);
    }
    out.push_back(std::move(*entry));
  }
}

void ReadArrays(const Json& object, DeviceProfileResult& result, DeviceProfileValues& values) {
  ReadArray(object, "matmul_grids", 9, "grids, one per dtype and layout", ReadGrid,
            [](const MatmulGridValues& seen, const MatmulGridValues& grid) {
              return seen.dtype == grid.dtype && seen.layout == grid.layout
                         ? "has two matmul_grids for '" + grid.dtype + "' with layout '" +
                               grid.layout + "'"
                         : std::string();
            },
            result, values.matmul_grids);
  ReadArray(object, "elementwise_costs", kElementwiseOpNames.size() * 3,
            "costs, one per op and dtype", ReadCost,
            [](const ElementwiseCostValues& seen, const ElementwiseCostValues& cost) {
              return seen.op == cost.op && seen.dtype == cost.dtype
                         ? "has two elementwise_costs for '" + cost.op + "' in " + cost.dtype
                         : std::string();
            },
            result, values.elementwise_costs);
  ReadArray(object, "worker_scaling", kMaxWorkerScalingEntries, "entries, one per worker count",
            ReadScaling,
            [](const WorkerScalingValues& seen, const WorkerScalingValues& entry) {
              return seen.workers_per_node == entry.workers_per_node
                         ? "has two worker_scaling entries for " +
                               std::to_string(entry.workers_per_node) + " workers per node"
                         : std::string();
            },
            result, values.worker_scaling);
}

std::string Number(double value) {
  char number[40];
  std::snprintf(number, sizeof(number), "%.17g", value);
  return number;
}

std::string GridsToJson(const std::vector<MatmulGridValues>& grids) {
  std::string out = "  \"matmul_grids\": [";
  for (size_t g = 0; g < grids.size(); ++g) {
    out += g == 0 ? "\n    {" : ",\n    {";
    out += "\"dtype\": " + Json(grids[g].dtype).dump() +
           ", \"layout\": " + Json(grids[g].layout).dump() +
           ", \"sizes\": " + Json(grids[g].sizes).dump() + ",\n     \"flops_per_second\": [";
    for (size_t i = 0; i < grids[g].flops_per_second.size(); ++i) {
      out += (i == 0 ? "" : (i % 6 == 0 ? ",\n       " : ", ")) + Number(grids[g].flops_per_second[i]);
    }
    out += "]}";
  }
  return out + "\n  ]";
}

std::string CostsToJson(const std::vector<ElementwiseCostValues>& costs) {
  std::string out = "  \"elementwise_costs\": [";
  for (size_t i = 0; i < costs.size(); ++i) {
    out += (i == 0 ? "\n    {" : ",\n    {") + std::string("\"op\": ") + Json(costs[i].op).dump() +
           ", \"dtype\": " + Json(costs[i].dtype).dump() +
           ", \"forward_seconds_per_element\": " + Number(costs[i].forward_seconds_per_element) +
           ", \"backward_seconds_per_element\": " + Number(costs[i].backward_seconds_per_element) +
           "}";
  }
  return out + "\n  ]";
}

std::string ScalingToJson(const std::vector<WorkerScalingValues>& entries) {
  std::string out = "  \"worker_scaling\": [";
  for (size_t i = 0; i < entries.size(); ++i) {
    out += (i == 0 ? "\n    {" : ",\n    {") + std::string("\"workers_per_node\": ") +
           std::to_string(entries[i].workers_per_node) +
           ", \"efficiency\": " + Number(entries[i].efficiency) + "}";
  }
  return out + "\n  ]";
}

}  // namespace

const std::vector<std::string>& DeviceProfileKeys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (const StringKey& s : kStringKeys) k.emplace_back(s.key);
    for (const NumberKey& n : kNumberKeys) k.emplace_back(n.key);
    k.emplace_back("shared_cores_per_node");
    k.emplace_back("matmul_grids");
    k.emplace_back("elementwise_costs");
    k.emplace_back("worker_scaling");
    for (const OptionalNumberKey& n : kOptionalNumberKeys) k.emplace_back(n.key);
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
  ReadArrays(json, result, values);
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
  for (const NumberKey& k : kNumberKeys) {
    out += "  " + Json(k.key).dump() + ": " + Number(values.*k.field) + ",\n";
  }
  out += "  \"shared_cores_per_node\": " + std::to_string(values.shared_cores_per_node);
  if (!values.matmul_grids.empty()) out += ",\n" + GridsToJson(values.matmul_grids);
  if (!values.elementwise_costs.empty()) out += ",\n" + CostsToJson(values.elementwise_costs);
  if (!values.worker_scaling.empty()) out += ",\n" + ScalingToJson(values.worker_scaling);
  for (const OptionalNumberKey& k : kOptionalNumberKeys) {
    if (values.*k.field > 0) out += ",\n  " + Json(k.key).dump() + ": " + Number(values.*k.field);
  }
  return out + "\n}\n";
}

}  // namespace accel::spec
