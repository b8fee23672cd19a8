// The step-time model: FLOPs against hand computations (Narayanan et al. 2021), the ring cost
// (Thakur et al. 2005), the bucket overlap, the pipeline bubble, and the estimate-step-time
// pass's profile choice and errors.
#include <catch2/catch.hpp>

#include <string>

#include "planner/collective_cost.h"
#include "planner/device_profiles.h"
#include "planner/step_communication.h"
#include "planner/step_flops.h"
#include "planner/step_time_estimator.h"
#include "planner_test_util.h"

namespace accel::planner {
namespace {

using Catch::Matchers::WithinRel;

ir::Model Llama7B() {
  ir::Model m;
  m.set_arch("llama");
  m.set_hidden_size(4096);
  m.set_num_layers(32);
  m.set_num_heads(32);
  m.set_num_kv_heads(32);
  m.set_head_dim(128);
  m.set_ffn_hidden_size(11008);
  m.set_vocab_size(32000);
  m.set_padded_vocab_size(32000);
  return m;
}

ir::Model Gpt2Small() {
  ir::Model m;
  m.set_arch("gpt2");
  m.set_hidden_size(768);
  m.set_num_layers(12);
  m.set_num_heads(12);
  m.set_num_kv_heads(12);
  m.set_head_dim(64);
  m.set_ffn_hidden_size(3072);
  m.set_vocab_size(50257);
  m.set_padded_vocab_size(50257);
  return m;
}

TEST_CASE("gpt2 block forward FLOPs are 24bsh^2 + 4bs^2h as in Narayanan et al. 2021") {
  // b = 1, s = 1024, h = 768: 24·1024·768² + 4·1024²·768 = 17,716,740,096.
  const LayerFlops f = LayerForwardFlops(Gpt2Small(), 1024, 1, 1, 1);
  CHECK(f.Total() == 17716740096.0);
  CHECK(f.attention == 4.0 * 1024 * 1024 * 768);
  // Head: 2·b·s·h·V = 2·1024·768·50257.
  CHECK(HeadForwardFlops(Gpt2Small(), 1024, 1, 1, 1) == 79047426048.0);
}

TEST_CASE("llama-7b block forward FLOPs by part, and tensor parallelism halves them") {
  const LayerFlops f = LayerForwardFlops(Llama7B(), 4096, 1, 1, 1);
  CHECK(f.qkv == 412316860416.0);        // 2·b·s·h·3h
  CHECK(f.attention == 274877906944.0);  // 4·b·s²·h
  CHECK(f.output == 137438953472.0);     // 2·b·s·h²
  CHECK(f.mlp == 1108101562368.0);       // 6·b·s·h·ffn (gated MLP)
  CHECK(f.Total() == 1932735283200.0);
  const LayerFlops t2 = LayerForwardFlops(Llama7B(), 4096, 1, 2, 1);
  CHECK(t2.Total() == 1932735283200.0 / 2);
  // Grouped-query attention: kv 8 heads of 128 shrink k and v projections to h·1024 each.
  ir::Model gqa = Llama7B();
  gqa.set_num_kv_heads(8);
  CHECK(LayerForwardFlops(gqa, 4096, 1, 1, 1).qkv == 2.0 * 4096 * 4096 * (4096 + 2 * 1024));
}

TEST_CASE("recompute adds the attention core (selective) or the whole block (full)") {
  const LayerFlops f = LayerForwardFlops(Gpt2Small(), 1024, 2, 1, 1);
  CHECK(LayerRecomputeFlops(f, RecomputeMode::kNone) == 0);
  CHECK(LayerRecomputeFlops(f, RecomputeMode::kSelective) == f.attention);
  CHECK(LayerRecomputeFlops(f, RecomputeMode::kFull) == f.Total());
  CHECK(BackwardFlops(f.Total()) == 2 * f.Total());
}

TEST_CASE("ring costs: alpha steps plus (p-1)/p factors") {
  const double n = 1e6, beta = 1e9, alpha = 1e-5;
  CHECK_THAT(RingSeconds(Collective::kAllReduce, 4, 1, n, beta, alpha),
             WithinRel(6 * alpha + 1.5 * n / beta, 1e-12));
  CHECK_THAT(RingSeconds(Collective::kAllGather, 4, 1, n, beta, alpha),
             WithinRel(3 * alpha + 0.75 * n / beta, 1e-12));
  CHECK_THAT(RingSeconds(Collective::kReduceScatter, 2, 3, n, beta, alpha),
             WithinRel(3 * (alpha + 0.5 * n / beta), 1e-12));
  CHECK_THAT(RingSeconds(Collective::kSendRecv, 2, 1, n, beta, alpha),
             WithinRel(alpha + n / beta, 1e-12));
  CHECK(RingSeconds(Collective::kAllReduce, 1, 5, n, beta, alpha) == 0);
  CHECK(RingFormula(Collective::kAllReduce, 4, 2, n, beta, alpha) ==
        "2 x (2*(4-1) x 1e-05 s + 2*(4-1)/4 x 1e+06 B / 1e+09 B/s)");
}

TEST_CASE("the ring fit recovers latency and bandwidth from exact samples") {
  const double alpha = 3e-5, beta = 2e9;
  std::vector<CollectiveSample> samples;
  for (int64_t p : {2, 4}) {
    for (double n : {4096.0, 1048576.0, 16777216.0}) {
      samples.push_back({p, n, RingSeconds(Collective::kAllReduce, p, 1, n, beta, alpha)});
    }
  }
  auto fit = FitAllReduceRing(samples);
  REQUIRE(fit.ok());
  CHECK_THAT(fit->latency_seconds, WithinRel(alpha, 1e-6));
  CHECK_THAT(fit->bytes_per_second, WithinRel(beta, 1e-6));
  CHECK_FALSE(FitAllReduceRing({samples[0]}).ok());
}

// A gpt2 job on 2 cpu workers with small buckets, so it has several of them.
constexpr const char* kCpuSpec = R"(version: 1
name: unit
model: {arch: gpt2, hidden_size: 128, num_layers: 4, num_heads: 4, vocab_size: 256, max_seq_len: 128}
data:
  train: {path: corpus.txt, format: text}
  seq_len: 128
  micro_batch_size: 4
training:
  steps: 10
parallel: {data_replicate: auto}
sharding: {bucket_size: 100000}
cluster: {nodes: 1, devices_per_node: 2, device: cpu, device_memory: 8GiB}
)";

ir::DeviceProfile TestProfile() {
  ir::DeviceProfile p = *BuiltinDeviceProfile("cpu");
  p.set_intra_node_bytes_per_second(1e8);
  p.set_intra_node_latency_seconds(1e-4);
  return p;
}

TEST_CASE("gradient buckets hide behind backward except the last one") {
  testing::Planned planned = testing::PlanYaml(kCpuSpec);
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  REQUIRE(plan.sharding().buckets_size() >= 3);
  const ir::DeviceProfile profile = TestProfile();
  double total_bytes = 0, last_bytes = 0;
  for (const ir::Bucket& b : plan.sharding().buckets()) {
    total_bytes += static_cast<double>(b.bytes());
    last_bytes = static_cast<double>(b.bytes());
  }
  const int64_t n = plan.sharding().buckets_size();
  const double bucket = total_bytes / static_cast<double>(n);
  const double all = RingSeconds(Collective::kAllReduce, 2, n, bucket, 1e8, 1e-4);
  const double last = all * last_bytes / total_bytes;

  // A long backward hides everything but the last bucket.
  auto terms = StageCommunication(plan, profile, 0, 100.0);
  REQUIRE(terms.ok());
  REQUIRE(terms->size() == 1);
  CHECK((*terms)[0].group() == "dp");
  CHECK((*terms)[0].collective() == "all_reduce");
  CHECK((*terms)[0].calls() == n);
  CHECK_THAT((*terms)[0].seconds(), WithinRel(all, 1e-12));
  CHECK_THAT((*terms)[0].exposed_seconds(), WithinRel(last, 1e-12));
  // No backward time: nothing hides.
  terms = StageCommunication(plan, profile, 0, 0.0);
  CHECK_THAT((*terms)[0].exposed_seconds(), WithinRel(all, 1e-12));
  // Part of it hides.
  const double backward = (all - last) / 4;
  terms = StageCommunication(plan, profile, 0, backward);
  CHECK_THAT((*terms)[0].exposed_seconds(), WithinRel(all - backward, 1e-12));
}

TEST_CASE("stage 2 on gloo reduce-scatters every micro-step, costed as an all-reduce") {
  testing::Planned planned = testing::PlanYaml(
      kCpuSpec, {"parallel.data_replicate=1", "parallel.data_shard=2", "sharding.stage=2",
                 "data.global_batch_size=16"});
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  REQUIRE(plan.batch().grad_accum_steps() == 2);
  auto terms = StageCommunication(plan, TestProfile(), 0, 100.0);
  REQUIRE(terms.ok());
  REQUIRE(terms->size() == 2);
  const ir::CommunicationTime& rs = (*terms)[0];
  CHECK(rs.collective() == "reduce_scatter");
  CHECK(rs.group() == "dp_shard");
  CHECK(rs.calls() == 2 * plan.sharding().buckets_size());
  CHECK(rs.formula().rfind(std::to_string(rs.calls()) + " x (2*(2-1)", 0) == 0);
  const ir::CommunicationTime& ag = (*terms)[1];
  CHECK(ag.collective() == "all_gather");
  CHECK(ag.calls() == plan.sharding().units_size());
  CHECK(ag.exposed_seconds() == ag.seconds());
}

TEST_CASE("tensor parallel: four all-reduces per block and micro-step, never hidden") {
  testing::Planned planned = testing::PlanYaml(
      kCpuSpec, {"parallel.data_replicate=1", "parallel.tensor=2"});
  REQUIRE(planned.result.ok);
  auto terms = StageCommunication(planned.result.plan, TestProfile(), 0, 100.0);
  REQUIRE(terms.ok());
  bool found = false;
  for (const ir::CommunicationTime& t : *terms) {
    if (t.what() != "block outputs and input gradients of tp regions") continue;
    found = true;
    CHECK(t.calls() == 4 * 4);  // 4 blocks, 1 micro-step
    CHECK(t.bytes() == 16 * 4 * 128 * 128 * 4);  // calls × b·s·h × fp32
    CHECK(t.exposed_seconds() == t.seconds());
  }
  CHECK(found);
}

TEST_CASE("the bubble is f/(1-f) of the slowest stage's time, f from the plan's schedule") {
  testing::Planned planned = testing::PlanYaml(
      kCpuSpec, {"parallel.data_replicate=1", "parallel.pipeline=2",
                 "parallel.pipeline_microbatches=4", "data.global_batch_size=16"});
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  const double f = plan.pipeline().bubble_fraction();
  REQUIRE(f == Approx(1.0 / 5.0));  // (p-1)/(m+p-1), p = 2, m = 4
  auto estimate = EstimateStepTime(plan, TestProfile());
  REQUIRE(estimate.ok());
  const double stage = estimate->compute_seconds() + estimate->exposed_communication_seconds();
  CHECK_THAT(estimate->bubble_seconds(), WithinRel(f / (1 - f) * stage, 1e-12));
  CHECK_THAT(estimate->step_seconds(), WithinRel(stage / (1 - f), 1e-12));
  REQUIRE(estimate->stages_size() == 2);
  // The last stage also runs the head: it is the slowest.
  CHECK(estimate->slowest_stage() == 1);
  bool pp = false;
  for (const ir::CommunicationTime& t : estimate->communication()) {
    if (t.group() != "pp") continue;
    pp = true;
    CHECK(t.calls() == 2 * 4);  // activation + gradient per microbatch, one neighbour
  }
  CHECK(pp);
}

TEST_CASE("step time, tokens/s and MFU follow from compute on one worker") {
  testing::Planned planned = testing::PlanYaml(kCpuSpec, {"cluster.devices_per_node=1"});
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  const ir::DeviceProfile profile = TestProfile();
  auto e = EstimateStepTime(plan, profile);
  REQUIRE(e.ok());
  CHECK(e->communication_size() == 0);
  // Hand computation: 4 blocks of 24·b·s·h² + 4·b·s²·h and a head of 2·b·s·h·V, b = 4, s = h = 128.
  const double b = 4, s = 128, h = 128, v = 256;
  const double forward = 4 * (24 * b * s * h * h + 4 * b * s * s * h) + 2 * b * s * h * v;
  REQUIRE(e->stages_size() == 1);
  CHECK(e->stages(0).forward_flops() == forward);
  CHECK(e->stages(0).backward_flops() == 2 * forward);
  CHECK(e->model_flops_per_step() == 3 * forward);
  CHECK_THAT(e->stages(0).matmul_seconds(), WithinRel(3 * forward / 96e9, 1e-12));
  CHECK(e->step_seconds() == e->compute_seconds());
  CHECK_THAT(e->tokens_per_second(), WithinRel(b * s / e->step_seconds(), 1e-12));
  CHECK_THAT(e->mfu(), WithinRel(3 * forward / (e->step_seconds() * 96e9), 1e-12));
}

TEST_CASE("shared cores: each of n workers gets cores/n of a per-core profile") {
  testing::Planned planned = testing::PlanYaml(kCpuSpec);
  REQUIRE(planned.result.ok);
  ir::DeviceProfile profile = TestProfile();
  auto one = EstimateStepTime(planned.result.plan, profile);
  profile.set_shared_cores_per_node(1);  // 2 workers on 1 core: half the throughput each
  auto shared = EstimateStepTime(planned.result.plan, profile);
  REQUIRE(one.ok());
  REQUIRE(shared.ok());
  CHECK_THAT(shared->compute_seconds(), WithinRel(2 * one->compute_seconds(), 1e-12));
}

TEST_CASE("estimate-step-time picks the device's built-in profile and records why") {
  testing::Planned planned = testing::PlanYaml(testing::kBaseSpec,
                                               {"cluster.device_model=H100-80GB"});
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  CHECK(plan.step_time().profile().name() == "h100");
  CHECK(plan.step_time().step_seconds() > 0);
  bool resolved = false;
  for (const ir::ResolvedValue& r : plan.resolved()) {
    if (r.field() != "cluster.device_profile") continue;
    resolved = true;
    CHECK(r.value() == "h100");
    CHECK(r.pass() == "estimate-step-time");
  }
  CHECK(resolved);
  CHECK(DefaultDeviceProfileName("cuda", "a100-40gb") == "a100");
  CHECK(DefaultDeviceProfileName("cuda", "") == "h100");
  CHECK(DefaultDeviceProfileName("cpu", "") == "cpu");
}

TEST_CASE("an unknown device profile name is E0801 at the field, with did-you-mean") {
  const std::string yaml = std::string(testing::kBaseSpec) + "  device_profile: h10\n";
  testing::Planned planned = testing::PlanYaml(yaml);
  REQUIRE(planned.loaded);
  CHECK_FALSE(planned.result.ok);
  CHECK(planned.diagnostics ==
        "job.yaml:26:19: error[E0801]: unknown device profile 'h10'; the built-in profiles are "
        "cpu, a100, h100, h200, or name a device-profile .json file (accel calibrate writes one) "
        "[estimate-step-time]\n"
        "   device_profile: h10\n"
        "                   ^\n"
        "note: did you mean 'h100'?\n");
}

}  // namespace
}  // namespace accel::planner
