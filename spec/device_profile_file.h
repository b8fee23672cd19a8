#ifndef ACCEL_SPEC_DEVICE_PROFILE_FILE_H_
#define ACCEL_SPEC_DEVICE_PROFILE_FILE_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/source_location.h"

// Reads a device-profile JSON file (written by `accel calibrate`, or by hand) named by the spec
// field `cluster.device_profile`. The file is one flat JSON object whose keys are the fields of
// accel.ir.DeviceProfile (ir/plan.proto), with the same units:
//   {"name": "cpu-calibrated", "source": "accel calibrate on host x",
//    "matmul_fp32_flops_per_second": 1.1e11, "matmul_bf16_flops_per_second": 2.0e10,
//    "matmul_fp16_flops_per_second": 1.0e10, "memory_bytes_per_second": 1.5e10,
//    "intra_node_bytes_per_second": 2.0e9, "intra_node_latency_seconds": 5e-5,
//    "inter_node_bytes_per_second": 1.2e9, "inter_node_latency_seconds": 1e-4,
//    "matmul_efficiency": 1, "memory_efficiency": 1, "link_efficiency": 1,
//    "shared_cores_per_node": 2}
// and optionally, as `accel calibrate` writes it, matmul throughput by shape
// (accel.ir.MatmulGrid), at most one grid per (dtype, layout); "layout" is optional ("nn"):
//    "matmul_grids": [{"dtype": "fp32", "layout": "nt", "sizes": [64, 256],
//                      "flops_per_second": [8 numbers, (m, n, k) in row-major order]}]
// and elementwise op costs (accel.ir.ElementwiseCost), at most one per (op, dtype):
//    "elementwise_costs": [{"op": "gelu_tanh", "dtype": "fp32",
//                           "forward_seconds_per_element": 5e-9,
//                           "backward_seconds_per_element": 7e-9}]
// and, on CPU profiles, how fast a worker runs by the node's worker count
// (accel.ir.WorkerScaling), at most one entry per count:
//    "worker_scaling": [{"workers_per_node": 1, "efficiency": 0.6}]
// and what a blocking tensor-parallel collective adds to a step beyond its ring-model time
// (accel.ir.DeviceProfile.blocking_collective_seconds, ≥ 0):
//    "blocking_collective_seconds": 1.2e-3
// and the AdamW step's seconds per parameter (accel.ir.DeviceProfile.adamw_seconds_per_parameter,
// ≥ 0) and the fraction of the gradient buckets' time hidden on shared cores
// (accel.ir.DeviceProfile.shared_core_bucket_overlap, 0 to 1):
//    "adamw_seconds_per_parameter": 3.3e-9, "shared_core_bucket_overlap": 0.45
// Every key but shared_cores_per_node (default 0), matmul_grids, elementwise_costs,
// worker_scaling, blocking_collective_seconds, adamw_seconds_per_parameter and
// shared_core_bucket_overlap (default 0) is required; unknown keys are errors (a misspelt key
// must not fall back silently).
namespace accel::spec {

// One matmul throughput grid of a profile file (accel.ir.MatmulGrid): dtype "fp32", "bf16" or
// "fp16"; layout "nn", "nt" or "tn" (accel.ir.MatmulLayout; "nn" when the key is absent); 2 to
// kMaxMatmulGridSizes strictly increasing sizes from 1 to 1048576; sizes³ finite, positive
// FLOP/s.
struct MatmulGridValues {
  std::string dtype;
  std::vector<int64_t> sizes;
  std::vector<double> flops_per_second;
  std::string layout = "nn";
};

// The most sizes one grid may have (16³ = 4,096 figures).
inline constexpr int kMaxMatmulGridSizes = 16;

// The elementwise ops a profile may cost, in planner::ElementwiseOp order (what each is:
// planner/elementwise_ops.h).
inline constexpr std::array<std::string_view, 9> kElementwiseOpNames = {
    "layer_norm",    "rms_norm", "gelu_tanh",    "silu_mul", "causal_softmax",
    "cross_entropy", "rotary",   "residual_add", "bias_add"};

// One measured elementwise op of a profile file (accel.ir.ElementwiseCost): op in
// kElementwiseOpNames, dtype "fp32", "bf16" or "fp16", finite positive seconds per element.
struct ElementwiseCostValues {
  std::string op;
  std::string dtype;
  double forward_seconds_per_element = 0;
  double backward_seconds_per_element = 0;
};

// One worker count's efficiency in a profile file (accel.ir.WorkerScaling): workers_per_node an
// integer from 1 to 1048576, efficiency a finite positive number.
struct WorkerScalingValues {
  int64_t workers_per_node = 0;
  double efficiency = 0;
};

// The most worker_scaling entries one profile may have.
inline constexpr int kMaxWorkerScalingEntries = 16;

// The numbers of a device-profile file, as read. Units as in accel.ir.DeviceProfile.
struct DeviceProfileValues {
  std::string name;
  std::string source;
  double matmul_fp32_flops_per_second = 0;
  double matmul_bf16_flops_per_second = 0;
  double matmul_fp16_flops_per_second = 0;
  double memory_bytes_per_second = 0;
  double intra_node_bytes_per_second = 0;
  double intra_node_latency_seconds = 0;
  double inter_node_bytes_per_second = 0;
  double inter_node_latency_seconds = 0;
  double matmul_efficiency = 0;  // (0, 1]
  double memory_efficiency = 0;  // (0, 1]
  double link_efficiency = 0;    // (0, 1]
  int64_t shared_cores_per_node = 0;  // optional key; ≥ 0 (see accel.ir.DeviceProfile)
  std::vector<MatmulGridValues> matmul_grids;  // optional key; distinct dtypes
  std::vector<ElementwiseCostValues> elementwise_costs;  // optional key; distinct (op, dtype)
  std::vector<WorkerScalingValues> worker_scaling;  // optional key; distinct worker counts
  double blocking_collective_seconds = 0;  // optional key; finite, ≥ 0
  double adamw_seconds_per_parameter = 0;  // optional key; finite, ≥ 0
  double shared_core_bucket_overlap = 0;   // optional key; 0 to 1
};

// One problem with a profile file: E0204 unreadable, E0205 malformed. `message` is a predicate
// without a subject ("has no 'name'"), so callers prefix "device profile 'x.json' "; it is valid
// UTF-8, and the values and keys it quotes are cut to 40 bytes. `location` is in the JSON text
// for syntax errors, unknown otherwise.
struct DeviceProfileIssue {
  std::string code;
  std::string message;
  SourceLocation location;
};

// The outcome of reading a profile: `values` on success, else every issue found.
struct DeviceProfileResult {
  std::optional<DeviceProfileValues> values;
  std::vector<DeviceProfileIssue> issues;
  std::string text;  // the file's contents, for diagnostics; empty when unreadable
};

// The key names of a profile file, in the order above.
const std::vector<std::string>& DeviceProfileKeys();

// Parses profile JSON text (at most 1 MiB). Issues (all reported): syntax errors (located),
// a top level that is not an object, a missing key, an unknown key, a string key that is not a
// non-empty string, a number that is not finite and positive, an efficiency above 1, a
// matmul grid that breaks MatmulGridValues' rules or repeats a (dtype, layout), an elementwise
// cost that breaks ElementwiseCostValues' rules or repeats an (op, dtype), a worker_scaling
// entry that breaks WorkerScalingValues' rules or repeats a worker count.
DeviceProfileResult ParseDeviceProfile(std::string_view json_text);

// Reads and parses the file at `path`; E0204 when it cannot be read.
DeviceProfileResult ReadDeviceProfile(const std::string& path);

// Whether a cluster.device_profile value names a file (ends in ".json" or contains '/') rather
// than a built-in profile.
bool IsDeviceProfilePath(std::string_view value);

// Serializes `values` in the file format above (keys in DeviceProfileKeys order, two-space
// indented, numbers with 17 significant digits so they read back exactly).
std::string DeviceProfileToJson(const DeviceProfileValues& values);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_DEVICE_PROFILE_FILE_H_
