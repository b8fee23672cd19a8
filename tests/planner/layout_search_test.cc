// The layout search (planner/layout_search.h): the ranking against plans made independently
// through the loader's --set overrides, the counts, and a job that fits only when sharded.
#include "planner/layout_search.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/diag_codes.h"

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
          "parallel.context=" + std::to_string(l.context),
          "sharding.offload=" + std::string(spec::Name(l.offload)),
          std::string("sharding.hybrid=") + (l.hybrid ? "true" : "false"),
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
  // Sharded over data_shard, or (ZeRO-Offload) the optimizer states on the host.
  for (const RankedLayout& r : result->ranked) {
    CHECK(r.layout.sharding_stage >= 1);
    CHECK((r.layout.data_shard > 1 || r.layout.offload != spec::Offload::kNone));
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
         a.recompute == b.recompute && a.schedule == b.schedule && a.offload == b.offload &&
         a.hybrid == b.hybrid;
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
    // Bit for bit, stages and communication terms included; a summary leaves out the device
    // profile and the terms' descriptions (planner/step_time_estimator.h, explain false).
    auto numbers = [](ir::StepTimeEstimate t) {
      t.clear_profile();
      for (ir::CommunicationTime& c : *t.mutable_communication()) c.clear_what();
      return t.SerializeAsString();
    };
    CHECK(numbers(x.step_time) == numbers(y.step_time));
    CHECK(!y.step_time.communication().empty());
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
    CHECK(l.data_replicate * l.data_shard * l.tensor * l.pipeline * l.context == 8);
    CHECK(16 % (l.micro_batch_size * l.data_replicate * l.data_shard) == 0);
    CHECK(l.micro_batch_size <= 8);
    if (l.pipeline == 1) CHECK(l.schedule == spec::PipelineSchedule::k1F1B);
  }
}

TEST_CASE("search: the loss reason names the term that differs most", "[search]") {
  ir::StepTimeEstimate fast;
  fast.set_compute_seconds(1.0);
  fast.set_bubble_seconds(0.0);
  fast.set_step_seconds(1.0);
  ir::StepTimeEstimate slow = fast;
  slow.set_compute_seconds(1.1);
  slow.set_bubble_seconds(0.05);
  slow.set_step_seconds(1.45);
  ir::CommunicationTime* tp = slow.add_communication();
  tp->set_group("tp");
  tp->set_exposed_seconds(0.3);
  StepTimeDifference d = LargestDifference(slow, fast);
  CHECK(d.term == "exposed tp communication");
  CHECK_FALSE(d.same_step);
  CHECK(DifferenceText(d) == "exposed tp communication +300.0 ms");
  slow.set_bubble_seconds(0.5);
  CHECK(LargestDifference(slow, fast).term == "pipeline bubble");
  CHECK(DifferenceText(LargestDifference(fast, fast)) == "no term larger (tie)");
}

TEST_CASE("search: a layout with the same step time whose terms differ is a tie, said so", "[search]") {
  // Stage 2 with data_shard 1 all-reduces its buckets over dp_replicate where stage 0 does over
  // dp: the same seconds under another group's name.
  ir::StepTimeEstimate stage0;
  stage0.set_compute_seconds(0.939);
  stage0.set_step_seconds(0.989);
  ir::StepTimeEstimate stage2 = stage0;
  ir::CommunicationTime* dp = stage0.add_communication();
  dp->set_group("dp");
  dp->set_exposed_seconds(0.031);
  ir::CommunicationTime* dr = stage2.add_communication();
  dr->set_group("dp_replicate");
  dr->set_exposed_seconds(0.031);
  const StepTimeDifference d = LargestDifference(stage2, stage0);
  CHECK(d.same_step);
  CHECK(DifferenceText(d) == "tie (exposed dp_replicate communication +31.0 ms, offset by others)");
  // A step 1 ms longer is no tie.
  stage2.set_step_seconds(0.990);
  CHECK(DifferenceText(LargestDifference(stage2, stage0)) == "exposed dp_replicate communication +31.0 ms");
}


// ---- The dimensions of issue 10: hybrid sharding, offload and the context degree.

// The error codes the planner reports for `layout` applied to `job`.
std::set<std::string> ErrorCodes(const spec::JobSpec& job, const Layout& layout, int64_t global) {
  DiagnosticSink sink;
  PlanOptions options;
  options.allow_not_fitting = true;
  BuildPlan(ApplyLayout(job, layout, global), options, sink);
  std::set<std::string> codes;
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.severity == Severity::kError) codes.insert(d.code);
  }
  return codes;
}

// One rule of the enumeration: no candidate breaks it; the unfiltered enumeration has
// candidates that do, and the planner rejects each of them with `code`.
void CheckRule(const spec::JobSpec& job, int64_t global, const char* code,
               const std::function<bool(const Layout&)>& breaks) {
  INFO("rule " << code);
  for (const Layout& l : EnumerateLayouts(job, global)) {
    INFO(DegreesText(l) << " stage " << l.sharding_stage);
    REQUIRE(!breaks(l));
  }
  // validate-spec stops the planner before resolve-auto: a layout planned for a later rule
  // breaks none of its (offload below its stage, hybrid below stage 3).
  const bool later_pass = std::string(code) == codes::kContextNotDivisible ||
                          std::string(code) == codes::kHybridNeedsReplicate ||
                          std::string(code) == codes::kExpertNotDivisible;
  int64_t broken = 0;
  for (const Layout& l : EnumerateLayouts(job, global, /*apply_rules=*/false)) {
    if (!breaks(l)) continue;
    const bool spec_rules_broken =
        (l.offload != spec::Offload::kNone && l.sharding_stage == 0) ||
        (l.offload == spec::Offload::kAll && l.sharding_stage < 3) ||
        (l.hybrid && l.sharding_stage != 3);
    if (later_pass && spec_rules_broken) continue;
    if (broken++ >= 24) continue;  // planning two dozen is enough
    INFO(DegreesText(l) << " stage " << l.sharding_stage << " offload " << spec::Name(l.offload)
                        << " hybrid " << l.hybrid);
    CHECK(ErrorCodes(job, l, global).count(code) == 1);
  }
  CHECK(broken > 0);
}

TEST_CASE("search: E0417 kContextNotDivisible: cp only where 2·cp divides seq_len", "[search]") {
  spec::JobSpec job = Load(kSmallJob);
  job.data.seq_len = 200;  // 2·cp divides 200 for cp 1, 2, 4; not for cp 8
  std::set<int64_t> cps;
  for (const Layout& l : EnumerateLayouts(job, 16)) cps.insert(l.context);
  CHECK(cps == std::set<int64_t>{1, 2, 4});
  CheckRule(job, 16, codes::kContextNotDivisible,
            [](const Layout& l) { return l.context > 1 && 200 % (2 * l.context) != 0; });
}

TEST_CASE("search: E0409 kOffloadNeedsSharding: offload from sharding stage 1", "[search]") {
  const spec::JobSpec job = Load(kSmallJob);
  std::set<std::pair<int64_t, spec::Offload>> seen;
  for (const Layout& l : EnumerateLayouts(job, 16)) seen.insert({l.sharding_stage, l.offload});
  using O = spec::Offload;
  CHECK(seen == std::set<std::pair<int64_t, O>>{{0, O::kNone}, {1, O::kNone}, {1, O::kOptimizer},
                                                {2, O::kNone}, {2, O::kOptimizer}, {3, O::kNone},
                                                {3, O::kOptimizer}, {3, O::kAll}});
  CheckRule(job, 16, codes::kOffloadNeedsSharding, [](const Layout& l) {
    return l.offload != spec::Offload::kNone && l.sharding_stage == 0;
  });
}

TEST_CASE("search: E0414 kParamOffloadNeedsStage3: offload all only at stage 3", "[search]") {
  CheckRule(Load(kSmallJob), 16, codes::kParamOffloadNeedsStage3, [](const Layout& l) {
    return l.offload == spec::Offload::kAll && l.sharding_stage >= 1 && l.sharding_stage < 3;
  });
}

TEST_CASE("search: E0416 kHybridNeedsStage3: hybrid only at stage 3", "[search]") {
  CheckRule(Load(kSmallJob), 16, codes::kHybridNeedsStage3,
            [](const Layout& l) { return l.hybrid && l.sharding_stage != 3; });
}

TEST_CASE("search: E0410 kHybridNeedsReplicate: hybrid only with data_replicate > 1", "[search]") {
  CheckRule(Load(kSmallJob), 16, codes::kHybridNeedsReplicate, [](const Layout& l) {
    return l.hybrid && l.sharding_stage == 3 && l.data_replicate == 1;
  });
}

TEST_CASE("search: hybrid sharding is the stage-3 layouts with dp_replicate and dp_shard > 1",
          "[search]") {
  const spec::JobSpec job = Load(kSmallJob);
  int64_t hybrid = 0;
  for (const Layout& l : EnumerateLayouts(job, 16)) {
    CHECK(l.hybrid == (l.sharding_stage == 3 && l.data_replicate > 1 && l.data_shard > 1));
    hybrid += l.hybrid;
  }
  // Stage 3 with dp_replicate, dp_shard ≥ 2 (micro batches m with 16 % (m·dr·ds) == 0):
  // 2x2x2x1 (m 1, 2, 4); 2x2x1x2 (m 1 and 2: 4 and 2 microbatches, 3 schedules each; m 4: one
  // microbatch, gpipe only, E0407); 2x4x1x1 and 4x2x1x1 (m 1, 2); 2x2x1x1 cp2 (m 1, 2, 4):
  // 3 + 7 + 2 + 2 + 3 = 17, times 4 recompute x 3 offload.
  CHECK(hybrid == 17 * 12);
  // The flag changes nothing the executor runs or the estimate costs: the dp_replicate
  // all-reduce of the reduced shards is there either way.
  Layout l{2, 2, 1, 2, 1, 3, 2, spec::Recompute::kNone, spec::PipelineSchedule::k1F1B,
           spec::Offload::kNone, true};
  auto plan = [&](const Layout& layout) {
    DiagnosticSink sink;
    PlanResult r = BuildPlan(ApplyLayout(job, layout, 16), PlanOptions{}, sink);
    REQUIRE(r.ok);
    return r.plan;
  };
  const ir::Plan with = plan(l);
  l.hybrid = false;
  const ir::Plan without = plan(l);
  CHECK(with.sharding().hybrid());
  CHECK(!without.sharding().hybrid());
  CHECK(with.step_time().step_seconds() == without.step_time().step_seconds());
  int64_t replicate_terms = 0;
  for (const ir::CommunicationTime& c : with.step_time().communication()) {
    if (c.group() == "dp_replicate" && c.collective() == ir::COLLECTIVE_ALL_REDUCE) ++replicate_terms;
  }
  CHECK(replicate_terms == 1);
}

TEST_CASE("search: the cp ring exchange is a cp send_recv term per block and pass", "[search]") {
  const spec::JobSpec job = Load(kSmallJob);
  // cp 2, tp 2, dp_replicate 2, micro 2: 16 / (2 x 2) = 4 micro-steps, 8 layers, 3 passes.
  const Layout l{2, 1, 2, 2, 1, 0, 2, spec::Recompute::kNone, spec::PipelineSchedule::k1F1B,
                 spec::Offload::kNone, false};
  DiagnosticSink sink;
  PlanResult r = BuildPlan(ApplyLayout(job, l, 16), PlanOptions{}, sink);
  REQUIRE(r.ok);
  const ir::CommunicationTime* ring = nullptr;
  const ir::CommunicationTime* grads = nullptr;
  for (const ir::CommunicationTime& c : r.plan.step_time().communication()) {
    if (c.group() == "cp" && c.collective() == ir::COLLECTIVE_SEND_RECV) ring = &c;
    if (c.group() == "cp" && c.collective() == ir::COLLECTIVE_ALL_REDUCE) grads = &c;
  }
  REQUIRE(ring != nullptr);
  REQUIRE(grads != nullptr);
  CHECK(ring->calls() == 4 * 8 * 3 * 1);
  // K and V of 512 / cp 2 = 256 tokens: 2 x micro 2 x 256 x (kv 4 / tp 2) x head_dim 64 x the
  // compute dtype's bytes, 96 times.
  const int64_t compute_bytes = r.plan.precision().compute_dtype() == ir::DTYPE_FP32 ? 4 : 2;
  CHECK(ring->bytes() == 96 * (2 * 2 * 256 * 2 * 64 * compute_bytes));
  CHECK(ring->exposed_seconds() <= ring->seconds());
  CHECK(ring->group_size() == 2);
}

TEST_CASE("search: offload moves the optimizer step to the host and adds host_link copies",
          "[search]") {
  const spec::JobSpec job = Load(kSmallJob);
  Layout l{1, 4, 1, 2, 1, 2, 2, spec::Recompute::kNone, spec::PipelineSchedule::k1F1B,
           spec::Offload::kNone, false};
  auto plan = [&](const Layout& layout) {
    DiagnosticSink sink;
    PlanResult r = BuildPlan(ApplyLayout(job, layout, 16), PlanOptions{}, sink);
    REQUIRE(r.ok);
    return r.plan;
  };
  const ir::Plan none = plan(l);
  l.offload = spec::Offload::kOptimizer;
  const ir::Plan offload = plan(l);
  const ir::StageComputeTime& a = none.step_time().stages(0);
  const ir::StageComputeTime& b = offload.step_time().stages(0);
  CHECK(a.host_seconds() == 0);
  REQUIRE(b.host_memory_bytes() > 0);
  // The optimizer's bytes move from device memory traffic to the host's 76.8 GB/s (h100).
  CHECK(b.memory_bytes() + b.host_memory_bytes() == a.memory_bytes());
  CHECK(b.host_seconds() == b.host_memory_bytes() / 76.8e9);
  CHECK(offload.step_time().profile().host_link_bytes_per_second() == 64e9);
  std::set<std::string> host_copies;
  for (const ir::CommunicationTime& c : offload.step_time().communication()) {
    if (c.group() == "host_link") host_copies.insert(c.what());
    if (c.group() == "host_link") CHECK(c.link() == ir::LINK_CLASS_HOST);
  }
  CHECK(host_copies == std::set<std::string>{"reduced gradient shards to the host (offload)",
                                             "updated parameter shards to the device (offload)"});
  CHECK(offload.step_time().step_seconds() > none.step_time().step_seconds());
  const StepTimeDifference d = LargestDifference(offload.step_time(), none.step_time());
  CHECK((d.term == "host optimizer step" || d.term == "exposed host_link communication"));
}

TEST_CASE("search: skipping dominated variants ranks as planning every candidate", "[search]") {
  for (const char* yaml : {kSmallJob, kNeedsSharding, kTiedCpuJob}) {
    INFO(yaml);
    const spec::JobSpec job = Load(yaml);
    SearchOptions every;
    every.skip_dominated = false;
    absl::StatusOr<SearchResult> all = SearchLayouts(job, every);
    absl::StatusOr<SearchResult> some = SearchLayouts(job);
    REQUIRE(all.ok());
    REQUIRE(some.ok());
    CHECK(all->dominated == 0);
    CHECK(some->dominated > 0);
    CHECK(all->enumerated == some->enumerated);
    REQUIRE(!some->ranked.empty());
    CHECK(SameLayout(all->ranked.front().layout, some->ranked.front().layout));
    CHECK(all->ranked.front().step_time.step_seconds() ==
          some->ranked.front().step_time.step_seconds());
    // Every offload variant is at least as slow as its twin without offload, and gpipe as
    // its 1f1b twin (planned here, since nothing was skipped).
    for (const RankedLayout& r : all->ranked) {
      const bool offloads = r.layout.offload != spec::Offload::kNone;
      const bool gpipe = r.layout.schedule == spec::PipelineSchedule::kGpipe;
      if (!offloads && !gpipe) continue;
      for (const RankedLayout& t : all->ranked) {
        Layout base = r.layout;
        if (gpipe) base.schedule = spec::PipelineSchedule::k1F1B;
        const bool offload_twin = offloads && [&] {
          Layout b = r.layout;
          b.offload = spec::Offload::kNone;
          return SameLayout(b, t.layout);
        }();
        if (!offload_twin && !(gpipe && SameLayout(base, t.layout))) continue;
        INFO(DegreesText(r.layout) << " stage " << r.layout.sharding_stage << " micro "
                                   << r.layout.micro_batch_size << " "
                                   << spec::Name(r.layout.recompute) << " offload "
                                   << spec::Name(r.layout.offload) << " "
                                   << spec::Name(r.layout.schedule));
        if (gpipe && SameLayout(base, t.layout)) {
          CHECK(r.step_time.step_seconds() == t.step_time.step_seconds());
        } else {
          CHECK(r.step_time.step_seconds() >= t.step_time.step_seconds());
        }
      }
    }
  }
}

TEST_CASE("search: SearchOptions.refuse drops the plans an executor refuses", "[search]") {
  // As an executor without context parallelism on cpu would: cp refused there only.
  SearchOptions options;
  options.refuse = [](const ir::Plan& plan) -> std::string {
    int64_t cp = 1;
    for (const ir::MeshAxis& a : plan.mesh().axes()) {
      if (a.name() == "cp") cp = a.size();
    }
    return plan.topology().device_type() == ir::DEVICE_TYPE_CPU && cp > 1 ? "parallel.context" : "";
  };
  absl::StatusOr<SearchResult> cpu = SearchLayouts(Load(kTiedCpuJob), options);
  REQUIRE(cpu.ok());
  CHECK(cpu->refused > 0);
  CHECK(cpu->fitting == cpu->refused + static_cast<int64_t>(cpu->ranked.size()));
  for (const RankedLayout& r : cpu->ranked) CHECK(r.layout.context == 1);
  absl::StatusOr<SearchResult> cuda = SearchLayouts(Load(kSmallJob), options);
  REQUIRE(cuda.ok());
  CHECK(cuda->refused == 0);
  int64_t cp_rows = 0;
  for (const RankedLayout& r : cuda->ranked) cp_rows += r.layout.context > 1;
  CHECK(cp_rows > 0);
}

}  // namespace
}  // namespace accel::planner

namespace accel::planner {
namespace {

// kSmallJob with 8 routed experts (top-2) in every block.
std::string MoeJob() {
  std::string yaml = kSmallJob;
  const std::string model = "ffn_hidden_size: 1376, vocab_size: 32000, max_seq_len: 1024";
  yaml.replace(yaml.find(model), model.size(),
               model + ",\n        moe: {num_experts: 8, experts_per_token: 2, expert_ffn_size: 256}");
  return yaml;
}

TEST_CASE("search: E0424 kExpertNotDivisible: ep only for MoE models, dividing dp_shard x cp "
          "and the experts", "[search]") {
  const spec::JobSpec moe = Load(MoeJob());
  std::set<int64_t> eps;
  for (const Layout& l : EnumerateLayouts(moe, 16)) {
    eps.insert(l.expert);
    REQUIRE((l.data_shard * l.context) % l.expert == 0);
    REQUIRE(l.expert % l.context == 0);
  }
  CHECK(eps == std::set<int64_t>{1, 2, 4, 8});
  CheckRule(moe, 16, codes::kExpertNotDivisible, [](const Layout& l) {
    return (l.data_shard * l.context) % l.expert != 0 || l.expert % l.context != 0 ||
           8 % l.expert != 0;
  });
  // A dense model is searched at ep 1 only: exactly the candidates it had before the axis
  // (Llama-2-70B on 128 H100s: 53,856, bench/search_bench.cc's count before and after).
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<spec::JobSpec> llama = spec::LoadJobSpec(
      std::string(ACCEL_SOURCE_ROOT) + "/examples/specs/llama-2-70b_16x8xh100_3d.yaml", {}, sink,
      sources);
  REQUIRE(llama.has_value());
  const std::vector<Layout> layouts = EnumerateLayouts(*llama, 512);
  for (const Layout& l : layouts) REQUIRE(l.expert == 1);
  CHECK(layouts.size() == 53856);
}

TEST_CASE("search: MoE layouts are planned with their expert degree, a refusal leaves none ranked",
          "[search]") {
  const spec::JobSpec moe = Load(MoeJob());
  SearchOptions options;
  options.threads = 1;
  // Every plan refused (as `accel plan --search` refuses what the executor cannot run): none
  // ranked, all counted.
  options.refuse = [](const ir::Plan& plan) {
    return plan.model().moe().num_experts() > 0 ? std::string("moe") : std::string();
  };
  absl::StatusOr<SearchResult> refused = SearchLayouts(moe, options);
  REQUIRE(refused.ok());
  CHECK(refused->ranked.empty());
  CHECK(refused->refused > 0);
  options.refuse = nullptr;
  absl::StatusOr<SearchResult> forecast = SearchLayouts(moe, options);
  REQUIRE(forecast.ok());
  REQUIRE_FALSE(forecast->ranked.empty());
  std::set<int64_t> ranked_eps;
  for (const RankedLayout& r : forecast->ranked) ranked_eps.insert(r.layout.expert);
  CHECK(ranked_eps.count(2) == 1);
  // The winner replanned in full has the expert degree the search chose.
  const Layout& w = forecast->ranked.front().layout;
  CHECK(DegreesText(w).find(w.expert > 1 ? " ep" : "x") != std::string::npos);
  CHECK(ApplyLayout(moe, w, 16).parallel.expert.value == w.expert);
}

}  // namespace
}  // namespace accel::planner
