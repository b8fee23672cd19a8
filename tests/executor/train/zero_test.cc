// Sharding stages 1–3 and hybrid sharding against stage 0 (parity from identical initial weights),
// and the collectives that run compared with the plan's buckets and units.
#include <torch/torch.h>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "../multi_rank.h"
#include "../plan_from_yaml.h"
#include "sharded_save.h"
#include "common/diagnostics.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/sharded_tensors.h"
#include "common/remove_tree.h"
#include "executor/comm_trace.h"
#include "executor/models/causal_lm.h"
#include "executor/process_groups.h"
#include "executor/train/trainer.h"
#include "ir/enum_names.h"
#include "planner/planner.h"
#include "spec/loader.h"
#include "tests/common/files.h"

namespace accel::exec {
namespace {

using accel::testing::RemoveDir;

using testing::Ok;
using testing::RunRanks;

// A tiny GPT-2 job; `layout` sets parallel/sharding/batch fields. Bucket size 3000 elements gives
// several buckets that cut across units.
ir::Plan PlanFor(int world, const std::string& layout, const std::vector<std::string>& overrides = {}) {
  const std::string yaml = R"(version: 1
name: zero-parity
model: {arch: gpt2, hidden_size: 32, num_layers: 3, num_heads: 2, vocab_size: 128, max_seq_len: 16}
data:
  train: {path: /usr/share/games/fortunes, format: text, tokenizer: bytes}
  seq_len: 16
  micro_batch_size: 2
  global_batch_size: auto
training:
  steps: 4
  optimizer: {name: adamw, lr: 1.0e-2, betas: [0.9, 0.95], weight_decay: 0.1}
  lr_schedule: {name: constant, warmup_steps: 0}
cluster: {nodes: 1, devices_per_node: )" + std::to_string(world) + R"(, device: cpu, device_memory: 1GiB}
)" + layout;
  return testing::PlanFromYaml(yaml, overrides);
}

ModelConfig ConfigOf(const ir::Model& m) {
  ModelConfig c;
  c.arch = ModelArch::kGpt2;
  c.hidden_size = m.hidden_size();
  c.num_layers = m.num_layers();
  c.num_heads = m.num_heads();
  c.num_kv_heads = m.num_heads();
  c.ffn_size = m.ffn_hidden_size();
  c.vocab_size = m.vocab_size();
  c.max_seq_len = m.max_seq_len();
  return c;
}

// What one rank saw: per-step losses and the final whole weights.
struct ZeroRankOutcome {
  std::vector<double> losses;
  std::map<std::string, torch::Tensor> weights;
  std::vector<CollectiveRecord> trace;
  GradSyncStats sync;  // the last step's
};

// Trains `plan` for `steps` updates on world ranks from the same seeded weights. Every update
// reads the same global batch; data-parallel rank d takes rows [d·micro, (d+1)·micro) of each
// micro-step.
// Where Train saves (after update save_after, when > 0) or resumes from (resume: the newest
// checkpoint under root), through the sharded checkpoint protocol the worker uses.
struct ZeroCheckpoint {
  std::string root;
  int save_after = 0;
  bool resume = false;
};

std::vector<ZeroRankOutcome> TrainZero(const ir::Plan& plan, int steps, double clip = 0,
                               OptimizerKind optimizer = OptimizerKind::kAdamW,
                               const ZeroCheckpoint& ckpt = {}) {
  const int world = static_cast<int>(plan.topology().world_size());
  const int64_t micro = plan.batch().micro_batch_size();
  const int64_t accum = plan.batch().grad_accum_steps();
  const int64_t dp = plan.batch().data_parallel_size();
  const int64_t seq = plan.batch().seq_len();
  torch::manual_seed(7);
  torch::Tensor data = torch::randint(0, plan.model().vocab_size(), {steps, accum, dp * micro, seq + 1}, torch::kLong);
  std::vector<ZeroRankOutcome> out(world);
  std::vector<std::string> errors = RunRanks(world, [&](int rank, Rendezvous& rdzv) {
    auto trace = std::make_shared<CollectiveTrace>();
    auto world_comm = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(world_comm.status());
    auto groups = ProcessGroups::Create(plan, rank, rdzv, *world_comm, CommBackend::kGloo);
    Ok(groups.status());
    auto model = BuildCausalLm(ConfigOf(plan.model()), 1234);
    Ok(model.status());
    const auto& recompute = plan.training().recompute_modules();
    Ok((*model)->SetRecomputeModules({recompute.begin(), recompute.end()}));
    std::vector<std::pair<std::string, int64_t>> names;
    for (const auto& item : (*model)->named_parameters()) names.emplace_back(item.key(), item.value().numel());
    auto layout = ShardLayout::FromPlan(plan.sharding(), 0, names, groups->RankIn("dp_shard"));
    Ok(layout.status());
    DataParallelGroups dpg;
    auto traced = [&](std::shared_ptr<Communicator> c) { return c ? WithTrace(c, trace) : c; };
    dpg.dp = traced(groups->Get("dp"));
    dpg.dp_shard = traced(groups->Get("dp_shard"));
    dpg.dp_replicate = traced(groups->Get("dp_replicate"));
    TrainerOptions options;
    options.schedule.peak_lr = 1e-2;
    options.schedule.cosine = false;
    options.weight_decay = 0.1;
    options.grad_clip_norm = clip;
    options.optimizer = optimizer;
    GradSyncOptions sync;
    sync.tied_embeddings = true;
    sync.offload_optimizer = plan.sharding().offload() != ir::OFFLOAD_NONE;
    auto trainer = Trainer::Create(*model, CausalLmLoss(), options, *std::move(layout), dpg, sync);
    Ok(trainer.status());
    const int64_t d = groups->RankIn("dp");
    CheckpointStore store(ckpt.root, 2);
    if (ckpt.resume) {
      auto latest = store.LatestGood();
      Ok(latest.status());
      Ok((*trainer)->LoadState(latest->path).status());
    }
    for (int s = static_cast<int>((*trainer)->step()); s < steps; ++s) {
      std::vector<torch::Tensor> batches;
      for (int64_t a = 0; a < accum; ++a) batches.push_back(data[s][a].narrow(0, d * micro, micro));
      auto result = (*trainer)->Step(batches);
      Ok(result.status());
      out[rank].losses.push_back(result->loss);
      if (ckpt.save_after == s + 1) {
        testing::SaveShardedCheckpoint(**trainer, store, **world_comm, s + 1);
      }
    }
    out[rank].sync = (*trainer)->sync().stats();
    Ok((*trainer)->sync().GatherAll());
    for (const auto& item : (*model)->named_parameters()) out[rank].weights[item.key()] = item.value().detach().clone();
    out[rank].trace = trace->Records();
  });
  for (const std::string& e : errors) REQUIRE(e == "");
  return out;
}

// Largest |a - b| / (|b| + 1e-3) over every weight.
double MaxRelativeDifference(const ZeroRankOutcome& a, const ZeroRankOutcome& b) {
  double worst = 0;
  for (const auto& [name, w] : b.weights) {
    torch::Tensor diff = (a.weights.at(name) - w).abs() / (w.abs() + 1e-3);
    worst = std::max(worst, diff.max().item<double>());
  }
  return worst;
}

bool BitwiseEqual(const ZeroRankOutcome& a, const ZeroRankOutcome& b) {
  if (a.losses != b.losses) return false;
  for (const auto& [name, w] : b.weights) {
    if (!torch::equal(a.weights.at(name), w)) return false;
  }
  return true;
}

const char* kTwoRanks = "parallel: {data_replicate: 1, data_shard: 2}\nsharding: {stage: %d, bucket_size: 3000}\n";

std::string Layout(const char* format, int stage) {
  char buf[256];
  std::snprintf(buf, sizeof buf, format, stage);
  return buf;
}

TEST_CASE("ZeRO stages 1, 2 and 3 on 2 ranks equal stage 0 bitwise") {
  // Same arithmetic: with two ranks every reduction is a + b then / 2 whatever the buffer layout,
  // and AdamW is elementwise, so sharding its update changes no bit.
  const ZeroRankOutcome reference = TrainZero(PlanFor(2, Layout(kTwoRanks, 0)), 3)[0];
  for (int stage = 1; stage <= 3; ++stage) {
    INFO("stage " << stage);
    std::vector<ZeroRankOutcome> ranks = TrainZero(PlanFor(2, Layout(kTwoRanks, stage)), 3);
    CHECK(BitwiseEqual(ranks[0], reference));
    CHECK(BitwiseEqual(ranks[1], reference));
  }
}

TEST_CASE("recompute full and selective under ZeRO-3 equal stage 0 without recompute bitwise") {
  // Recompute re-runs the same ops on the same inputs, and stage 3 re-gathers a block's exact
  // parameters before its recompute, so nothing changes a bit.
  const ZeroRankOutcome reference = TrainZero(PlanFor(2, Layout(kTwoRanks, 0)), 3)[0];
  for (const char* mode : {"full", "selective"}) {
    INFO("recompute " << mode);
    ir::Plan plan = PlanFor(2, Layout(kTwoRanks, 3), {std::string("training.recompute=") + mode});
    REQUIRE(plan.training().recompute_modules_size() == 3);
    std::vector<ZeroRankOutcome> ranks = TrainZero(plan, 3);
    CHECK(BitwiseEqual(ranks[0], reference));
    CHECK(BitwiseEqual(ranks[1], reference));
  }
}

TEST_CASE("offloaded optimizer (stages 1-3) and offload all (stage 3) equal stage 0 bitwise") {
  // The optimizer steps on host copies of the same fp32 values: the same arithmetic.
  const ZeroRankOutcome reference = TrainZero(PlanFor(2, Layout(kTwoRanks, 0)), 3)[0];
  for (auto [stage, offload] : {std::pair{1, "optimizer"}, std::pair{2, "optimizer"},
                                std::pair{3, "optimizer"}, std::pair{3, "all"}}) {
    INFO("stage " << stage << ", offload " << offload);
    ir::Plan plan = PlanFor(2, Layout(kTwoRanks, stage), {std::string("sharding.offload=") + offload});
    REQUIRE(ir::Name(plan.sharding().offload()) == offload);
    std::vector<ZeroRankOutcome> ranks = TrainZero(plan, 3);
    CHECK(BitwiseEqual(ranks[0], reference));
    CHECK(BitwiseEqual(ranks[1], reference));
  }
}

TEST_CASE("saved at ZeRO-2, resumed at ZeRO-3 and at ZeRO-1: bitwise the uninterrupted run") {
  // Stages 1-3 are bitwise stage 0 on two ranks (above), so the resumed runs must equal 4 straight
  // updates of stage 0 exactly: weights, AdamW moments and step counts all come back.
  const std::string root = std::filesystem::temp_directory_path() / ("accel_zero_resume_" + std::to_string(::getpid()));
  RemoveDir(root);
  const ZeroRankOutcome straight = TrainZero(PlanFor(2, Layout(kTwoRanks, 0)), 4)[0];
  TrainZero(PlanFor(2, Layout(kTwoRanks, 2)), 2, 0, OptimizerKind::kAdamW, {root, 2, false});
  for (int stage : {3, 1}) {
    INFO("resumed at stage " << stage);
    std::vector<ZeroRankOutcome> resumed = TrainZero(PlanFor(2, Layout(kTwoRanks, stage)), 4, 0, OptimizerKind::kAdamW, {root, 0, true});
    for (const auto& [name, w] : straight.weights) CHECK(torch::equal(resumed[0].weights.at(name), w));
    REQUIRE(resumed[0].losses.size() == 2);
    CHECK(resumed[0].losses[0] == straight.losses[2]);
    CHECK(resumed[0].losses[1] == straight.losses[3]);
  }
  RemoveDir(root);
}

TEST_CASE("resharding resume: 4 ranks to 2, any stage to any stage, weights bitwise the saved ones") {
  // The same global batch of 8 rows: micro 2 on 4 ranks, micro 4 on 2 ranks. Resuming runs no
  // update when the target step is the saved one, so the gathered weights must be the saved
  // ones bit for bit; continuing must then follow the uninterrupted 4-rank run up to the order of
  // fp32 sums (other ranks, other micro-batches): SGD keeps that at rounding level, as above.
  const std::string root = std::filesystem::temp_directory_path() / ("accel_reshard_" + std::to_string(::getpid()));
  const char* kFourRanks = "parallel: {data_replicate: 1, data_shard: 4}\nsharding: {stage: %d, bucket_size: 3000}\n";
  const ZeroRankOutcome straight = TrainZero(PlanFor(4, Layout(kFourRanks, 3)), 4, 0, OptimizerKind::kSgd)[0];
  for (auto [saved_stage, resumed_stage] : {std::pair{3, 0}, std::pair{2, 3}}) {
    INFO("saved at stage " << saved_stage << " on 4 ranks, resumed at stage " << resumed_stage << " on 2");
    RemoveDir(root);
    const ZeroRankOutcome saved =
        TrainZero(PlanFor(4, Layout(kFourRanks, saved_stage)), 2, 0, OptimizerKind::kSgd, {root, 2, false})[0];
    const ir::Plan two = PlanFor(2, Layout(kTwoRanks, resumed_stage), {"data.micro_batch_size=4"});
    REQUIRE(two.batch().global_batch_size() == 8);
    std::vector<ZeroRankOutcome> loaded = TrainZero(two, 2, 0, OptimizerKind::kSgd, {root, 0, true});
    CHECK(loaded[0].losses.empty());
    for (const auto& [name, w] : saved.weights) CHECK(torch::equal(loaded[0].weights.at(name), w));
    for (const auto& [name, w] : saved.weights) CHECK(torch::equal(loaded[1].weights.at(name), w));
    std::vector<ZeroRankOutcome> continued = TrainZero(two, 4, 0, OptimizerKind::kSgd, {root, 0, true});
    REQUIRE(continued[0].losses.size() == 2);
    CHECK(continued[0].losses[0] == Approx(straight.losses[2]).epsilon(1e-6));
    CHECK(MaxRelativeDifference(continued[0], straight) < 1e-5);
  }
  RemoveDir(root);
}

TEST_CASE("ZeRO with gradient accumulation matches stage 0 within fp32 rounding") {
  // Stages 2–3 reduce every micro-step and add the averages; stage 0 adds locally and reduces
  // once: (a1 + a2 + b1 + b2) / 2 summed in another order. Each reordering costs a few ulps of
  // the gradient (2^-23 relative). SGD keeps that at rounding level in the weights (AdamW divides
  // by sqrt(v) and turns ulps of a near-zero gradient into O(lr) updates), so 1e-5 relative holds
  // by a wide margin, while a real bug (a missing or doubled micro-step) moves weights by > 1e-3.
  // Accumulation 2: global batch 8 = micro 2 x dp 2 x 2 accumulation steps.
  auto with_accum = [](int stage) {
    ir::Plan plan = PlanFor(2, Layout(kTwoRanks, stage), {"data.global_batch_size=8"});
    REQUIRE(plan.batch().grad_accum_steps() == 2);
    return plan;
  };
  const ZeroRankOutcome reference = TrainZero(with_accum(0), 3, 0, OptimizerKind::kSgd)[0];
  for (int stage = 1; stage <= 3; ++stage) {
    INFO("stage " << stage);
    std::vector<ZeroRankOutcome> ranks = TrainZero(with_accum(stage), 3, 0, OptimizerKind::kSgd);
    CHECK(MaxRelativeDifference(ranks[0], reference) < 1e-5);
    for (size_t s = 0; s < reference.losses.size(); ++s) {
      CHECK(ranks[0].losses[s] == Approx(reference.losses[s]).epsilon(1e-6));
    }
  }
}

// The collectives issued in one step, by kind, against the plan.
std::vector<CollectiveRecord> Kind(const std::vector<CollectiveRecord>& all, const std::string& kind) {
  std::vector<CollectiveRecord> out;
  for (const CollectiveRecord& r : all) {
    if (r.kind == kind) out.push_back(r);
  }
  return out;
}

TEST_CASE("hybrid sharding (2 replicas x 2 shards, stage 3) matches stage 0 on 4 ranks") {
  // Averages over dp_shard then dp_replicate equal the average over all four ranks up to the
  // order of the fp32 sums (a few ulps per step); same bound, optimizer and argument as above.
  const ZeroRankOutcome reference =
      TrainZero(PlanFor(4, "parallel: {data_replicate: 4, data_shard: 1}\nsharding: {stage: 0, bucket_size: 3000}\n"), 3, 0,
            OptimizerKind::kSgd)[0];
  std::vector<ZeroRankOutcome> ranks =
      TrainZero(PlanFor(4, "parallel: {data_replicate: 2, data_shard: 2}\nsharding: {stage: 3, bucket_size: 3000}\n"), 3, 0,
            OptimizerKind::kSgd);
  for (const ZeroRankOutcome& r : ranks) CHECK(MaxRelativeDifference(r, reference) < 1e-5);
  CHECK(BitwiseEqual(ranks[1], ranks[0]));
  CHECK(BitwiseEqual(ranks[3], ranks[2]));
}

TEST_CASE("hybrid sharding with accumulation all-reduces over dp_replicate once per step, per bucket") {
  // Accumulation 2 (global batch 16 = micro 2 x dp 4 x 2): the accumulated fp32 shards are
  // averaged over dp_replicate after the last micro-step only; same bound and argument as above.
  const std::vector<std::string> accum = {"data.global_batch_size=16"};
  const ZeroRankOutcome reference =
      TrainZero(PlanFor(4, "parallel: {data_replicate: 4, data_shard: 1}\nsharding: {stage: 0, bucket_size: 3000}\n", accum),
            3, 0, OptimizerKind::kSgd)[0];
  for (int stage : {2, 3}) {
    INFO("stage " << stage);
    const ir::Plan plan = PlanFor(4, Layout("parallel: {data_replicate: 2, data_shard: 2}\n"
                                            "sharding: {stage: %d, bucket_size: 3000}\n", stage), accum);
    REQUIRE(plan.batch().grad_accum_steps() == 2);
    std::vector<ZeroRankOutcome> ranks = TrainZero(plan, 3, 0, OptimizerKind::kSgd);
    for (const ZeroRankOutcome& r : ranks) CHECK(MaxRelativeDifference(r, reference) < 1e-5);
    CHECK(BitwiseEqual(ranks[1], ranks[0]));
    // One step: dp_replicate (2 ranks) all-reduces each bucket's fp32 shard once; the loss
    // average runs over dp (4 ranks) and the gradient norm's fp64 partial sums over dp_shard.
    std::vector<CollectiveRecord> replicate;
    for (const CollectiveRecord& r : Kind(TrainZero(plan, 1)[0].trace, "all_reduce")) {
      if (r.group_size == 2 && r.dtype != "Double") replicate.push_back(r);
    }
    REQUIRE(replicate.size() == static_cast<size_t>(plan.sharding().buckets_size()));
    std::map<std::string, int64_t> shard;
    for (const ir::ShardUnit& u : plan.sharding().units()) {
      for (const ir::Parameter& p : u.parameters()) shard[p.name()] = p.shard_count();
    }
    for (int b = 0; b < plan.sharding().buckets_size(); ++b) {
      int64_t owned = 0;
      for (const std::string& name : plan.sharding().buckets(b).parameters()) owned += shard[name];
      CHECK(replicate[b].elements == owned);
      CHECK(replicate[b].dtype == "Float");
    }
  }
}

TEST_CASE("gradient clipping over sharded gradients equals the unsharded clipping") {
  const ZeroRankOutcome reference = TrainZero(PlanFor(2, Layout(kTwoRanks, 0)), 3, /*clip=*/0.05, OptimizerKind::kSgd)[0];
  std::vector<ZeroRankOutcome> ranks = TrainZero(PlanFor(2, Layout(kTwoRanks, 2)), 3, /*clip=*/0.05, OptimizerKind::kSgd);
  // The global norm sums the owners' fp64 partial sums in another order: the clip coefficient
  // can differ in its last bits, hence a tolerance of a few fp32 ulps.
  CHECK(MaxRelativeDifference(ranks[0], reference) < 1e-5);
}

TEST_CASE("the collectives that run are the plan's buckets and units") {
  SECTION("stage 0: one all-reduce per planned bucket, of its elements, in bucket order") {
    ir::Plan plan = PlanFor(2, Layout(kTwoRanks, 0));
    std::vector<CollectiveRecord> trace = TrainZero(plan, 1)[0].trace;
    std::vector<CollectiveRecord> reduces = Kind(trace, "all_reduce");
    // The last all-reduce is the loss average.
    REQUIRE(reduces.size() == static_cast<size_t>(plan.sharding().buckets_size()) + 1);
    for (int b = 0; b < plan.sharding().buckets_size(); ++b) {
      CHECK(reduces[b].elements == plan.sharding().buckets(b).elements());
      CHECK(reduces[b].dtype == "Float");
    }
  }
  SECTION("stage 2: one reduce-scatter per bucket of degree x its shard counts, then unit all-gathers") {
    ir::Plan plan = PlanFor(2, Layout(kTwoRanks, 2));
    std::map<std::string, int64_t> shard;
    for (const ir::ShardUnit& u : plan.sharding().units()) {
      for (const ir::Parameter& p : u.parameters()) shard[p.name()] = p.shard_count();
    }
    std::vector<CollectiveRecord> trace = TrainZero(plan, 1)[0].trace;
    std::vector<CollectiveRecord> scatters = Kind(trace, "reduce_scatter");
    REQUIRE(scatters.size() == static_cast<size_t>(plan.sharding().buckets_size()));
    for (int b = 0; b < plan.sharding().buckets_size(); ++b) {
      int64_t expected = 0;
      for (const std::string& name : plan.sharding().buckets(b).parameters()) expected += 2 * shard[name];
      CHECK(scatters[b].elements == expected);
    }
    std::vector<CollectiveRecord> gathers = Kind(trace, "all_gather");
    // After the update each unit's owned shards are gathered (the final GatherAll adds none).
    REQUIRE(gathers.size() == static_cast<size_t>(plan.sharding().units_size()));
    for (int u = 0; u < plan.sharding().units_size(); ++u) {
      CHECK(gathers[u].elements == plan.sharding().units(u).shard_count());
    }
  }
  SECTION("stage 3: every unit is gathered for forward and again for backward") {
    ir::Plan plan = PlanFor(2, Layout(kTwoRanks, 3));
    std::vector<CollectiveRecord> gathers = Kind(TrainZero(plan, 1)[0].trace, "all_gather");
    // Forward: every unit once. Backward: every unit again except the head (kept) and the tied
    // embeddings (kept). After the update: the units with persistent parameters (norms, biases
    // under param_persistence_threshold) refresh those. GatherAll then gathers every unit once.
    const size_t units = static_cast<size_t>(plan.sharding().units_size());
    size_t with_persistent = 0;
    for (const ir::ShardUnit& u : plan.sharding().units()) {
      bool any = false;
      for (const ir::Parameter& p : u.parameters()) any = any || p.persistent();
      with_persistent += any ? 1 : 0;
    }
    CHECK(with_persistent == units - 1);  // every unit but the embeddings
    CHECK(gathers.size() == units + (units - 2) + with_persistent + units);
  }
}

TEST_CASE("backward holds at most two reduce buckets: the one reducing and the one filling") {
  // Without the bound every bucket of the micro-step stayed until it ended: the whole unsharded
  // gradient in the reduce dtype, which ZeRO-2 exists to avoid.
  for (int stage : {0, 1, 2, 3}) {
    CAPTURE(stage);
    ir::Plan plan = PlanFor(2, Layout(kTwoRanks, stage));
    REQUIRE(plan.sharding().buckets_size() >= 4);
    const GradSyncStats sync = TrainZero(plan, 1)[0].sync;
    CHECK(sync.buckets == plan.sharding().buckets_size());
    CHECK(sync.max_live_buckets == 2);
  }
}

TEST_CASE("a plan that does not match the model is refused naming the parameter") {
  ir::Plan plan = PlanFor(2, Layout(kTwoRanks, 2));
  std::vector<std::pair<std::string, int64_t>> names = {{"transformer.wte.weight", 128 * 32}};
  auto layout = ShardLayout::FromPlan(plan.sharding(), 0, names, 0);
  REQUIRE_FALSE(layout.ok());
  CHECK(std::string(layout.status().message()) ==
        "the plan's shard unit embeddings holds parameter transformer.wpe.weight, which the model does not have");
  names.clear();
  for (const auto& item : (*BuildCausalLm(ConfigOf(plan.model()), 1))->named_parameters()) {
    names.emplace_back(item.key(), item.value().numel());
  }
  names[1].second = 7;
  layout = ShardLayout::FromPlan(plan.sharding(), 0, names, 0);
  REQUIRE_FALSE(layout.ok());
  CHECK(std::string(layout.status().message()) ==
        "parameter transformer.wpe.weight has 7 elements in the model but the plan says 512 (shard 256 of 2)");
}

}  // namespace
}  // namespace accel::exec
