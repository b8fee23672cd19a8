// libFuzzer target: a device-profile JSON file (`cluster.device_profile`, what `accel calibrate`
// writes), read by spec::ParseDeviceProfile; a profile that reads is written back with
// spec::DeviceProfileToJson and read again.
//
// Invariants: values come back exactly when no issue was reported; every issue has a code and a
// message, a known location lies inside the text, and the message renders as the loader shows
// it, as text and as JSON (`accel validate --format json`: the message must be valid UTF-8); the
// values keep the rules spec/device_profile_file.h gives them; and, as the header promises, the
// written file reads back exactly (every number, string and list equal) and writes the same text
// again.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "fuzz/fuzz_util.h"
#include "spec/device_profile_file.h"
#include "spec/text_checks.h"

namespace {

using accel::spec::DeviceProfileValues;
using accel::spec::ElementwiseCostValues;
using accel::spec::MatmulGridValues;

bool Positive(double v) { return std::isfinite(v) && v > 0; }
bool Dtype(const std::string& d) { return d == "fp32" || d == "bf16" || d == "fp16"; }

// The rules of DeviceProfileValues, MatmulGridValues and ElementwiseCostValues.
void CheckValues(const DeviceProfileValues& v) {
  ACCEL_FUZZ_CHECK(!v.name.empty() && !v.source.empty(), "empty name or source accepted");
  for (double x : {v.matmul_fp32_flops_per_second, v.matmul_bf16_flops_per_second,
                   v.matmul_fp16_flops_per_second, v.memory_bytes_per_second,
                   v.intra_node_bytes_per_second, v.intra_node_latency_seconds,
                   v.inter_node_bytes_per_second, v.inter_node_latency_seconds}) {
    ACCEL_FUZZ_CHECK(Positive(x), "a figure that is not finite and positive: " + std::to_string(x));
  }
  for (double x : {v.matmul_efficiency, v.memory_efficiency, v.link_efficiency}) {
    ACCEL_FUZZ_CHECK(Positive(x) && x <= 1, "an efficiency outside (0, 1]: " + std::to_string(x));
  }
  ACCEL_FUZZ_CHECK(v.shared_cores_per_node >= 0 && v.shared_cores_per_node <= (1 << 20),
                   "shared_cores_per_node out of range");
  ACCEL_FUZZ_CHECK(v.matmul_grids.size() <= 9, "more than 9 matmul grids");
  for (size_t g = 0; g < v.matmul_grids.size(); ++g) {
    const MatmulGridValues& grid = v.matmul_grids[g];
    ACCEL_FUZZ_CHECK(Dtype(grid.dtype), "grid dtype " + grid.dtype);
    ACCEL_FUZZ_CHECK(grid.layout == "nn" || grid.layout == "nt" || grid.layout == "tn",
                     "grid layout " + grid.layout);
    for (size_t h = 0; h < g; ++h) {
      ACCEL_FUZZ_CHECK(v.matmul_grids[h].dtype != grid.dtype || v.matmul_grids[h].layout != grid.layout,
                       "two grids of one dtype and layout");
    }
    const size_t n = grid.sizes.size();
    ACCEL_FUZZ_CHECK(n >= 2 && n <= accel::spec::kMaxMatmulGridSizes, "grid with " + std::to_string(n) + " sizes");
    for (size_t i = 0; i < n; ++i) {
      ACCEL_FUZZ_CHECK(grid.sizes[i] >= 1 && grid.sizes[i] <= (1 << 20) && (i == 0 || grid.sizes[i] > grid.sizes[i - 1]),
                       "grid sizes not strictly increasing in [1, 1048576]");
    }
    ACCEL_FUZZ_CHECK(grid.flops_per_second.size() == n * n * n, "grid without sizes³ figures");
    for (double x : grid.flops_per_second) ACCEL_FUZZ_CHECK(Positive(x), "grid figure not finite and positive");
  }
  ACCEL_FUZZ_CHECK(v.elementwise_costs.size() <= accel::spec::kElementwiseOpNames.size() * 3,
                   "more elementwise costs than (op, dtype) pairs");
  for (size_t c = 0; c < v.elementwise_costs.size(); ++c) {
    const ElementwiseCostValues& cost = v.elementwise_costs[c];
    bool known = false;
    for (std::string_view op : accel::spec::kElementwiseOpNames) known = known || op == cost.op;
    ACCEL_FUZZ_CHECK(known && Dtype(cost.dtype), "elementwise cost of " + cost.op + " in " + cost.dtype);
    ACCEL_FUZZ_CHECK(Positive(cost.forward_seconds_per_element) && Positive(cost.backward_seconds_per_element),
                     "elementwise cost not finite and positive");
    for (size_t d = 0; d < c; ++d) {
      ACCEL_FUZZ_CHECK(v.elementwise_costs[d].op != cost.op || v.elementwise_costs[d].dtype != cost.dtype,
                       "two elementwise costs of one (op, dtype)");
    }
  }
  ACCEL_FUZZ_CHECK(v.worker_scaling.size() <= accel::spec::kMaxWorkerScalingEntries,
                   "more worker_scaling entries than allowed");
  for (size_t w = 0; w < v.worker_scaling.size(); ++w) {
    const accel::spec::WorkerScalingValues& entry = v.worker_scaling[w];
    ACCEL_FUZZ_CHECK(entry.workers_per_node >= 1 && entry.workers_per_node <= (1 << 20),
                     "worker_scaling count out of range");
    ACCEL_FUZZ_CHECK(Positive(entry.efficiency), "worker_scaling efficiency not finite and positive");
    for (size_t d = 0; d < w; ++d) {
      ACCEL_FUZZ_CHECK(v.worker_scaling[d].workers_per_node != entry.workers_per_node,
                       "two worker_scaling entries of one count");
    }
  }
}

// Exact equality, field by field (doubles with ==: none can be NaN, CheckValues saw to that).
bool Same(const DeviceProfileValues& a, const DeviceProfileValues& b) {
  if (a.name != b.name || a.source != b.source || a.shared_cores_per_node != b.shared_cores_per_node ||
      a.matmul_fp32_flops_per_second != b.matmul_fp32_flops_per_second ||
      a.matmul_bf16_flops_per_second != b.matmul_bf16_flops_per_second ||
      a.matmul_fp16_flops_per_second != b.matmul_fp16_flops_per_second ||
      a.memory_bytes_per_second != b.memory_bytes_per_second ||
      a.intra_node_bytes_per_second != b.intra_node_bytes_per_second ||
      a.intra_node_latency_seconds != b.intra_node_latency_seconds ||
      a.inter_node_bytes_per_second != b.inter_node_bytes_per_second ||
      a.inter_node_latency_seconds != b.inter_node_latency_seconds ||
      a.matmul_efficiency != b.matmul_efficiency || a.memory_efficiency != b.memory_efficiency ||
      a.link_efficiency != b.link_efficiency ||
      a.blocking_collective_seconds != b.blocking_collective_seconds ||
      a.adamw_seconds_per_parameter != b.adamw_seconds_per_parameter ||
      a.shared_core_bucket_overlap != b.shared_core_bucket_overlap ||
      a.matmul_grids.size() != b.matmul_grids.size() ||
      a.elementwise_costs.size() != b.elementwise_costs.size() ||
      a.worker_scaling.size() != b.worker_scaling.size()) {
    return false;
  }
  for (size_t w = 0; w < a.worker_scaling.size(); ++w) {
    if (a.worker_scaling[w].workers_per_node != b.worker_scaling[w].workers_per_node ||
        a.worker_scaling[w].efficiency != b.worker_scaling[w].efficiency) {
      return false;
    }
  }
  for (size_t g = 0; g < a.matmul_grids.size(); ++g) {
    const MatmulGridValues &x = a.matmul_grids[g], &y = b.matmul_grids[g];
    if (x.dtype != y.dtype || x.layout != y.layout || x.sizes != y.sizes ||
        x.flops_per_second != y.flops_per_second) {
      return false;
    }
  }
  for (size_t c = 0; c < a.elementwise_costs.size(); ++c) {
    const ElementwiseCostValues &x = a.elementwise_costs[c], &y = b.elementwise_costs[c];
    if (x.op != y.op || x.dtype != y.dtype || x.forward_seconds_per_element != y.forward_seconds_per_element ||
        x.backward_seconds_per_element != y.backward_seconds_per_element) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  spec::DeviceProfileResult result = spec::ParseDeviceProfile(text);
  ACCEL_FUZZ_CHECK(result.values.has_value() == result.issues.empty(), "values and issues disagree");

  // The issues as spec/loader.cc reports them (the E0205 at the spec field, a note at the JSON
  // error), rendered for the terminal and for `--format json`.
  int lines = 1;
  for (char c : text) lines += c == '\n';
  DiagnosticSink sink;
  SourceManager sources;
  sources.Add("job.yaml", "cluster:\n  device_profile: p.json\n");
  sources.Add("p.json", result.text);
  for (const spec::DeviceProfileIssue& issue : result.issues) {
    ACCEL_FUZZ_CHECK(issue.code == "E0205", "issue code " + issue.code + " from text");
    ACCEL_FUZZ_CHECK(!issue.message.empty(), "issue without a message");
    ACCEL_FUZZ_CHECK(!issue.location.known() || (issue.location.line <= lines && issue.location.column >= 1),
                     "issue located outside the text: line " + std::to_string(issue.location.line));
    Diagnostic& d = sink.Error(issue.code, "job.yaml", {2, 19}, "cluster.device_profile",
                               "device profile 'p.json' " + issue.message);
    if (issue.location.known()) d.Note("p.json", issue.location, "the JSON error is here");
  }
  (void)RenderText(sink.diagnostics(), sources);
  try {
    (void)RenderJson(sink.diagnostics());
  } catch (const std::exception& e) {
    fuzz::Fail(__FILE__, __LINE__, std::string("an issue does not render as JSON: ") + e.what());
  }
  if (!result.values) return 0;

  const DeviceProfileValues& values = *result.values;
  CheckValues(values);
  const std::string written = spec::DeviceProfileToJson(values);
  // Numbers are written with 17 digits, so a 1 MiB file of short numbers ("1") can grow past the
  // reader's 1 MiB limit; libFuzzer's inputs (a few KiB) never come near it.
  if (written.size() > spec::kMaxSpecFileBytes) return 0;
  spec::DeviceProfileResult again = spec::ParseDeviceProfile(written);
  ACCEL_FUZZ_CHECK(again.values.has_value(),
                   "the written profile does not read back: " + again.issues.front().message + "\n" + written);
  ACCEL_FUZZ_CHECK(Same(values, *again.values), "the written profile reads back different values:\n" + written);
  ACCEL_FUZZ_CHECK(spec::DeviceProfileToJson(*again.values) == written, "writing the profile again changes it");
  return 0;
}
