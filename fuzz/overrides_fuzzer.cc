// libFuzzer target: `--set section.key=value` arguments. Each line of the input is one argument;
// they are parsed (spec::ParseOverride) and applied, in order, to a fixed valid job file, which is
// then planned and verified like `accel plan job.yaml --set ... --set ...`.
//
// Invariants: ParseOverride's result has the documented form (a dotted path of [A-Za-z0-9_]
// names, index -1 or a decimal in [0, 9999], no surrounding blanks in the value); the loader
// returns a spec exactly when it reported no error; a plan the planner calls ok verifies.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostics.h"
#include "fuzz/fuzz_util.h"
#include "ir/plan_verifier.h"
#include "planner/planner.h"
#include "spec/loader.h"
#include "spec/overrides.h"

namespace {

// A small job with every section, so overrides can reach each field's converter.
constexpr std::string_view kJob = R"(version: 1
name: fuzz-overrides
model:
  arch: gpt2
  hidden_size: 64
  num_layers: 4
  num_heads: 4
  vocab_size: 256
  max_seq_len: 128
data:
  train: {path: corpus.txt, format: text, tokenizer: bytes}
  seq_len: 64
  micro_batch_size: 4
  global_batch_size: auto
training:
  steps: 100
  optimizer: {name: adamw, lr: 1.0e-3, betas: [0.9, 0.95], weight_decay: 0.1}
  lr_schedule: {name: cosine, warmup_steps: 10}
  grad_clip_norm: 1.0
  seed: 1234
precision: {params: fp32, compute: fp32, reduce: fp32}
parallel: {data_replicate: auto, data_shard: 1, tensor: 1, pipeline: 1}
sharding: {stage: 0}
checkpoint: {every_steps: 50, keep: 2, resume: auto}
cluster: {nodes: 1, devices_per_node: 4, device: cpu, device_memory: 8GiB}
)";

constexpr size_t kMaxArguments = 8;

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

void CheckParsed(const accel::spec::Override& o, std::string_view argument) {
  const std::string what = "ParseOverride(\"" + std::string(argument) + "\")";
  ACCEL_FUZZ_CHECK(!o.path.empty() && o.path.front() != '.' && o.path.back() != '.',
                   what + ": bad path '" + o.path + "'");
  for (size_t i = 0; i < o.path.size(); ++i) {
    const char c = o.path[i];
    ACCEL_FUZZ_CHECK(IsNameChar(c) || (c == '.' && o.path[i - 1] != '.'),
                     what + ": bad path '" + o.path + "'");
  }
  ACCEL_FUZZ_CHECK(o.index >= -1 && o.index <= 9999, what + ": index " + std::to_string(o.index));
  ACCEL_FUZZ_CHECK(o.bad_index.empty() || o.index == -1, what + ": both an index and a bad one");
  ACCEL_FUZZ_CHECK(o.value.empty() || (o.value.front() != ' ' && o.value.front() != '\t' &&
                                       o.value.back() != ' ' && o.value.back() != '\t'),
                   what + ": value not trimmed");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  spec::LoadOptions options;
  // The JSON Schema pass checks the file's YAML, which is fixed and valid here (overrides are
  // checked by the loader's own typing): skipping it changes no result and triples the speed.
  options.skip_schema = true;
  for (std::string_view line : fuzz::Split(input, "\n", kMaxArguments)) {
    if (std::optional<spec::Override> parsed = spec::ParseOverride(line)) CheckParsed(*parsed, line);
    options.overrides.emplace_back(line);
  }
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<spec::JobSpec> job =
      spec::LoadJobSpecFromString(kJob, "fuzz.yaml", options, sink, sources);
  ACCEL_FUZZ_CHECK(job.has_value() == !sink.HasErrors(), "loader result disagrees with its errors");
  if (job) {
    planner::PlanResult result = planner::BuildPlan(*job, planner::PlanOptions{}, sink);
    if (result.ok) {
      std::vector<std::string> violations = ir::VerifyPlan(result.plan);
      ACCEL_FUZZ_CHECK(violations.empty(), "planned job does not verify: " + violations.front());
    }
  }
  (void)RenderText(sink.diagnostics(), sources);
  return 0;
}
