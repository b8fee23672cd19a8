// Device-profile files (cluster.device_profile): what `accel calibrate` writes reads back
// exactly, and bad files report every problem.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "spec/device_profile_file.h"

namespace accel::spec {
namespace {

DeviceProfileValues Sample() {
  DeviceProfileValues v;
  v.name = "cpu-calibrated";
  v.source = "accel calibrate on \"host\"";
  v.matmul_fp32_flops_per_second = 1.2345678901234567e11;
  v.matmul_bf16_flops_per_second = 2e10;
  v.matmul_fp16_flops_per_second = 3e10;
  v.memory_bytes_per_second = 1.5e10;
  v.intra_node_bytes_per_second = 2.25e9;
  v.intra_node_latency_seconds = 4.5e-5;
  v.inter_node_bytes_per_second = 1e9;
  v.inter_node_latency_seconds = 1e-4;
  v.matmul_efficiency = 1;
  v.memory_efficiency = 0.75;
  v.link_efficiency = 0.5;
  v.shared_cores_per_node = 2;
  return v;
}

TEST_CASE("a written device profile reads back exactly") {
  const DeviceProfileValues v = Sample();
  DeviceProfileResult r = ParseDeviceProfile(DeviceProfileToJson(v));
  REQUIRE(r.issues.empty());
  REQUIRE(r.values.has_value());
  CHECK(r.values->name == v.name);
  CHECK(r.values->source == v.source);
  CHECK(r.values->matmul_fp32_flops_per_second == v.matmul_fp32_flops_per_second);
  CHECK(r.values->intra_node_latency_seconds == v.intra_node_latency_seconds);
  CHECK(r.values->memory_efficiency == v.memory_efficiency);
  CHECK(r.values->shared_cores_per_node == 2);
}

TEST_CASE("matmul grids read back exactly and stay optional") {
  DeviceProfileValues v = Sample();
  v.matmul_grids.push_back({"fp32", {64, 256}, {1, 2, 3, 4, 5, 6, 7, 8.123456789012345e10}});
  v.matmul_grids.push_back({"bf16", {16, 32}, {9, 9, 9, 9, 9, 9, 9, 9}});
  v.matmul_grids.push_back({"bf16", {16, 32}, {3, 3, 3, 3, 3, 3, 3, 3}, "nt"});
  DeviceProfileResult r = ParseDeviceProfile(DeviceProfileToJson(v));
  REQUIRE(r.issues.empty());
  REQUIRE(r.values->matmul_grids.size() == 3);
  CHECK(r.values->matmul_grids[0].dtype == "fp32");
  CHECK(r.values->matmul_grids[0].layout == "nn");
  CHECK(r.values->matmul_grids[0].sizes == std::vector<int64_t>{64, 256});
  CHECK(r.values->matmul_grids[0].flops_per_second == v.matmul_grids[0].flops_per_second);
  CHECK(r.values->matmul_grids[1].dtype == "bf16");
  CHECK(r.values->matmul_grids[2].dtype == "bf16");
  CHECK(r.values->matmul_grids[2].layout == "nt");
  CHECK(r.values->matmul_grids[2].flops_per_second == v.matmul_grids[2].flops_per_second);
  CHECK(ParseDeviceProfile(DeviceProfileToJson(Sample())).values->matmul_grids.empty());
}

TEST_CASE("a matmul grid without a layout is nn, as profiles written before layouts are") {
  std::string text = DeviceProfileToJson(Sample());
  text.insert(text.rfind('}'), R"(, "matmul_grids": [{"dtype": "fp32", "sizes": [1, 2],
      "flops_per_second": [1, 1, 1, 1, 1, 1, 1, 1]}])");
  DeviceProfileResult r = ParseDeviceProfile(text);
  REQUIRE(r.issues.empty());
  REQUIRE(r.values->matmul_grids.size() == 1);
  CHECK(r.values->matmul_grids[0].layout == "nn");
}

// The profile `Sample()` with its "matmul_grids" value replaced by `grids` (JSON text).
std::vector<std::string> GridIssues(const std::string& grids) {
  std::string text = DeviceProfileToJson(Sample());
  text.insert(text.rfind('}'), ", \"matmul_grids\": " + grids);
  std::vector<std::string> messages;
  for (const DeviceProfileIssue& i : ParseDeviceProfile(text).issues) {
    CHECK(i.code == "E0205");
    messages.push_back(i.message);
  }
  return messages;
}

TEST_CASE("bad matmul grids are named field by field") {
  CHECK(GridIssues("{}") == std::vector<std::string>{
            "has 'matmul_grids' = an object; it must be an array of at most 9 grids, one per "
            "dtype and layout"});
  CHECK(GridIssues("[1]") == std::vector<std::string>{
            "has 'matmul_grids[0]' = 1; it must be an object"});
  CHECK(GridIssues(R"([{"dtype": "int8", "sizes": [4, 2], "flops_per_second": [1], "x": 1}])") ==
        std::vector<std::string>{
            "has 'matmul_grids[0].dtype' = \"int8\"; it must be \"fp32\", \"bf16\" or \"fp16\"",
            "has 'matmul_grids[0].sizes' = an array; it must be 2 to 16 strictly increasing "
            "integers from 1 to 1048576",
            "has unknown key 'matmul_grids[0].x'"});
  CHECK(GridIssues(R"([{"dtype": "fp32", "sizes": [1, 2], "flops_per_second": [1, 2, 3]}])") ==
        std::vector<std::string>{
            "has 'matmul_grids[0].flops_per_second' that is not 8 (sizes³) finite positive "
            "numbers"});
  CHECK(GridIssues(R"([{"dtype": "fp32", "sizes": [1, 2], "flops_per_second": [1, 1, 1, 1, 1, 1, 1, 0]}])") ==
        std::vector<std::string>{
            "has 'matmul_grids[0].flops_per_second' that is not 8 (sizes³) finite positive "
            "numbers"});
  const std::string grid = R"({"dtype": "fp16", "sizes": [1, 2], "flops_per_second": [1, 1, 1, 1, 1, 1, 1, 1]})";
  CHECK(GridIssues("[" + grid + ", " + grid + "]") ==
        std::vector<std::string>{"has two matmul_grids for 'fp16' with layout 'nn'"});
  CHECK(GridIssues("[" + grid + "]").empty());
  const std::string nt = R"({"dtype": "fp16", "layout": "nt", "sizes": [1, 2], "flops_per_second": [1, 1, 1, 1, 1, 1, 1, 1]})";
  CHECK(GridIssues("[" + grid + ", " + nt + "]").empty());
  CHECK(GridIssues("[" + nt + ", " + nt + "]") ==
        std::vector<std::string>{"has two matmul_grids for 'fp16' with layout 'nt'"});
  CHECK(GridIssues(R"([{"dtype": "fp32", "layout": "tt", "sizes": [1, 2], "flops_per_second": [1, 1, 1, 1, 1, 1, 1, 1]}])") ==
        std::vector<std::string>{
            "has 'matmul_grids[0].layout' = \"tt\"; it must be \"nn\", \"nt\" or \"tn\""});
  CHECK(GridIssues(R"([{"dtype": "fp32", "layout": 2, "sizes": [1, 2], "flops_per_second": [1, 1, 1, 1, 1, 1, 1, 1]}])") ==
        std::vector<std::string>{
            "has 'matmul_grids[0].layout' = 2; it must be \"nn\", \"nt\" or \"tn\""});
}

TEST_CASE("elementwise costs read back exactly and stay optional") {
  DeviceProfileValues v = Sample();
  v.elementwise_costs.push_back({"gelu_tanh", "fp32", 4.25e-9, 6.5e-9});
  v.elementwise_costs.push_back({"gelu_tanh", "bf16", 1.0000000000000002e-8, 2e-8});
  DeviceProfileResult r = ParseDeviceProfile(DeviceProfileToJson(v));
  REQUIRE(r.issues.empty());
  REQUIRE(r.values->elementwise_costs.size() == 2);
  CHECK(r.values->elementwise_costs[0].op == "gelu_tanh");
  CHECK(r.values->elementwise_costs[1].dtype == "bf16");
  CHECK(r.values->elementwise_costs[1].forward_seconds_per_element == 1.0000000000000002e-8);
  CHECK(r.values->elementwise_costs[0].backward_seconds_per_element == 6.5e-9);
}

// The profile `Sample()` with an "elementwise_costs" value `costs` (JSON text).
std::vector<std::string> CostIssues(const std::string& costs) {
  std::string text = DeviceProfileToJson(Sample());
  text.insert(text.rfind('}'), ", \"elementwise_costs\": " + costs);
  std::vector<std::string> messages;
  for (const DeviceProfileIssue& i : ParseDeviceProfile(text).issues) messages.push_back(i.message);
  return messages;
}

TEST_CASE("bad elementwise costs are named field by field, with did-you-mean for ops") {
  CHECK(CostIssues("7") == std::vector<std::string>{
            "has 'elementwise_costs' = 7; it must be an array of at most 27 costs, one per op "
            "and dtype"});
  CHECK(CostIssues(R"([{"op": "gelu_tan", "dtype": "fp64", "forward_seconds_per_element": 0, "y": 1}])") ==
        std::vector<std::string>{
            "has 'elementwise_costs[0].op' = \"gelu_tan\"; it must name an elementwise op (did "
            "you mean 'gelu_tanh'?)",
            "has 'elementwise_costs[0].dtype' = \"fp64\"; it must be \"fp32\", \"bf16\" or \"fp16\"",
            "has 'elementwise_costs[0].forward_seconds_per_element' = 0; it must be a positive "
            "number",
            "has 'elementwise_costs[0].backward_seconds_per_element' = nothing; it must be a "
            "positive number",
            "has unknown key 'elementwise_costs[0].y'"});
  const std::string cost = R"({"op": "rms_norm", "dtype": "fp32", "forward_seconds_per_element": 1e-9, "backward_seconds_per_element": 2e-9})";
  CHECK(CostIssues("[" + cost + ", " + cost + "]") ==
        std::vector<std::string>{"has two elementwise_costs for 'rms_norm' in fp32"});
  CHECK(CostIssues("[" + cost + "]").empty());
}

TEST_CASE("worker scaling reads back exactly and stays optional") {
  DeviceProfileValues v = Sample();
  CHECK(DeviceProfileToJson(v).find("worker_scaling") == std::string::npos);
  v.worker_scaling.push_back({1, 0.61234567890123456});
  v.worker_scaling.push_back({2, 1});
  v.worker_scaling.push_back({4, 0.85});
  DeviceProfileResult r = ParseDeviceProfile(DeviceProfileToJson(v));
  REQUIRE(r.issues.empty());
  REQUIRE(r.values->worker_scaling.size() == 3);
  CHECK(r.values->worker_scaling[0].workers_per_node == 1);
  CHECK(r.values->worker_scaling[0].efficiency == 0.61234567890123456);
  CHECK(r.values->worker_scaling[2].workers_per_node == 4);
  CHECK(r.values->worker_scaling[2].efficiency == 0.85);
}

// The profile `Sample()` with a "worker_scaling" value `entries` (JSON text).
std::vector<std::string> ScalingIssues(const std::string& entries) {
  std::string text = DeviceProfileToJson(Sample());
  text.insert(text.rfind('}'), ", \"worker_scaling\": " + entries);
  std::vector<std::string> messages;
  for (const DeviceProfileIssue& i : ParseDeviceProfile(text).issues) messages.push_back(i.message);
  return messages;
}

TEST_CASE("bad worker scaling is named field by field") {
  CHECK(ScalingIssues("{}") == std::vector<std::string>{
            "has 'worker_scaling' = an object; it must be an array of at most 16 entries, one "
            "per worker count"});
  CHECK(ScalingIssues(R"([3, {"workers_per_node": 0, "efficiency": -1, "speed": 2}, {}])") ==
        std::vector<std::string>{
            "has 'worker_scaling[0]' = 3; it must be an object",
            "has 'worker_scaling[1].workers_per_node' = 0; it must be an integer from 1 to "
            "1048576",
            "has 'worker_scaling[1].efficiency' = -1; it must be a positive number",
            "has unknown key 'worker_scaling[1].speed'",
            "has 'worker_scaling[2].workers_per_node' = nothing; it must be an integer from 1 to "
            "1048576",
            "has 'worker_scaling[2].efficiency' = nothing; it must be a positive number"});
  CHECK(ScalingIssues(R"([{"workers_per_node": 2.5, "efficiency": 1}])") ==
        std::vector<std::string>{"has 'worker_scaling[0].workers_per_node' = 2.5; it must be an "
                                 "integer from 1 to 1048576"});
  const std::string entry = R"({"workers_per_node": 4, "efficiency": 0.8})";
  CHECK(ScalingIssues("[" + entry + ", " + entry + "]") ==
        std::vector<std::string>{"has two worker_scaling entries for 4 workers per node"});
  CHECK(ScalingIssues("[" + entry + "]").empty());
}

// The optional measured numbers: absent means 0 (not measured), and 0 is not written.
TEST_CASE("optional measured numbers read back exactly, default 0 and left out at 0") {
  struct Key {
    const char* name;
    double DeviceProfileValues::*field;
    double value;
  };
  for (const Key& k : {Key{"blocking_collective_seconds",
                           &DeviceProfileValues::blocking_collective_seconds, 1.2345678901234567e-3},
                       Key{"adamw_seconds_per_parameter",
                           &DeviceProfileValues::adamw_seconds_per_parameter, 3.2987654321e-9},
                       Key{"shared_core_bucket_overlap",
                           &DeviceProfileValues::shared_core_bucket_overlap, 0.4567}}) {
    INFO(k.name);
    DeviceProfileValues v = Sample();
    CHECK(DeviceProfileToJson(v).find(k.name) == std::string::npos);
    CHECK(ParseDeviceProfile(DeviceProfileToJson(v)).values.value().*k.field == 0);
    v.*k.field = k.value;
    CHECK(DeviceProfileToJson(v).find(k.name) != std::string::npos);
    DeviceProfileResult r = ParseDeviceProfile(DeviceProfileToJson(v));
    REQUIRE(r.issues.empty());
    CHECK(r.values.value().*k.field == k.value);
  }
}

// The issues `value` for `key`, appended to a valid profile, raises.
std::vector<std::string> OptionalKeyIssues(const std::string& key, const std::string& value) {
  std::string text = DeviceProfileToJson(Sample());
  text.insert(text.rfind('}'), ", \"" + key + "\": " + value);
  std::vector<std::string> messages;
  for (const DeviceProfileIssue& i : ParseDeviceProfile(text).issues) messages.push_back(i.message);
  return messages;
}

TEST_CASE("bad optional measured numbers are named with the rule") {
  for (const char* key : {"blocking_collective_seconds", "adamw_seconds_per_parameter"}) {
    for (const char* bad : {"-0.001", "\"1ms\"", "[]"}) {
      const std::string shown = std::string(bad) == "[]" ? "an array" : bad;
      CHECK(OptionalKeyIssues(key, bad) ==
            std::vector<std::string>{"has '" + std::string(key) + "' = " + shown +
                                     "; it must be a number of seconds >= 0"});
    }
  }
  for (const char* bad : {"-0.1", "1.5", "\"half\""}) {
    CHECK(OptionalKeyIssues("shared_core_bucket_overlap", bad) ==
          std::vector<std::string>{"has 'shared_core_bucket_overlap' = " + std::string(bad) +
                                   "; it must be a number from 0 to 1"});
  }
  CHECK(OptionalKeyIssues("shared_core_bucket_overlap", "1").empty());
  CHECK(OptionalKeyIssues("shared_core_bucket_overlap", "0").empty());
}

TEST_CASE("device profile problems are all reported, with did-you-mean for keys") {
  DeviceProfileResult r = ParseDeviceProfile(R"({"name": "x", "sorce": "y"})");
  CHECK_FALSE(r.values.has_value());
  REQUIRE(r.issues.size() == 13);
  CHECK(r.issues[0].code == "E0205");
  CHECK(r.issues[0].message == "has no 'source'");
  CHECK(r.issues.back().message == "has unknown key 'sorce' (did you mean 'source'?)");
  CHECK(ParseDeviceProfile("[1]").issues[0].message == "must hold a JSON object, got array");
  CHECK(IsDeviceProfilePath("profiles/cpu.json"));
  CHECK(IsDeviceProfilePath("cpu.json"));
  CHECK_FALSE(IsDeviceProfilePath("h100"));
}

// Found by fuzz/device_profile_fuzzer (fuzz/regressions/device_profile_fuzzer/): messages that
// were not UTF-8, which `accel validate --format json` could not print.
TEST_CASE("device profile messages stay UTF-8: quoted bytes and cut values") {
  // nlohmann quotes the byte it stopped at; one that is not UTF-8 shows as '?'.
  DeviceProfileResult r = ParseDeviceProfile("\x82");
  REQUIRE(r.issues.size() == 1);
  CHECK(r.issues[0].message ==
        "is not valid JSON: syntax error while parsing value - invalid literal; last read: '?'");
  CHECK(r.issues[0].location == SourceLocation{1, 1});
  // Keys and values are cut to 40 bytes at a character boundary: 39 'k' and no half 'é'.
  r = ParseDeviceProfile("{\"name\": \"x\", \"" + std::string(39, 'k') + "\u00e9\": 1}\n");
  REQUIRE_FALSE(r.issues.empty());
  CHECK(r.issues.back().message == "has unknown key '" + std::string(39, 'k') + "...'");
  std::string e_acute;
  for (int i = 0; i < 30; ++i) e_acute += "\u00e9";
  r = ParseDeviceProfile("{\"link_efficiency\": \"" + e_acute + "\"}\n");
  std::vector<std::string> messages;
  for (const DeviceProfileIssue& i : r.issues) messages.push_back(i.message);
  CHECK(std::find(messages.begin(), messages.end(),
                  "has 'link_efficiency' = \"" + e_acute.substr(0, 19 * 2) +
                      "...; it must be a number in (0, 1]") != messages.end());
}

}  // namespace
}  // namespace accel::spec
