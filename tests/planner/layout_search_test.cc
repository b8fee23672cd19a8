// The layout search (planner/layout_search.h): the ranking against plans made independently
// through the loader's --set overrides, the counts, and a job that fits only when sharded.
#include "planner/layout_search.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ir/plan_verifier.h"
#include "planner/step_time_diff.h"
#include "planner_test_util.h"

namespace accel::planner {
namespace {

using testing::Planned;
using testing::PlanYaml;

// A small llama job on one node of 8 GPUs with a fixed global batch.
constexpr const char* kSmallJob = R"(version: 1
name: search-small
model: {arch: llama, hidden_size: 512, num_layers: 8, num_heads: 8, num_kv_heads: 4,
        ffn_hidden_size: 1376, vocab_size: 32000, max_seq_len: 1024}
data:
  train: {path: data.bin, format: tokens, tokenizer: bytes}
  seq_len: 512
  micro_batch_size: 2
  global_batch_size: 16
training: {steps: 10}
parallel: {data_replicate: auto, tensor: 2}
cluster: {nodes: 1, devices_per_node: 8, device: cuda, device_model: h100-80gb, device_memory: 80GiB}
)";

// One attention head and one layer, so tensor and pipeline parallelism cannot split it: fp32
// AdamW states of ~0.1 B parameters (16 B each) fit in 1.25 GiB only when sharded.
constexpr const char* kNeedsSharding = R"(version: 1
name: search-needs-sharding
model: {arch: llama, hidden_size: 1024, num_layers: 1, num_heads: 1, num_kv_heads: 1,
        ffn_hidden_size: 4096, vocab_size: 32000, max_seq_len: 256}
data:
  train: {path: data.bin, format: tokens, tokenizer: bytes}
  seq_len: 256
  micro_batch_size: 1
  global_batch_size: 8
training: {steps: 10}
precision: {params: fp32, compute: bf16, reduce: fp32}
parallel: {data_replicate: auto}
cluster: {nodes: 1, devices_per_node: 8, device: cuda, device_model: h100-80gb,
          device_memory: 1280MiB, runtime_overhead: 0}
)";

spec::JobSpec Load(const std::string& yaml) {
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<spec::JobSpec> job =
      spec::LoadJobSpecFromString(yaml, "job.yaml", {}, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job.has_value());
  return *job;
}

// The --set arguments that give `layout` through the loader (not through ApplyLayout).
std::vector<std::string> Overrides(const Layout& l) {
  return {"parallel.data_replicate=" + std::to_string(l.data_replicate),
          "parallel.data_shard=" + std::to_string(l.data_shard),
          "parallel.tensor=" + std::to_string(l.tensor),
          "parallel.pipeline=" + std::to_string(l.pipeline),
          "parallel.pipeline_schedule=" + std::string(spec::Name(l.schedule)),
          "sharding.stage=" + std::to_string(l.sharding_stage),
          "data.micro_batch_size=" + std::to_string(l.micro_batch_size),
          "training.recompute=" + std::string(spec::Name(l.recompute))};
}

bool Fits(const ir::Plan& plan) {
  for (const ir::MemoryEstimate& m : plan.memory()) {
    if (!m.fits()) return false;
  }
  return !plan.memory().empty();
}

TEST_CASE("search: the winner is the fastest fitting candidate", "[search]") {
  const spec::JobSpec job = Load(kSmallJob);
  absl::StatusOr<SearchResult> result = SearchLayouts(job);
  REQUIRE(result.ok());
  REQUIRE(!result->ranked.empty());
  CHECK(result->global_batch == 16);
  CHECK(result->enumerated == static_cast<int64_t>(EnumerateLayouts(job, 16).size()));
  CHECK(result->enumerated > result->valid);
  CHECK(result->valid >= result->fitting);
  CHECK(result->fitting == static_cast<int64_t>(result->ranked.size()));
  const RankedLayout& winner = result->ranked.front();
  for (const RankedLayout& r : result->ranked) {
    CHECK(winner.step_time.step_seconds() <= r.step_time.step_seconds());
  }
  // The winner planned again through the loader is an ordinary, verified, fitting plan with
  // the same step time.
  Planned again = PlanYaml(kSmallJob, Overrides(winner.layout));
  INFO(again.diagnostics);
  REQUIRE(again.result.ok);
  CHECK(Fits(again.result.plan));
  CHECK(again.result.plan.step_time().step_seconds() == winner.step_time.step_seconds());
  // Layouts planned independently: each one that fits is no faster than the winner.
  for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
           {},
           {"parallel.tensor=1"},
           {"parallel.tensor=4", "sharding.stage=0"},
           {"parallel.tensor=1", "parallel.data_shard=8", "sharding.stage=3"},
           {"parallel.tensor=2", "parallel.pipeline=2", "training.recompute=full"}}) {
    Planned p = PlanYaml(kSmallJob, sets);
    INFO(p.diagnostics);
    REQUIRE(p.result.ok);
    REQUIRE(Fits(p.result.plan));
    CHECK(winner.step_time.step_seconds() <= p.result.plan.step_time().step_seconds());
  }
}

TEST_CASE("search: a job that fits only when sharded picks a sharded layout", "[search]") {
  const spec::JobSpec job = Load(kNeedsSharding);
  // The spec's own layout (stage 0, pure data parallelism) is valid but does not fit.
  PlanOptions options;
  options.allow_not_fitting = true;
  Planned unsharded = PlanYaml(kNeedsSharding, {}, options);
  INFO(unsharded.diagnostics);
  REQUIRE(unsharded.result.ok);
  CHECK(!Fits(unsharded.result.plan));
  absl::StatusOr<SearchResult> result = SearchLayouts(job);
  REQUIRE(result.ok());
  REQUIRE(!result->ranked.empty());
  for (const RankedLayout& r : result->ranked) {
    CHECK(r.layout.sharding_stage >= 1);
    CHECK(r.layout.data_shard > 1);
  }
}

TEST_CASE("search: a global batch of auto is the one the spec resolves to", "[search]") {
  spec::JobSpec job = Load(kSmallJob);
  job.data.global_batch_size = spec::AutoOr<int64_t>::Auto();
  absl::StatusOr<SearchResult> result = SearchLayouts(job);
  REQUIRE(result.ok());
  CHECK(result->global_batch == 8);  // micro 2 x data_replicate 4
}

TEST_CASE("search: BuildPlanAndInspect sees the plan BuildPlan returns", "[search]") {
  for (const char* yaml : {kSmallJob, kNeedsSharding}) {
    const spec::JobSpec job = Load(yaml);
    PlanOptions options;
    options.allow_not_fitting = true;
    DiagnosticSink sink_a;
    DiagnosticSink sink_b;
    PlanResult built = BuildPlan(job, options, sink_a);
    std::string inspected;
    const bool ok = BuildPlanAndInspect(job, options, sink_b, [&](const ir::Plan& plan) {
      inspected = plan.SerializeAsString();
    });
    CHECK(ok == built.ok);
    CHECK(inspected == built.plan.SerializeAsString());
    CHECK(sink_a.diagnostics().size() == sink_b.diagnostics().size());
  }
}

// A gpt2 job with tied embeddings on 8 cpu workers: pipelined layouts keep a copy of the word
// embedding on the last stage; small buckets give every stage several.
constexpr const char* kTiedCpuJob = R"(version: 1
name: search-tied
model: {arch: gpt2, hidden_size: 128, num_layers: 4, num_heads: 4, vocab_size: 256, max_seq_len: 128}
data:
  train: {path: corpus.txt, format: text}
  seq_len: 128
  micro_batch_size: 2
  global_batch_size: 32
training: {steps: 10}
parallel: {data_replicate: auto}
sharding: {bucket_size: 40000, param_persistence_threshold: 1000}
cluster: {nodes: 2, devices_per_node: 4, device: cpu, device_memory: 64MiB, runtime_overhead: 0}
)";

bool SameLayout(const Layout& a, const Layout& b) {
  return a.data_replicate == b.data_replicate && a.data_shard == b.data_shard &&
         a.context == b.context && a.tensor == b.tensor && a.pipeline == b.pipeline &&
         a.sharding_stage == b.sharding_stage && a.micro_batch_size == b.micro_batch_size &&
         a.recompute == b.recompute && a.schedule == b.schedule;
}

// The search in summary mode and with full plans: the same counts and the same ranked list.
void CheckSummaryRanksAsFull(const spec::JobSpec& job) {
  SearchOptions full;
  full.summary_only = false;
  absl::StatusOr<SearchResult> a = SearchLayouts(job);
  absl::StatusOr<SearchResult> b = SearchLayouts(job, full);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->global_batch == b->global_batch);
  CHECK(a->enumerated == b->enumerated);
  CHECK(a->valid == b->valid);
  CHECK(a->fitting == b->fitting);
  REQUIRE(a->ranked.size() == b->ranked.size());
  CHECK(!a->ranked.empty());
  for (size_t i = 0; i < a->ranked.size(); ++i) {
    const RankedLayout& x = a->ranked[i];
    const RankedLayout& y = b->ranked[i];
    INFO("rank " << i + 1 << ": " << DegreesText(x.layout) << " vs " << DegreesText(y.layout));
    CHECK(SameLayout(x.layout, y.layout));
    CHECK(x.grad_accum_steps == y.grad_accum_steps);
    CHECK(x.peak_device_bytes == y.peak_device_bytes);
    CHECK(x.device_limit_bytes == y.device_limit_bytes);
    // Bit for bit, profile, stages and communication terms included.
    CHECK(x.step_time.SerializeAsString() == y.step_time.SerializeAsString());
  }
}

spec::JobSpec LoadExample(const std::string& path, const std::vector<std::string>& overrides) {
  REQUIRE(chdir(ACCEL_SOURCE_ROOT) == 0);
  DiagnosticSink sink;
  SourceManager sources;
  spec::LoadOptions load;
  load.overrides = overrides;
  std::optional<spec::JobSpec> job = spec::LoadJobSpec(path, load, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job.has_value());
  return *job;
}

TEST_CASE("search: summary mode ranks exactly as full plans", "[search]") {
  for (const char* yaml : {kSmallJob, kNeedsSharding, kTiedCpuJob}) {
    INFO(yaml);
    CheckSummaryRanksAsFull(Load(yaml));
  }
  for (const char* path : {"examples/specs/gpt2-mini_cpu8_3d.yaml",
                           "examples/specs/llama-2-7b_2x8xa100_hybrid.yaml"}) {
    INFO(path);
    CheckSummaryRanksAsFull(LoadExample(path, {}));
  }
  INFO("llama-2-70b on 2 nodes");
  CheckSummaryRanksAsFull(
      LoadExample("examples/specs/llama-2-70b_16x8xh100_3d.yaml", {"cluster.nodes=2"}));
}

TEST_CASE("search: the winner replanned without summary mode is a verified plan", "[search]") {
  for (const char* yaml : {kSmallJob, kTiedCpuJob}) {
    const spec::JobSpec job = Load(yaml);
    absl::StatusOr<SearchResult> result = SearchLayouts(job);
    REQUIRE(result.ok());
    REQUIRE(!result->ranked.empty());
    const RankedLayout& winner = result->ranked.front();
    DiagnosticSink sink;
    PlanOptions options;
    options.verify_each_pass = true;
    PlanResult plan =
        BuildPlan(ApplyLayout(job, winner.layout, result->global_batch), options, sink);
    REQUIRE(plan.ok);
    CHECK(ir::VerifyPlan(plan.plan).empty());
    CHECK(plan.plan.ranks_size() == job.world_size());
    CHECK(plan.plan.sharding().units_size() > 0);
    CHECK(plan.plan.step_time().step_seconds() == winner.step_time.step_seconds());
    int64_t peak = 0;
    for (const ir::MemoryEstimate& m : plan.plan.memory())
      peak = std::max(peak, m.device_total_bytes());
    CHECK(peak == winner.peak_device_bytes);
  }
}

TEST_CASE("search: the enumeration keeps the batch identity", "[search]") {
  const spec::JobSpec job = Load(kSmallJob);
  const std::vector<Layout> layouts = EnumerateLayouts(job, 16);
  REQUIRE(!layouts.empty());
  for (const Layout& l : layouts) {
    CHECK(l.data_replicate * l.data_shard * l.tensor * l.pipeline == 8);
    CHECK(16 % (l.micro_batch_size * l.data_replicate * l.data_shard) == 0);
    CHECK(l.micro_batch_size <= 8);
    if (l.pipeline == 1) CHECK(l.schedule == spec::PipelineSchedule::k1F1B);
  }
}

TEST_CASE("search: the loss reason names the term that differs most", "[search]") {
  ir::StepTimeEstimate fast;
  fast.set_compute_seconds(1.0);
  fast.set_bubble_seconds(0.0);
  ir::StepTimeEstimate slow = fast;
  slow.set_compute_seconds(1.1);
  slow.set_bubble_seconds(0.05);
  ir::CommunicationTime* tp = slow.add_communication();
  tp->set_group("tp");
  tp->set_exposed_seconds(0.3);
  StepTimeDifference d = LargestDifference(slow, fast);
  CHECK(d.term == "exposed tp communication");
  CHECK(DifferenceText(d) == "exposed tp communication +300.0 ms");
  slow.set_bubble_seconds(0.5);
  CHECK(LargestDifference(slow, fast).term == "pipeline bubble");
  CHECK(DifferenceText(LargestDifference(fast, fast)) == "no term larger (tie)");
}

}  // namespace
}  // namespace accel::planner
