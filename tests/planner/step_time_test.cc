// The step-time model: FLOPs against hand computations (Narayanan et al. 2021), the ring cost
// (Thakur et al. 2005), the bucket overlap, the pipeline bubble, and the estimate-step-time
// pass's profile choice and errors.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/enum_names.h"
#include "ir/plan_writer.h"
#include "planner/collective_cost.h"
#include "planner/device_profiles.h"
#include "planner/elementwise_ops.h"
#include "planner/matmul_throughput.h"
#include "planner/step_communication.h"
#include "planner/step_compute.h"
#include "planner/step_flops.h"
#include "planner/step_time_estimator.h"
#include "planner_test_util.h"
#include "spec/device_profile_file.h"

namespace accel::planner {
namespace {

using Catch::Matchers::WithinRel;

ir::Model Llama7B() {
  ir::Model m;
  m.set_arch(ir::ARCHITECTURE_LLAMA);
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
  m.set_arch(ir::ARCHITECTURE_GPT2);
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

TEST_CASE("per-op recompute re-runs attention and the matmuls whose outputs it does not keep") {
  // GPT-2 keeps c_attn and c_fc: it re-runs the core, attn.c_proj and mlp.c_proj (half the MLP).
  const LayerFlops g = LayerForwardFlops(Gpt2Small(), 1024, 2, 1, 1);
  CHECK_THAT(LayerRecomputeFlops(g, RecomputeMode::kOp), WithinRel(g.attention + g.output + g.mlp / 2, 1e-12));
  // Llama with grouped keys (8 of 32 heads) keeps q, v, gate and down: it re-runs the core, k_proj
  // (kv / (a + 2kv) of the q/k/v products), o_proj and up_proj (a third of the MLP).
  ir::Model gqa = Llama7B();
  gqa.set_num_kv_heads(8);
  const LayerFlops l = LayerForwardFlops(gqa, 4096, 1, 2, 1);
  CHECK_THAT(LayerRecomputeFlops(l, RecomputeMode::kOp),
             WithinRel(l.attention + l.qkv * 8 / 48 + l.output + l.mlp / 3, 1e-12));
  CHECK(LayerRecomputeFlops(l, RecomputeMode::kSelective) < LayerRecomputeFlops(l, RecomputeMode::kOp));
  CHECK(LayerRecomputeFlops(l, RecomputeMode::kOp) < LayerRecomputeFlops(l, RecomputeMode::kFull));
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
  REQUIRE(terms->size() == 2);  // the buckets, then the loss averaged over dp
  CHECK((*terms)[1].what() == "loss, averaged over data-parallel ranks");
  CHECK((*terms)[0].group() == "dp");
  CHECK((*terms)[0].collective() == ir::COLLECTIVE_ALL_REDUCE);
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

// On shared cores (a CPU device) backward hides nothing of its own accord, and the measured
// fraction (DeviceProfile.shared_core_bucket_overlap) of every bucket's time hides instead.
TEST_CASE("on shared cores the profile's measured fraction of the gradient buckets hides") {
  testing::Planned planned = testing::PlanYaml(kCpuSpec);
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  ir::DeviceProfile profile = TestProfile();
  profile.set_shared_core_bucket_overlap(0.4);
  profile.set_shared_cores_per_node(0);  // own cores: the figure is not used
  auto own = StageCommunication(plan, profile, 0, 0.0);
  REQUIRE(own.ok());
  const ir::CommunicationTime& plain = (*own)[0];
  REQUIRE(plain.what() == "gradient buckets, last micro-step");
  CHECK(plain.exposed_seconds() == plain.seconds());
  CHECK(plain.formula().find("hidden on shared cores") == std::string::npos);
  profile.set_shared_cores_per_node(2);
  auto shared = StageCommunication(plan, profile, 0, 0.0);
  REQUIRE(shared.ok());
  const ir::CommunicationTime& buckets = (*shared)[0];
  CHECK(buckets.seconds() == plain.seconds());
  CHECK_THAT(buckets.exposed_seconds(), WithinRel(0.6 * plain.seconds(), 1e-12));
  CHECK_THAT(buckets.formula(),
             Catch::Matchers::EndsWith("; exposed per reducing micro-step: last bucket + max(0, "
                                       "rest - backward), x (1 - 0.4 hidden on shared cores "
                                       "(profile))"));
  // The loss's all-reduce blocks: nothing of it hides.
  CHECK((*shared)[1].exposed_seconds() == (*shared)[1].seconds());
  // The estimate takes the buckets' exposed part.
  auto estimate = EstimateStepTime(plan, profile);
  REQUIRE(estimate.ok());
  CHECK_THAT(estimate->exposed_communication_seconds(),
             WithinRel(buckets.exposed_seconds() + (*shared)[1].exposed_seconds(), 1e-12));
}

// The trainer's gradient passes per step, as executor/train/zero_sync.cc and trainer.cc run
// them: buckets in and out, accumulation, the gradient norm and clipping.
TEST_CASE("the trainer's gradient passes follow the sharding stage, accumulation and clipping") {
  struct Passes {
    double bytes, local, owned;
  };
  const auto passes = [](const std::vector<std::string>& sets) {
    testing::Planned planned = testing::PlanYaml(kCpuSpec, sets);
    REQUIRE(planned.result.ok);
    const StageShardTotals shards = ShardTotalsFromPlan(planned.result.plan).Stage(0);
    REQUIRE(shards.buckets > 0);
    return Passes{TrainerPassBytes(planned.result.plan, shards),
                  static_cast<double>(shards.local_elements),
                  static_cast<double>(shards.shard_elements)};
  };
  // Stage 0, fp32, one micro-step: (4 + 8) in + (4 + 4) out + 36 norm + 8 clip per parameter.
  Passes p = passes({});
  CHECK(p.bytes == p.local * (12 + 8 + 36 + 8));
  p = passes({"training.grad_clip_norm=0"});
  CHECK(p.bytes == p.local * (12 + 8 + 36));
  // Two micro-steps: the first accumulates in the module's gradients (12 per parameter).
  p = passes({"data.global_batch_size=16"});
  CHECK(p.bytes == p.local * (12 + 12 + 8 + 36 + 8));
  // Stage 2 over 2 ranks, two micro-steps: buckets in and an add into the owned shard each.
  p = passes({"parallel.data_replicate=1", "parallel.data_shard=2", "sharding.stage=2",
              "data.global_batch_size=16"});
  REQUIRE(p.owned < p.local);
  CHECK(p.bytes == 2 * p.local * 12 + 2 * p.owned * 12 + p.owned * (36 + 8));
  // bf16 reduction: 2-byte buckets, from fp32 gradients.
  p = passes({"precision.reduce=bf16"});
  CHECK(p.bytes == p.local * ((4 + 4) + (2 + 4) + 36 + 8));
  // bf16 parameters: 2-byte module gradients, and the fp32 master gradients the norm reads.
  p = passes({"precision.params=bf16", "precision.compute=bf16", "precision.reduce=bf16",
              "data.global_batch_size=16"});
  CHECK(p.bytes == p.local * ((2 + 4) + 3 * 2 + (2 + 4) + 36 + 8));
}

// DeviceProfile.adamw_seconds_per_parameter: the optimizer step at the measured cost instead of
// AdamW's 28 B per parameter over memory bandwidth.
TEST_CASE("a measured AdamW step replaces the optimizer's bytes") {
  testing::Planned planned = testing::PlanYaml(kCpuSpec);
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  REQUIRE(plan.sharding().stage() == 0);
  ir::DeviceProfile profile = TestProfile();
  profile.set_shared_cores_per_node(2);
  auto before = StageComputeTimes(plan, profile);
  profile.set_adamw_seconds_per_parameter(3e-9);
  auto after = StageComputeTimes(plan, profile);
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  const double owned = static_cast<double>(ShardTotalsFromPlan(plan).Stage(0).local_elements);
  const double share = WorkerShare(profile, 2);
  const double bandwidth = profile.memory_bytes_per_second() * profile.memory_efficiency() * share;
  const ir::StageComputeTime& b = (*before)[0];
  const ir::StageComputeTime& a = (*after)[0];
  CHECK(b.optimizer_seconds() == 0);
  CHECK_THAT(a.memory_bytes(), WithinRel(b.memory_bytes() - 28 * owned, 1e-12));
  CHECK_THAT(a.optimizer_seconds(), WithinRel(owned * 3e-9 / share, 1e-12));
  CHECK_THAT(a.seconds(),
             WithinRel(b.seconds() - 28 * owned / bandwidth + a.optimizer_seconds(), 1e-9));
  CHECK_THAT(ir::PlanSummary(plan), !Catch::Matchers::Contains("measured optimizer step"));
  // SGD keeps its bytes: the figure is AdamW's.
  testing::Planned sgd = testing::PlanYaml(kCpuSpec, {"training.optimizer.name=sgd"});
  REQUIRE(sgd.result.ok);
  auto sgd_times = StageComputeTimes(sgd.result.plan, profile);
  REQUIRE(sgd_times.ok());
  CHECK((*sgd_times)[0].optimizer_seconds() == 0);
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
  REQUIRE(terms->size() == 4);  // then the loss over dp and the norm's partial sums over dp_shard
  CHECK((*terms)[2].group() == "dp");
  CHECK((*terms)[3].group() == "dp_shard");
  CHECK((*terms)[3].what() == "gradient norm: the owners' partial sums of squares");
  const ir::CommunicationTime& rs = (*terms)[0];
  CHECK(rs.collective() == ir::COLLECTIVE_REDUCE_SCATTER);
  CHECK(rs.group() == "dp_shard");
  CHECK(rs.calls() == 2 * plan.sharding().buckets_size());
  CHECK(rs.formula().rfind(std::to_string(rs.calls()) + " x (2*(2-1)", 0) == 0);
  const ir::CommunicationTime& ag = (*terms)[1];
  CHECK(ag.collective() == ir::COLLECTIVE_ALL_GATHER);
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

TEST_CASE("a profile's blocking collective seconds cost every tp call, and no other group's") {
  // tp 2 x dp 2 on 4 workers: the tp terms gain calls x blocking; the dp buckets, which the
  // executor launches from hooks without blocking, do not.
  testing::Planned planned = testing::PlanYaml(
      kCpuSpec, {"cluster.devices_per_node=4", "parallel.data_replicate=2", "parallel.tensor=2"});
  REQUIRE(planned.result.ok);
  const ir::DeviceProfile plain = TestProfile();
  ir::DeviceProfile blocking = plain;
  blocking.set_blocking_collective_seconds(1e-3);
  auto before = StageCommunication(planned.result.plan, plain, 0, 100.0);
  auto after = StageCommunication(planned.result.plan, blocking, 0, 100.0);
  REQUIRE(before.ok());
  REQUIRE(after.ok());
  REQUIRE(before->size() == after->size());
  int tp_terms = 0;
  for (size_t i = 0; i < after->size(); ++i) {
    const ir::CommunicationTime& a = (*after)[i];
    const ir::CommunicationTime& b = (*before)[i];
    const bool tp = a.group() == "tp";
    tp_terms += tp ? 1 : 0;
    CHECK_THAT(a.seconds(), WithinRel(b.seconds() + (tp ? a.calls() * 1e-3 : 0.0), 1e-12));
    CHECK_THAT(a.exposed_seconds(),
               WithinRel(b.exposed_seconds() + (tp ? a.calls() * 1e-3 : 0.0), 1e-12));
    CHECK((a.formula().find(" s blocking (profile)") != std::string::npos) == tp);
  }
  CHECK(tp_terms >= 3);  // block regions, embedding, head gradient, loss, gradient norm
}

TEST_CASE("time-shared cores hide the bubble while the node's other workers can take them") {
  const auto bubble_share = [](const std::vector<std::string>& sets, int64_t cores) {
    testing::Planned planned = testing::PlanYaml(kCpuSpec, sets);
    REQUIRE(planned.result.ok);
    const ir::Plan& plan = planned.result.plan;
    ir::DeviceProfile profile = TestProfile();
    profile.set_shared_cores_per_node(cores);
    auto estimate = EstimateStepTime(plan, profile);
    REQUIRE(estimate.ok());
    const double f = plan.pipeline().bubble_fraction();
    REQUIRE(f == Approx(1.0 / 5.0));  // 2 stages, 4 microbatches
    const double stage = estimate->compute_seconds() + estimate->exposed_communication_seconds();
    CHECK_THAT(estimate->step_seconds(), WithinRel(stage + estimate->bubble_seconds(), 1e-12));
    CHECK(BubbleHiddenOnSharedCores(plan, profile) ==
          Approx(1.0 - estimate->bubble_seconds() / (f / (1 - f) * stage)));
    return estimate->bubble_seconds() / (f / (1 - f) * stage);
  };
  const std::vector<std::string> pp2 = {"parallel.pipeline=2", "data.grad_accum_steps=4",
                                        "data.global_batch_size=auto"};
  auto with = [&](std::vector<std::string> more) {
    more.insert(more.end(), pp2.begin(), pp2.end());
    return more;
  };
  // pp 2 x dp 2 on one node of 4 workers over 2 cores: while a stage's 2 ranks idle, the other
  // stage's 2 take both cores.
  const auto shared = with({"cluster.devices_per_node=4", "parallel.data_replicate=2"});
  CHECK(bubble_share(shared, 2) == Approx(0.0).margin(1e-12));
  // Over 3 cores the other stage's 2 workers keep 2 of them busy: a third of the bubble shows.
  CHECK(bubble_share(shared, 3) == Approx(1.0 / 3.0));
  // pp 2 on 2 workers over 2 cores: nobody time-shares, so an idle stage's core stays idle.
  CHECK(bubble_share(with({"parallel.data_replicate=1"}), 2) == Approx(1.0));
  // Two nodes of 4 workers, one stage per node (ranks are pp-major): nothing to take the cores.
  CHECK(bubble_share(with({"cluster.nodes=2", "cluster.devices_per_node=4", "parallel.data_replicate=4"}), 2) ==
        Approx(1.0));
  // Per-device figures (no shared cores): the whole bubble.
  CHECK(bubble_share(shared, 0) == Approx(1.0));
}

TEST_CASE("the plan text says how much of the bubble time-shared cores hide") {
  const auto summary = [](int64_t cores) {
    testing::Planned planned = testing::PlanYaml(
        kCpuSpec, {"cluster.devices_per_node=4", "parallel.data_replicate=2", "parallel.pipeline=2",
                   "data.grad_accum_steps=4", "data.global_batch_size=auto"});
    REQUIRE(planned.result.ok);
    ir::Plan plan = planned.result.plan;
    ir::DeviceProfile profile = TestProfile();
    profile.set_shared_cores_per_node(cores);
    auto estimate = EstimateStepTime(plan, profile);
    REQUIRE(estimate.ok());
    *plan.mutable_step_time() = *estimate;
    return ir::PlanSummary(plan);
  };
  CHECK_THAT(summary(2), Catch::Matchers::Contains(" + bubble 0 s (stage 1; 100% of the bubble hidden: other "
                                  "workers take an idle stage's time-shared cores)\n"));
  CHECK_THAT(summary(3), Catch::Matchers::Contains("; 67% of the bubble hidden: "));
  CHECK_THAT(summary(0), !Catch::Matchers::Contains("of the bubble hidden"));
}

TEST_CASE("sequence parallel: every tp collective the executor issues, by kind") {
  // gpt2, 4 blocks, 1 micro-step, tp 2 with sequence parallelism: per block an all-gather and a
  // reduce-scatter around attention and around the MLP, each way; the embedding output is
  // reduce-scattered (its gradient all-gathered), the head input all-gathered (its gradient
  // reduce-scattered) and the loss all-reduces three vectors; once per step the gradients of
  // the 27 tp-replicated parameters (wpe, per block ln_1 and ln_2 weight and bias and the two
  // c_proj biases, ln_f weight and bias) are all-reduced in one collective
  // (executor/train/replicated_grads.h) and the gradient norm adds the tp-split parameters'
  // squares: 39 + 2 collectives.
  testing::Planned planned = testing::PlanYaml(
      kCpuSpec, {"parallel.data_replicate=1", "parallel.tensor=2", "parallel.sequence_parallel=true"});
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  int64_t replicated = 0, replicated_elements = 0;
  for (const ir::ShardUnit& u : plan.sharding().units()) {
    for (const ir::Parameter& p : u.parameters()) {
      if (p.tp_dim() >= 0) continue;
      ++replicated;
      replicated_elements += p.local_count();
    }
  }
  REQUIRE(replicated == 27);
  auto terms = StageCommunication(plan, TestProfile(), 0, 100.0);
  REQUIRE(terms.ok());
  std::map<std::string, int64_t> calls;
  int64_t total = 0;
  for (const ir::CommunicationTime& t : *terms) {
    if (t.group() != "tp") continue;
    calls[std::string(ir::Name(t.collective()))] += t.calls();
    total += t.calls();
    if (t.what() == "replicated parameters' gradients, once per step (sequence parallel)") {
      CHECK(t.calls() == 1);
      CHECK(t.bytes() == replicated_elements * 4);  // fp32 gradients, stage 0: whole
    }
  }
  CHECK(calls["all_gather"] == 4 * 4 + 2);
  CHECK(calls["reduce_scatter"] == 4 * 4 + 2);
  CHECK(calls["all_reduce"] == 3 + 1 + 1);
  CHECK(total == 39 + 2);
}

TEST_CASE("once per step: the tied embedding's gradient between the end stages, the loss and the norm") {
  // gpt2 ties its head to the embedding; pp 2 x dp_shard 2 at stage 1. Each end stage sums the
  // fp32 gradient range it owns (padded vocabulary x h / dp_shard) with the other's over the
  // "embedding" group (Trainer::SumTiedGradients); the loss is averaged over dp; the gradient
  // norm's partial sums of squares are added over dp_shard (two fp64) and over pp with the last
  // stage's loss (two calls of one fp64). No tp: no tp norm term.
  testing::Planned planned = testing::PlanYaml(
      kCpuSpec, {"cluster.devices_per_node=4", "parallel.data_replicate=1", "parallel.data_shard=2",
                 "parallel.pipeline=2", "sharding.stage=1", "data.grad_accum_steps=4",
                 "data.global_batch_size=auto"});
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  REQUIRE(plan.model().tie_word_embeddings());
  const int64_t vocab = plan.model().padded_vocab_size();
  REQUIRE(vocab >= 256);
  for (int32_t stage : {0, 1}) {
    INFO("stage " << stage);
    auto terms = StageCommunication(plan, TestProfile(), stage, 100.0);
    REQUIRE(terms.ok());
    std::map<std::string, ir::CommunicationTime> by_what;
    for (const ir::CommunicationTime& t : *terms) by_what[t.what()] = t;
    const ir::CommunicationTime& tied = by_what["tied embedding and head gradients, once per step"];
    CHECK(tied.group() == "embedding");
    CHECK(tied.group_size() == 2);
    CHECK(tied.calls() == 1);
    CHECK(tied.bytes() == vocab * 128 * 4 / 2);
    const ir::CommunicationTime& loss = by_what["loss, averaged over data-parallel ranks"];
    CHECK(loss.group() == "dp");
    CHECK(loss.calls() == 1);
    CHECK(loss.bytes() == 8);
    const ir::CommunicationTime& norm = by_what["gradient norm: the owners' partial sums of squares"];
    CHECK(norm.group() == "dp_shard");
    CHECK(norm.bytes() == 16);
    const ir::CommunicationTime& pp = by_what["the last stage's loss and the stages' gradient norms"];
    CHECK(pp.group() == "pp");
    CHECK(pp.calls() == 2);
    CHECK(pp.bytes() == 16);
    CHECK(by_what.count("gradient norm: tp-split parameters' sum of squares") == 0);
  }
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
    if (t.group() != "pp" || t.collective() != ir::COLLECTIVE_SEND_RECV) continue;
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
  // The chunked loss recomputes the head's forward product in backward.
  const double head = 2 * b * s * h * v;
  CHECK(e->stages(0).recompute_flops() == head);
  CHECK_THAT(e->stages(0).matmul_seconds(), WithinRel((3 * forward + head) / 96e9, 1e-12));
  CHECK(e->step_seconds() == e->compute_seconds());
  CHECK_THAT(e->tokens_per_second(), WithinRel(b * s / e->step_seconds(), 1e-12));
  CHECK_THAT(e->mfu(), WithinRel(3 * forward / (e->step_seconds() * 96e9), 1e-12));
}

TEST_CASE("shared cores: each of n workers gets cores/n of a per-core profile, and nothing hides communication") {
  testing::Planned planned = testing::PlanYaml(kCpuSpec);
  REQUIRE(planned.result.ok);
  ir::DeviceProfile profile = TestProfile();
  auto one = EstimateStepTime(planned.result.plan, profile);
  profile.set_shared_cores_per_node(1);  // 2 workers on 1 core: half the throughput each
  auto shared = EstimateStepTime(planned.result.plan, profile);
  REQUIRE(one.ok());
  REQUIRE(shared.ok());
  CHECK_THAT(shared->compute_seconds(), WithinRel(2 * one->compute_seconds(), 1e-12));
  // Dedicated devices hide all gradient buckets but the last behind backward; workers sharing
  // the cores hide none (Gloo runs on the cores backward is using).
  double all = 0;
  for (const ir::CommunicationTime& t : one->communication()) all += t.seconds();
  CHECK(one->exposed_communication_seconds() < all);
  double shared_all = 0;
  for (const ir::CommunicationTime& t : shared->communication()) shared_all += t.seconds();
  CHECK(shared_all > 0);
  CHECK_THAT(shared->exposed_communication_seconds(), WithinRel(shared_all, 1e-12));
}

ir::WorkerScaling Scaling(int64_t workers, double efficiency) {
  ir::WorkerScaling w;
  w.set_workers_per_node(workers);
  w.set_efficiency(efficiency);
  return w;
}

TEST_CASE("worker scaling: exact at its counts, linear in log2 between them, nearest beyond") {
  ir::DeviceProfile p = TestProfile();
  CHECK(WorkerScalingEfficiency(p, 4) == 1.0);  // no entries
  *p.add_worker_scaling() = Scaling(8, 0.5);
  *p.add_worker_scaling() = Scaling(1, 0.6);
  *p.add_worker_scaling() = Scaling(2, 1.0);
  CHECK(WorkerScalingEfficiency(p, 1) == 0.6);
  CHECK(WorkerScalingEfficiency(p, 2) == 1.0);
  CHECK(WorkerScalingEfficiency(p, 8) == 0.5);
  CHECK_THAT(WorkerScalingEfficiency(p, 4), WithinRel(0.75, 1e-12));  // log2 4 halfway from 1 to 3
  CHECK_THAT(WorkerScalingEfficiency(p, 3), WithinRel(1.0 - 0.5 * (std::log2(3.0) - 1) / 2, 1e-12));
  CHECK(WorkerScalingEfficiency(p, 64) == 0.5);
  CHECK(WorkerScalingEfficiency(p, 0) == 1.0);
  // Per-device figures (GPUs) are never shared, so the scaling does not apply.
  CHECK(WorkerShare(p, 8) == 1.0);
  p.set_shared_cores_per_node(2);
  CHECK_THAT(WorkerShare(p, 8), WithinRel(0.25 * 0.5, 1e-12));
  CHECK_THAT(CoreShare(p, 8), WithinRel(0.25, 1e-12));
  CHECK_THAT(WorkerShare(p, 1), WithinRel(2 * 0.6, 1e-12));
}

TEST_CASE("worker scaling slows every compute term of a per-core profile, not its MFU's peak") {
  testing::Planned planned = testing::PlanYaml(kCpuSpec);
  REQUIRE(planned.result.ok);
  ir::DeviceProfile profile = TestProfile();
  profile.set_shared_cores_per_node(2);
  auto plain = EstimateStepTime(planned.result.plan, profile);
  *profile.add_worker_scaling() = Scaling(planned.result.plan.topology().devices_per_node(), 0.8);
  auto scaled = EstimateStepTime(planned.result.plan, profile);
  REQUIRE(plain.ok());
  REQUIRE(scaled.ok());
  REQUIRE(scaled->stages_size() == plain->stages_size());
  for (int i = 0; i < plain->stages_size(); ++i) {
    CHECK_THAT(scaled->stages(i).matmul_seconds(),
               WithinRel(plain->stages(i).matmul_seconds() / 0.8, 1e-12));
    CHECK_THAT(scaled->stages(i).memory_seconds(),
               WithinRel(plain->stages(i).memory_seconds() / 0.8, 1e-12));
  }
  CHECK_THAT(scaled->compute_seconds(), WithinRel(plain->compute_seconds() / 0.8, 1e-12));
  // MFU is against the cores' peak: the same FLOPs over a longer step.
  CHECK_THAT(scaled->mfu() * scaled->step_seconds(),
             WithinRel(plain->mfu() * plain->step_seconds(), 1e-12));
}

// A two-size grid: every figure `base`, except `fast` at (hi, hi, hi).
ir::MatmulGrid TwoSizeGrid(ir::Dtype dtype, int64_t lo, int64_t hi, double base,
                           double fast) {
  ir::MatmulGrid g;
  g.set_dtype(dtype);
  g.add_sizes(lo);
  g.add_sizes(hi);
  for (int i = 0; i < 7; ++i) g.add_flops_per_second(base);
  g.add_flops_per_second(fast);
  return g;
}

TEST_CASE("matmul throughput: grid points exact, log-linear between them, clamped outside") {
  ir::DeviceProfile p = TestProfile();
  *p.add_matmul_grids() = TwoSizeGrid(ir::DTYPE_FP32, 64, 256, 1e9, 4e9);
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 64, 64, 64), WithinRel(1e9, 1e-12));
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 256, 256, 256), WithinRel(4e9, 1e-12));
  // 128 is halfway in log2 on every axis: the (hi, hi, hi) corner weighs 1/8 → 4^(1/8) × 1e9.
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 128, 128, 128), WithinRel(1e9 * std::pow(4.0, 0.125), 1e-12));
  // Halfway along k only, m = n = 256: between 1e9 and 4e9 in log → 2e9.
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 256, 256, 128), WithinRel(2e9, 1e-12));
  // Beyond the grid: the edge; below it too (and sizes < 1 count as 1).
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 100000, 9999, 4096), WithinRel(4e9, 1e-12));
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 1, 0, -5), WithinRel(1e9, 1e-12));
  // Other dtypes without a grid fall back to the peak; the efficiency scales both.
  CHECK(MatmulFlopsPerSecond(p, ir::DTYPE_BF16, ir::MATMUL_LAYOUT_NN, 64, 64, 64) == p.matmul_bf16_flops_per_second());
  p.set_matmul_efficiency(0.5);
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 64, 64, 64), WithinRel(0.5e9, 1e-12));
  // A malformed grid (7 figures for 2 sizes) is ignored.
  ir::DeviceProfile bad = TestProfile();
  *bad.add_matmul_grids() = TwoSizeGrid(ir::DTYPE_FP32, 64, 256, 1e9, 4e9);
  bad.mutable_matmul_grids(0)->mutable_flops_per_second()->RemoveLast();
  CHECK(FindMatmulGrid(bad, ir::DTYPE_FP32) == nullptr);
  CHECK(MatmulFlopsPerSecond(bad, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 64, 64, 64) == bad.matmul_fp32_flops_per_second());
}

TEST_CASE("matmul throughput: a layout's own grid, else the dtype's nn grid") {
  ir::DeviceProfile p = TestProfile();
  *p.add_matmul_grids() = TwoSizeGrid(ir::DTYPE_FP32, 64, 256, 4e9, 4e9);  // no layout: nn
  ir::MatmulGrid nt = TwoSizeGrid(ir::DTYPE_FP32, 64, 256, 1e9, 1e9);
  nt.set_layout(ir::MATMUL_LAYOUT_NT);
  *p.add_matmul_grids() = nt;
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 64, 64, 64),
             WithinRel(4e9, 1e-12));
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_UNSPECIFIED, 64, 64, 64),
             WithinRel(4e9, 1e-12));
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NT, 64, 64, 64),
             WithinRel(1e9, 1e-12));
  CHECK_THAT(MatmulFlopsPerSecond(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_TN, 64, 64, 64),
             WithinRel(4e9, 1e-12));
  CHECK(FindMatmulGrid(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_TN) == nullptr);
  CHECK(FindMatmulGrid(p, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NT) == &p.matmul_grids(1));
  // A layout grid alone does not stand in for the others: they take the peak.
  ir::DeviceProfile only_nt = TestProfile();
  *only_nt.add_matmul_grids() = nt;
  CHECK(MatmulFlopsPerSecond(only_nt, ir::DTYPE_FP32, ir::MATMUL_LAYOUT_NN, 64, 64, 64) ==
        only_nt.matmul_fp32_flops_per_second());
}

TEST_CASE("matmul layouts: Conv1D and attention run NN, nn.Linear and the head NT") {
  ir::Model llama = Gpt2Small();
  llama.set_arch(ir::ARCHITECTURE_LLAMA);
  const std::vector<Gemm> gpt2 = LayerForwardGemms(Gpt2Small(), 1024, 2, 1, 1);
  const std::vector<Gemm> lm = LayerForwardGemms(llama, 1024, 2, 1, 1);
  REQUIRE(gpt2.size() == 6);
  REQUIRE(lm.size() == 6);
  for (size_t i = 0; i < gpt2.size(); ++i) {
    CHECK(gpt2[i].layout == ir::MATMUL_LAYOUT_NN);
    CHECK(lm[i].layout == (lm[i].attention ? ir::MATMUL_LAYOUT_NN : ir::MATMUL_LAYOUT_NT));
  }
  CHECK(HeadForwardGemm(Gpt2Small(), 1024, 2, 1, 1).layout == ir::MATMUL_LAYOUT_NT);
  // Grouped keys (4 for 12 query heads) are repeated contiguous: Q·Kᵀ reads Kᵀ as a view.
  llama.set_num_kv_heads(4);
  const std::vector<Gemm> gqa = LayerForwardGemms(llama, 1024, 2, 1, 1);
  CHECK(gqa[1].layout == ir::MATMUL_LAYOUT_NT);
  CHECK(gqa[2].layout == ir::MATMUL_LAYOUT_NN);
  // NN forward (m, n, k) = (2, 3, 5): dA = dC·Bᵀ NT (2, 5, 3), dB = Aᵀ·dC TN (5, 3, 2).
  const std::array<Gemm, 2> nn = BackwardGemms(Gemm{2, 3, 5, 7, true, ir::MATMUL_LAYOUT_NN});
  CHECK((nn[0].m == 2 && nn[0].n == 5 && nn[0].k == 3 && nn[0].layout == ir::MATMUL_LAYOUT_NT));
  CHECK((nn[1].m == 5 && nn[1].n == 3 && nn[1].k == 2 && nn[1].layout == ir::MATMUL_LAYOUT_TN));
  CHECK((nn[0].count == 7 && nn[1].count == 7 && nn[0].attention && nn[1].attention));
  // NT forward (B = Wᵀ): dA = dC·W NN (2, 5, 3), dB = (dCᵀ·A)ᵀ TN (3, 5, 2).
  const std::array<Gemm, 2> nt = BackwardGemms(Gemm{2, 3, 5, 1, false, ir::MATMUL_LAYOUT_NT});
  CHECK((nt[0].m == 2 && nt[0].n == 5 && nt[0].k == 3 && nt[0].layout == ir::MATMUL_LAYOUT_NN));
  CHECK((nt[1].m == 3 && nt[1].n == 5 && nt[1].k == 2 && nt[1].layout == ir::MATMUL_LAYOUT_TN));
  // bmm's backward has no column-major case: an NT attention product's dB is (5, 3, 2).
  const std::array<Gemm, 2> bmm = BackwardGemms(Gemm{2, 3, 5, 4, true, ir::MATMUL_LAYOUT_NT});
  CHECK((bmm[0].m == 2 && bmm[0].n == 5 && bmm[0].k == 3 && bmm[0].layout == ir::MATMUL_LAYOUT_NN));
  CHECK((bmm[1].m == 5 && bmm[1].n == 3 && bmm[1].k == 2 && bmm[1].layout == ir::MATMUL_LAYOUT_TN));
}

TEST_CASE("each product is timed in its layout: a third of the FLOPs in each") {
  // Forward, input gradient and weight gradient take one layout each (NN, NT, TN in some order)
  // for gpt2's and llama's blocks and the head alike, so with flat grids of 1e10 (nn), 1e9 (nt)
  // and 5e9 (tn) FLOP/s the matmul time is (1/1e10 + 1/1e9 + 1/5e9) / (3/1e10) = 13/3 of an
  // all-1e10 profile's, once the head's recomputed forward product (NT, chunked loss) is taken off
  // both.
  for (const char* arch : {"gpt2", "llama"}) {
    testing::Planned planned = testing::PlanYaml(
        kCpuSpec, {"cluster.devices_per_node=1", std::string("model.arch=") + arch,
                   "model.ffn_hidden_size=344"});
    REQUIRE(planned.result.ok);
    ir::DeviceProfile flat = TestProfile(), layouts = TestProfile();
    *flat.add_matmul_grids() = TwoSizeGrid(ir::DTYPE_FP32, 16, 4096, 1e10, 1e10);
    const std::array<std::pair<ir::MatmulLayout, double>, 3> rates = {
        {{ir::MATMUL_LAYOUT_NN, 1e10}, {ir::MATMUL_LAYOUT_NT, 1e9}, {ir::MATMUL_LAYOUT_TN, 5e9}}};
    for (const auto& [layout, rate] : rates) {
      ir::MatmulGrid g = TwoSizeGrid(ir::DTYPE_FP32, 16, 4096, rate, rate);
      g.set_layout(layout);
      *layouts.add_matmul_grids() = g;
    }
    auto base = EstimateStepTime(planned.result.plan, flat);
    auto timed = EstimateStepTime(planned.result.plan, layouts);
    REQUIRE(base.ok());
    REQUIRE(timed.ok());
    const double head = 2.0 * 4 * 128 * 128 * 256;  // b·s·h·V of kCpuSpec, 2 FLOPs each
    CHECK_THAT(timed->stages(0).matmul_seconds() - head / 1e9,
               WithinRel((base->stages(0).matmul_seconds() - head / 1e10) * 13 / 3, 1e-12));
  }
}

TEST_CASE("a block's matmul shapes add up to its FLOPs, forward and backward") {
  ir::Model gpt2 = Gpt2Small();
  gpt2.set_padded_vocab_size(50304);  // divisible by tp, as the planner pads it
  for (const ir::Model& model : {gpt2, Llama7B()}) {
    for (int64_t tp : {1, 2}) {
      for (int64_t cp : {1, 2}) {
        double sum = 0;
        for (const Gemm& g : LayerForwardGemms(model, 1024, 2, tp, cp)) {
          sum += g.Flops();
          double backward = 0;
          for (const Gemm& b : BackwardGemms(g)) backward += b.Flops();
          CHECK(backward == 2 * g.Flops());
        }
        CHECK_THAT(sum, WithinRel(LayerForwardFlops(model, 1024, 2, tp, cp).Total(), 1e-12));
        CHECK_THAT(HeadForwardGemm(model, 1024, 2, tp, cp).Flops(),
                   WithinRel(HeadForwardFlops(model, 1024, 2, tp, cp), 1e-12));
      }
    }
  }
  // gpt2 small, b = 2, s = 1024, tp 2: qkv [2048×768]·[768×1152]; Q·Kᵀ 12 products
  // [1024×64]·[64×1024]; the backward of qkv: dA (2048, 768, 1152), dB (768, 1152, 2048).
  const std::vector<Gemm> g = LayerForwardGemms(Gpt2Small(), 1024, 2, 2, 1);
  REQUIRE(g.size() == 6);
  CHECK((g[0].m == 2048 && g[0].n == 1152 && g[0].k == 768 && g[0].count == 1));
  CHECK((g[1].m == 1024 && g[1].n == 1024 && g[1].k == 64 && g[1].count == 12 && g[1].attention));
  const std::array<Gemm, 2> b = BackwardGemms(g[0]);
  CHECK((b[0].m == 2048 && b[0].n == 768 && b[0].k == 1152));
  CHECK((b[1].m == 768 && b[1].n == 1152 && b[1].k == 2048));
}

TEST_CASE("with a matmul grid each product is timed at its own shape") {
  testing::Planned planned = testing::PlanYaml(kCpuSpec, {"cluster.devices_per_node=1"});
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  // A flat grid at the peak gives the peak's time.
  ir::DeviceProfile flat = TestProfile();
  *flat.add_matmul_grids() = TwoSizeGrid(ir::DTYPE_FP32, 16, 4096, 96e9, 96e9);
  auto peak = EstimateStepTime(plan, TestProfile());
  auto grid = EstimateStepTime(plan, flat);
  REQUIRE(peak.ok());
  REQUIRE(grid.ok());
  CHECK_THAT(grid->stages(0).matmul_seconds(), WithinRel(peak->stages(0).matmul_seconds(), 1e-12));
  // A grid over (128, 512) that is fast (1e10) for m = 512 and slow (1e9) for m = 128: the
  // block's token-wise products (b·s = 512 rows) are fast, the attention products (128 × 128 ×
  // 32, 16 of them) slow, so the step lies strictly between all-slow and all-fast.
  ir::DeviceProfile shaped = TestProfile();
  ir::MatmulGrid g = TwoSizeGrid(ir::DTYPE_FP32, 128, 512, 1e9, 1e10);
  for (int i = 4; i < 8; ++i) g.set_flops_per_second(i, 1e10);  // (512, *, *)
  *shaped.add_matmul_grids() = g;
  const Gemm qkv = LayerForwardGemms(plan.model(), 128, 4, 1, 1)[0];
  CHECK((qkv.m == 512 && qkv.n == 384 && qkv.k == 128));
  CHECK_THAT(MatmulFlopsPerSecond(shaped, ir::DTYPE_FP32, qkv.layout, qkv.m, qkv.n, qkv.k), WithinRel(1e10, 1e-12));
  ir::DeviceProfile slow = TestProfile(), fast = TestProfile();
  *slow.add_matmul_grids() = TwoSizeGrid(ir::DTYPE_FP32, 128, 512, 1e9, 1e9);
  *fast.add_matmul_grids() = TwoSizeGrid(ir::DTYPE_FP32, 128, 512, 1e10, 1e10);
  auto slow_step = EstimateStepTime(plan, slow), fast_step = EstimateStepTime(plan, fast);
  REQUIRE(slow_step.ok());
  REQUIRE(fast_step.ok());
  // Selective recompute adds the attention products' forward time, at 1e9.
  auto none = EstimateStepTime(plan, shaped);
  testing::Planned selective_plan =
      testing::PlanYaml(kCpuSpec, {"cluster.devices_per_node=1", "training.recompute=selective"});
  REQUIRE(selective_plan.result.ok);
  auto selective = EstimateStepTime(selective_plan.result.plan, shaped);
  REQUIRE(none.ok());
  REQUIRE(selective.ok());
  CHECK(none->stages(0).matmul_seconds() < slow_step->stages(0).matmul_seconds());
  CHECK(none->stages(0).matmul_seconds() > fast_step->stages(0).matmul_seconds());
  const LayerFlops f = LayerForwardFlops(plan.model(), 128, 4, 1, 1);
  CHECK_THAT(selective->stages(0).matmul_seconds() - none->stages(0).matmul_seconds(),
             WithinRel(4 * f.attention / 1e9, 1e-9));
}

TEST_CASE("elementwise elements per op, block and head, with tp, sequence parallel and cp") {
  using E = ElementwiseOp;
  auto at = [](const ElementwiseElements& e, E op) { return e[static_cast<int>(op)]; };
  // gpt2 small, b = 2, s = 1024: t = 2048 tokens, h 768, ffn 3072, 12 heads.
  const ElementwiseElements g = BlockElementwiseElements(Gpt2Small(), 1024, 2, 1, 1, false);
  CHECK(at(g, E::kLayerNorm) == 2.0 * 2048 * 768);
  CHECK(at(g, E::kGeluTanh) == 2048.0 * 3072);
  CHECK(at(g, E::kCausalSoftmax) == 2.0 * 12 * 1024 * 1024);
  CHECK(at(g, E::kRmsNorm) == 0);
  CHECK(at(g, E::kSiluMul) == 0);
  // Two residual adds; bias adds: c_attn 3h and c_fc ffn wide, both c_proj h wide.
  CHECK(at(g, E::kResidualAdd) == 2.0 * 2048 * 768);
  CHECK(at(g, E::kBiasAdd) == 2048.0 * (3 * 768 + 3072) + 2.0 * 2048 * 768);
  CHECK(at(g, E::kRotary) == 0);
  // tp 2 with sequence parallelism halves everything; cp 2 halves tokens and query rows.
  const ElementwiseElements gs = BlockElementwiseElements(Gpt2Small(), 1024, 2, 2, 1, true);
  CHECK(at(gs, E::kLayerNorm) == 2048.0 * 768);
  CHECK(at(gs, E::kGeluTanh) == 1024.0 * 3072);
  CHECK(at(gs, E::kCausalSoftmax) == 6.0 * 1024 * 1024 * 2);
  // The column-parallel biases split over tp; the stream's (c_proj, residual) over the sequence.
  CHECK(at(gs, E::kResidualAdd) == 2.0 * 1024 * 768);
  CHECK(at(gs, E::kBiasAdd) == 2048.0 * (3 * 768 + 3072) / 2 + 2.0 * 1024 * 768);
  // Without sequence parallelism every rank adds its whole stream after the all-reduce.
  CHECK(at(BlockElementwiseElements(Gpt2Small(), 1024, 2, 2, 1, false), E::kResidualAdd) ==
        2.0 * 2048 * 768);
  CHECK(at(BlockElementwiseElements(Gpt2Small(), 1024, 2, 2, 1, false), E::kLayerNorm) ==
        2.0 * 2048 * 768);
  const ElementwiseElements gc = BlockElementwiseElements(Gpt2Small(), 1024, 2, 1, 2, false);
  CHECK(at(gc, E::kGeluTanh) == 1024.0 * 3072);
  CHECK(at(gc, E::kCausalSoftmax) == 2.0 * 12 * 512 * 1024);
  // llama 7B: RMS norms and silu_mul; the head's cross entropy over V/tp.
  const ElementwiseElements l = BlockElementwiseElements(Llama7B(), 4096, 1, 1, 1, false);
  CHECK(at(l, E::kRmsNorm) == 2.0 * 4096 * 4096);
  CHECK(at(l, E::kSiluMul) == 4096.0 * 11008);
  CHECK(at(l, E::kLayerNorm) == 0);
  CHECK(at(l, E::kBiasAdd) == 0);
  CHECK(at(l, E::kResidualAdd) == 2.0 * 4096 * 4096);
  // Queries and keys rotated: 32 + 32 heads of 128.
  CHECK(at(l, E::kRotary) == 4096.0 * (32 + 32) * 128);
  // Grouped keys: 8 kv heads; at tp 16 each is replicated on 2 ranks (kv_head_replicas 2),
  // so a rank rotates 2 query heads and 1 key head.
  ir::Model gqa = Llama7B();
  gqa.set_num_kv_heads(8);
  CHECK(at(BlockElementwiseElements(gqa, 4096, 1, 1, 1, false), E::kRotary) ==
        4096.0 * (32 + 8) * 128);
  gqa.set_kv_head_replicas(2);
  CHECK(at(BlockElementwiseElements(gqa, 4096, 1, 16, 1, false), E::kRotary) ==
        4096.0 * (2 + 1) * 128);
  const ElementwiseElements head = HeadElementwiseElements(Llama7B(), 4096, 1, 2, 1, false);
  CHECK(at(head, E::kRmsNorm) == 4096.0 * 4096);
  CHECK(at(head, E::kCrossEntropy) == 4096.0 * 16000);
  for (int i = 0; i < kElementwiseOpCount; ++i) {
    CHECK(ElementwiseOpByName(ElementwiseOpName(static_cast<E>(i))) == static_cast<E>(i));
  }
  CHECK_FALSE(ElementwiseOpByName("gelu").has_value());
}

ir::ElementwiseCost Cost(const std::string& op, ir::Dtype dtype, double f, double b) {
  ir::ElementwiseCost c;
  c.set_op(op);
  c.set_dtype(dtype);
  c.set_forward_seconds_per_element(f);
  c.set_backward_seconds_per_element(b);
  return c;
}

TEST_CASE("measured elementwise ops add their time, recompute runs their forward again") {
  // kCpuSpec on one worker: gpt2 h 128, 4 heads, 4 layers, b 4, s 128, V 256; t = 512 tokens.
  auto plan_with = [](const char* recompute) {
    return testing::PlanYaml(kCpuSpec, {"cluster.devices_per_node=1",
                                        std::string("training.recompute=") + recompute});
  };
  ir::DeviceProfile p = TestProfile();
  *p.add_elementwise_costs() = Cost("gelu_tanh", ir::DTYPE_FP32, 1e-9, 2e-9);
  *p.add_elementwise_costs() = Cost("causal_softmax", ir::DTYPE_FP32, 3e-9, 4e-9);
  *p.add_elementwise_costs() = Cost("cross_entropy", ir::DTYPE_FP32, 5e-9, 6e-9);
  *p.add_elementwise_costs() = Cost("residual_add", ir::DTYPE_FP32, 8e-9, 9e-9);
  *p.add_elementwise_costs() = Cost("layer_norm", ir::DTYPE_BF16, 1, 1);  // another dtype: unused
  const double gelu = 512.0 * 512, softmax = 4.0 * 4 * 128 * 128, logits = 512.0 * 256;
  const double residual = 2.0 * 512 * 128;
  const double none =
      4 * (gelu * 3e-9 + softmax * 7e-9 + residual * 17e-9) + logits * 11e-9;
  testing::Planned base = plan_with("none");
  REQUIRE(base.result.ok);
  auto e = EstimateStepTime(base.result.plan, p);
  REQUIRE(e.ok());
  CHECK_THAT(e->stages(0).elementwise_seconds(), WithinRel(none, 1e-12));
  CHECK_THAT(e->stages(0).seconds(),
             WithinRel(e->stages(0).matmul_seconds() + e->stages(0).memory_seconds() + none, 1e-12));
  testing::Planned selective = plan_with("selective");
  REQUIRE(selective.result.ok);
  auto s = EstimateStepTime(selective.result.plan, p);
  REQUIRE(s.ok());
  CHECK_THAT(s->stages(0).elementwise_seconds(), WithinRel(none + 4 * softmax * 3e-9, 1e-12));
  testing::Planned full = plan_with("full");
  REQUIRE(full.result.ok);
  auto f = EstimateStepTime(full.result.plan, p);
  REQUIRE(f.ok());
  CHECK_THAT(f->stages(0).elementwise_seconds(),
             WithinRel(none + 4 * (gelu * 1e-9 + softmax * 3e-9 + residual * 8e-9), 1e-12));
  // Without costs the term is 0 (built-in profiles).
  auto plain = EstimateStepTime(base.result.plan, TestProfile());
  REQUIRE(plain.ok());
  CHECK(plain->stages(0).elementwise_seconds() == 0);
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
  CHECK(DefaultDeviceProfileName(ir::DEVICE_TYPE_CUDA, "a100-40gb") == "a100");
  CHECK(DefaultDeviceProfileName(ir::DEVICE_TYPE_CUDA, "") == "h100");
  CHECK(DefaultDeviceProfileName(ir::DEVICE_TYPE_CPU, "") == "cpu");
}

TEST_CASE("a profile file's worker scaling, grids and measured step figures reach the plan and its summary") {
  spec::DeviceProfileValues v;
  v.name = "cpu-calibrated";
  v.source = "test";
  v.matmul_fp32_flops_per_second = v.matmul_bf16_flops_per_second =
      v.matmul_fp16_flops_per_second = 5e10;
  v.memory_bytes_per_second = 2e10;
  v.intra_node_bytes_per_second = v.inter_node_bytes_per_second = 1e9;
  v.intra_node_latency_seconds = v.inter_node_latency_seconds = 1e-4;
  v.matmul_efficiency = v.memory_efficiency = v.link_efficiency = 1;
  v.shared_cores_per_node = 2;
  v.worker_scaling = {{1, 0.62}, {2, 1}, {4, 0.81}};
  v.matmul_grids = {{"fp32", {1, 2}, std::vector<double>(8, 1e9)},
                    {"bf16", {1, 2}, std::vector<double>(8, 2e9), "nt"}};
  v.blocking_collective_seconds = 1.5e-3;
  v.adamw_seconds_per_parameter = 3.25e-9;
  v.shared_core_bucket_overlap = 0.45;
  const std::string path =
      std::filesystem::temp_directory_path() / ("accel_scaling_" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << spec::DeviceProfileToJson(v);
  testing::Planned planned = testing::PlanYaml(kCpuSpec, {"cluster.device_profile=" + path});
  std::filesystem::remove(path);
  REQUIRE(planned.result.ok);
  const ir::DeviceProfile& p = planned.result.plan.step_time().profile();
  REQUIRE(p.worker_scaling_size() == 3);
  CHECK(p.worker_scaling(0).workers_per_node() == 1);
  CHECK(p.worker_scaling(0).efficiency() == 0.62);
  CHECK(p.worker_scaling(2).workers_per_node() == 4);
  CHECK(p.worker_scaling(2).efficiency() == 0.81);
  REQUIRE(p.matmul_grids_size() == 2);
  CHECK(p.matmul_grids(0).layout() == ir::MATMUL_LAYOUT_NN);
  CHECK(p.matmul_grids(1).dtype() == ir::DTYPE_BF16);
  CHECK(p.matmul_grids(1).layout() == ir::MATMUL_LAYOUT_NT);
  CHECK(p.matmul_grids(1).flops_per_second(7) == 2e9);
  CHECK(p.blocking_collective_seconds() == 1.5e-3);
  CHECK(p.adamw_seconds_per_parameter() == 3.25e-9);
  CHECK(p.shared_core_bucket_overlap() == 0.45);
  CHECK_THAT(ir::PlanSummary(planned.result.plan),
             Catch::Matchers::Contains("; per core, 2 cores per node; blocking tp collective +1.5 ms"
                                       "; AdamW 3.25 ns/parameter; buckets 45% hidden on shared "
                                       "cores\n"));
  CHECK_THAT(ir::PlanSummary(planned.result.plan),
             Catch::Matchers::Contains(" + measured optimizer step "));
  const ir::CommunicationTime& buckets = planned.result.plan.step_time().communication(0);
  REQUIRE(buckets.what() == "gradient buckets, last micro-step");
  CHECK_THAT(buckets.formula(),
             Catch::Matchers::EndsWith(", x (1 - 0.45 hidden on shared cores (profile))"));
  CHECK_THAT(buckets.exposed_seconds(), WithinRel(0.55 * buckets.seconds(), 1e-12));
  CHECK_THAT(ir::PlanSummary(planned.result.plan),
             Catch::Matchers::Contains("  measured: matmul throughput by shape for fp32 nn, bf16 nt; "
                                       "0 elementwise op costs; worker efficiency by workers per "
                                       "node 1 x 0.62, 2 x 1.00, 4 x 0.81\n"));
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
