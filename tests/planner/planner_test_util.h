#ifndef ACCEL_TESTS_PLANNER_PLANNER_TEST_UTIL_H_
#define ACCEL_TESTS_PLANNER_PLANNER_TEST_UTIL_H_

#include <string>

#include "common/diagnostics.h"
#include "planner/planner.h"
#include "spec/loader.h"

namespace accel::planner::testing {

// A small valid llama job on 2 nodes x 8 CUDA devices; tests override fields with --set.
inline constexpr const char* kBaseSpec = R"(version: 1
name: unit
model:
  arch: llama
  hidden_size: 512
  num_layers: 8
  num_heads: 8
  num_kv_heads: 4
  ffn_hidden_size: 1376
  vocab_size: 32000
  max_seq_len: 1024
data:
  train: {path: data.bin, format: tokens, tokenizer: bytes}
  seq_len: 512
  micro_batch_size: 2
training:
  steps: 10
parallel:
  data_replicate: auto
  tensor: 2
cluster:
  nodes: 2
  devices_per_node: 8
  device: cuda
  device_memory: 80GiB
)";

// Loads `yaml` (as file "job.yaml") with `overrides`, plans it, and renders every diagnostic.
struct Planned {
  bool loaded = false;
  PlanResult result;
  std::string diagnostics;  // RenderText of everything reported
};

inline Planned PlanYaml(const std::string& yaml, std::vector<std::string> overrides = {},
                        PlanOptions options = {}) {
  Planned out;
  DiagnosticSink sink;
  SourceManager sources;
  spec::LoadOptions load;
  load.overrides = std::move(overrides);
  std::optional<spec::JobSpec> job = spec::LoadJobSpecFromString(yaml, "job.yaml", load, sink,
                                                                 sources);
  out.loaded = job.has_value();
  if (job) {
    options.verify_each_pass = true;
    out.result = BuildPlan(*job, options, sink);
  }
  out.diagnostics = RenderText(sink.diagnostics(), sources);
  return out;
}

}  // namespace accel::planner::testing

#endif  // ACCEL_TESTS_PLANNER_PLANNER_TEST_UTIL_H_
