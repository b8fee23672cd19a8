// Device-profile files (cluster.device_profile): what `accel calibrate` writes reads back
// exactly, and bad files report every problem.
#include <catch2/catch.hpp>

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

}  // namespace
}  // namespace accel::spec
