// Pipeline parallelism against one rank: stage models, the op-list interpreter (GPipe, 1F1B,
// interleaved 1F1B), the tied embedding's copy on the last stage, pipelines combined with data
// parallelism (every sharding stage) and with tensor and sequence parallelism (3D), with plans
// from the real planner; and pipeline checkpoints.
#include <torch/torch.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "../multi_rank.h"
#include "../plan_from_yaml.h"
#include "parity.h"
#include "sharded_save.h"
#include "checkpoint/checkpoint_store.h"
#include "common/remove_tree.h"
#include "executor/models/causal_lm.h"
#include "executor/models/tensor_parallel.h"
#include "executor/process_groups.h"
#include "executor/train/trainer.h"
#include "ir/plan_access.h"
#include "tests/common/files.h"

namespace accel::exec {
namespace {

using accel::testing::RemoveDir;

using testing::Expect;
using testing::CheckpointPlan;
using testing::MaxRelativeDifference;
using testing::RankOutcome;
using testing::Train;
using testing::Ok;
using testing::RunRanks;

// Tolerances. A pipeline runs every microbatch's arithmetic exactly as one rank does, so an
// untied model on a pipeline alone trains bitwise like one rank (checked with equality below).
// What can reorder fp sums: a tied embedding's gradient (the first stage's and the last stage's
// contributions are summed once at the end instead of as each backward produces them: measured
// 7.2e-7 relative in weights after 4 steps), data parallelism (the mean of two 2-row losses
// instead of one 4-row mean: 1.9e-6), and tensor parallelism's row- and vocabulary-parallel sums
// (3D: 3.9e-6 gpt2, 1.1e-6 llama); losses stay within 6e-8 relative. Through 4 SGD steps
// (linear in the gradient, so no amplification) that stays below 1e-5, while a missing tied
// gradient sum, a stage left out of the gradient norm (clipping acts here) or a gradient sent
// back to the wrong microbatch changes weights by far more (leaving out the tied sum: 1.5).
using testing::kLossEps;    // 1e-6 relative (parity.h)
using testing::kWeightRel;  // 1e-5 relative

const char* kGpt2 =
    "model: {arch: gpt2, hidden_size: 32, num_layers: 4, num_heads: 4, vocab_size: 256, max_seq_len: 16}\n";
// Grouped-query attention, q/k/v biases and an untied head.
const char* kLlama =
    "model: {arch: llama, hidden_size: 32, num_layers: 4, num_heads: 4, num_kv_heads: 2, ffn_hidden_size: 48,\n"
    "        vocab_size: 256, max_seq_len: 16, qkv_bias: true, tie_word_embeddings: false}\n";

// Multi-query attention: at tp 2 its one key/value head is replicated on both tp ranks.
const char* kLlamaMqa =
    "model: {arch: llama, hidden_size: 32, num_layers: 4, num_heads: 4, num_kv_heads: 1, ffn_hidden_size: 48,\n"
    "        vocab_size: 256, max_seq_len: 16, qkv_bias: true, tie_word_embeddings: false}\n";

ir::Plan PlanFor(const char* model, int world, const std::string& layout, int microbatches = 4,
                 int micro_batch_size = 2) {
  const std::string yaml = std::string("version: 1\nname: pp-parity\n") + model + R"(data:
  train: {path: /usr/share/games/fortunes, format: text, tokenizer: bytes}
  seq_len: 16
  micro_batch_size: )" + std::to_string(micro_batch_size) + R"(
  global_batch_size: auto
  grad_accum_steps: )" + std::to_string(microbatches) + R"(
training:
  steps: 4
  optimizer: {name: sgd, lr: 5.0e-2, momentum: 0.9}
  lr_schedule: {name: constant, warmup_steps: 0}
cluster: {nodes: 1, devices_per_node: )" + std::to_string(world) + R"(, device: cpu, device_memory: 1GiB}
)" + layout;
  return testing::PlanFromYaml(yaml);
}

// The whole weights of the replica whose ranks have mesh coordinates dp_replicate = r,
// dp_shard = d, merged over tp and collected over stages; a tied copy is checked equal to its
// original and left out.
std::map<std::string, torch::Tensor> Replica(const ir::Plan& plan, const std::vector<RankOutcome>& ranks,
                                             int dp_index) {
  const int tp = static_cast<int>(ir::AxisSize(plan, ir::Axis::kTp));
  std::map<std::string, torch::Tensor> out;
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) {
      std::vector<torch::Tensor> slices;
      for (const ir::RankPlacement& r : plan.ranks()) {
        const int dp_coord = r.coords(1) * static_cast<int>(ir::AxisSize(plan, ir::Axis::kDpShard)) + r.coords(2);
        if (r.stage() == unit.stage() && dp_coord == dp_index) slices.push_back(ranks[r.rank()].weights.at(p.name()));
      }
      REQUIRE(static_cast<int>(slices.size()) == tp);
      torch::Tensor whole = TpMerge(slices, TpSplit{p.tp_dim(), std::max(1, p.tp_parts()), std::max(1, p.tp_replicas())});
      if (!p.tied_to().empty()) {
        INFO("tied copy " << p.name() << " of " << p.tied_to());
        CHECK(torch::equal(whole, out.at(p.tied_to())));
        continue;
      }
      out[p.name()] = whole;
    }
  }
  return out;
}

// bitwise: the layout reorders no sum (see the tolerances above).
void CheckParity(const ir::Plan& plan, const RankOutcome& reference, bool bitwise = false) {
  std::vector<RankOutcome> ranks = Train(plan, static_cast<int>(reference.losses.size()));
  for (size_t r = 0; r < ranks.size(); ++r) {
    INFO("rank " << r);
    REQUIRE(ranks[r].losses.size() == reference.losses.size());
    for (size_t s = 0; s < reference.losses.size(); ++s) {
      if (bitwise) {
        CHECK(ranks[r].losses[s] == reference.losses[s]);
      } else {
        CHECK(ranks[r].losses[s] == Approx(reference.losses[s]).epsilon(kLossEps));
      }
    }
  }
  for (int64_t d = 0; d < plan.batch().data_parallel_size(); ++d) {
    INFO("data-parallel replica " << d);
    const double difference = MaxRelativeDifference(Replica(plan, ranks, static_cast<int>(d)), reference.weights);
    if (bitwise) {
      CHECK(difference == 0);
    } else {
      CHECK(difference < kWeightRel);
    }
  }
}

// One rank over the same global batches as `dp` data-parallel ranks of micro batch 2: its micro
// batch holds their rows, and its mean loss is the mean of theirs (equal row counts).
RankOutcome Reference(const char* model, int dp = 1) {
  return Train(PlanFor(model, 1, "parallel: {data_replicate: 1, data_shard: 1}\n", 4, 2 * dp), 4).front();
}

// The two stage models of a 2-stage plan and the whole model, all drawn from seed 1.
struct TwoStages {
  std::shared_ptr<CausalLm> first, last, whole;
};

TwoStages BuildTwoStages(const ir::Plan& plan) {
  auto config = ModelConfigFromPlan(plan.model());
  REQUIRE(config.ok());
  auto first = BuildCausalLm(*config, 1, {}, {}, StageSpanFromPlan(plan, 0));
  auto last = BuildCausalLm(*config, 1, {}, {}, StageSpanFromPlan(plan, 1));
  auto whole = BuildCausalLm(*config, 1);
  REQUIRE((first.ok() && last.ok() && whole.ok()));
  return {*first, *last, *whole};
}

TEST_CASE("a pipeline stage model holds its blocks under their global names") {
  const TwoStages m = BuildTwoStages(PlanFor(kGpt2, 2, "parallel: {pipeline: 2, data_replicate: 1, data_shard: 1}\n"));
  const auto w = m.whole->named_parameters();
  const auto f = m.first->named_parameters();
  const auto l = m.last->named_parameters();
  CHECK(f.contains("transformer.wte.weight"));
  CHECK(f.contains("transformer.h.1.attn.c_attn.weight"));
  CHECK_FALSE(f.contains("transformer.h.2.attn.c_attn.weight"));
  CHECK_FALSE(f.contains("transformer.ln_f.weight"));
  CHECK(l.contains("transformer.h.2.attn.c_attn.weight"));
  CHECK(l.contains("transformer.ln_f.weight"));
  CHECK_FALSE(l.contains("transformer.wte.weight"));
  // The tied head's copy starts as the word embedding; every other weight as in the whole model.
  CHECK(torch::equal(l["lm_head.weight"], w["transformer.wte.weight"]));
  CHECK(torch::equal(l["transformer.h.3.mlp.c_fc.weight"], w["transformer.h.3.mlp.c_fc.weight"]));
  CHECK(f.size() + l.size() == w.size() + 1);
  // Chaining the stages gives the whole model's logits bitwise (the same operators in order).
  torch::manual_seed(3);
  torch::Tensor tokens = torch::randint(0, 256, {2, 16}, torch::kLong);
  torch::NoGradGuard no_grad;
  torch::Tensor hidden = m.first->ForwardStage(tokens);
  CHECK(hidden.sizes() == torch::IntArrayRef({2, 16, 32}));
  CHECK(torch::equal(m.last->ForwardStage(hidden), m.whole->Forward(tokens)));
  CHECK_THROWS_WITH(m.last->Forward(tokens), Catch::Contains("Forward needs the whole model"));
}

TEST_CASE("pipeline parallel training equals one rank: GPipe and 1F1B on 2 and 4 stages") {
  for (const char* model : {kGpt2, kLlama}) {
    const RankOutcome reference = Reference(model);
    for (const char* schedule : {"gpipe", "1f1b"}) {
      for (int pp : {2, 4}) {
        INFO(model << "schedule " << schedule << " pp " << pp);
        CheckParity(PlanFor(model, pp, std::string("parallel: {pipeline: ") + std::to_string(pp) +
                                           ", pipeline_schedule: " + schedule +
                                           ", data_replicate: 1, data_shard: 1}\n"),
                    reference, /*bitwise=*/model == kLlama);
      }
    }
  }
}

// OLMo 2 (tests/testdata/models/olmo2-tiny: norms after the sublayers only, full-width q/k
// norms, untied head) has no tensor-parallel layout; on 2 pipeline stages × ZeRO-1 over 2
// data-parallel ranks (the layout of examples/specs/olmo2-tiny_cpu4_pp2.yaml) it trains like one
// rank, within the data-parallel tolerance above.
TEST_CASE("pipeline 2 x ZeRO-1 data parallel 2 trains an OLMo 2 model like one rank") {
  const char* olmo2 = "model: {config: " ACCEL_SOURCE_ROOT "/tests/testdata/models/olmo2-tiny/config.json}\n";
  const RankOutcome reference = Reference(olmo2, 2);
  REQUIRE(reference.weights.count("model.layers.1.post_feedforward_layernorm.weight") == 1);
  REQUIRE(reference.weights.count("model.layers.1.input_layernorm.weight") == 0);
  REQUIRE(reference.weights.at("model.layers.1.self_attn.q_norm.weight").numel() == 32);
  CheckParity(PlanFor(olmo2, 4, "parallel: {pipeline: 2, data_replicate: 1, data_shard: 2}\nsharding: {stage: 1}\n"),
              reference);
}

TEST_CASE("an interleaved stage holds its chunks, and chaining the virtual stages gives the whole model") {
  const TwoStages m = BuildTwoStages(PlanFor(kLlama, 2, "parallel: {pipeline: 2, pipeline_schedule: interleaved_1f1b, "
                                                       "data_replicate: 1, data_shard: 1}\n"));
  const auto f = m.first->named_parameters();
  const auto l = m.last->named_parameters();
  // Virtual stages 0..3 hold one block each: stage 0 blocks 0 and 2, stage 1 blocks 1 and 3.
  CHECK(f.contains("model.embed_tokens.weight"));
  CHECK(f.contains("model.layers.0.self_attn.q_proj.weight"));
  CHECK(f.contains("model.layers.2.self_attn.q_proj.weight"));
  CHECK_FALSE(f.contains("model.layers.1.self_attn.q_proj.weight"));
  CHECK(l.contains("model.layers.1.self_attn.q_proj.weight"));
  CHECK(l.contains("model.layers.3.self_attn.q_proj.weight"));
  CHECK(l.contains("lm_head.weight"));
  CHECK(f.size() + l.size() == m.whole->named_parameters().size());
  torch::manual_seed(3);
  torch::Tensor tokens = torch::randint(0, 256, {2, 16}, torch::kLong);
  torch::NoGradGuard no_grad;
  torch::Tensor x = m.first->ForwardStage(tokens, 0);
  x = m.last->ForwardStage(x, 0);
  x = m.first->ForwardStage(x, 1);
  CHECK(torch::equal(m.last->ForwardStage(x, 1), m.whole->Forward(tokens)));
  CHECK_THROWS_WITH(m.first->ForwardStage(x, 2), Catch::Contains("model chunk 2 of a stage with 2"));
}

TEST_CASE("interleaved 1F1B on 2 stages x 2 chunks trains like one rank") {
  for (const char* model : {kGpt2, kLlama}) {
    INFO(model);
    CheckParity(PlanFor(model, 2, "parallel: {pipeline: 2, pipeline_schedule: interleaved_1f1b, virtual_stages: 2,\n"
                                  "           data_replicate: 1, data_shard: 1}\n"),
                Reference(model), /*bitwise=*/model == kLlama);
  }
}

TEST_CASE("interleaved 1F1B with data parallel at every sharding stage equals one rank") {
  const RankOutcome reference = Reference(kGpt2, 2);
  for (int stage : {0, 1, 2, 3}) {
    INFO("sharding stage " << stage);
    CheckParity(PlanFor(kGpt2, 4, "parallel: {pipeline: 2, pipeline_schedule: interleaved_1f1b, data_replicate: 1,\n"
                                  "           data_shard: 2}\nsharding: {stage: " + std::to_string(stage) + "}\n"),
                reference);
  }
}

TEST_CASE("every rank executes exactly its stage's op list from the plan") {
  for (const char* schedule : {"gpipe", "1f1b", "interleaved_1f1b"}) {
    INFO(schedule);
    // 4 blocks: interleaving 2 chunks per stage allows 2 stages.
    const int pp = std::string(schedule) == "interleaved_1f1b" ? 2 : 4;
    const ir::Plan plan = PlanFor(kGpt2, pp, std::string("parallel: {pipeline: ") + std::to_string(pp) +
                                                 ", pipeline_schedule: " + schedule +
                                                 ", data_replicate: 1, data_shard: 1}\n", 6);
    std::vector<RankOutcome> ranks = Train(plan, 2);
    for (const RankOutcome& r : ranks) {
      const auto& planned = plan.pipeline().stages(r.stage).ops();
      for (const std::vector<ExecutedOp>& step : r.ops) {
        REQUIRE(step.size() == static_cast<size_t>(planned.size()));
        for (int i = 0; i < planned.size(); ++i) {
          INFO("stage " << r.stage << " op " << i);
          CHECK(step[i].kind == planned[i].kind());
          CHECK(step[i].microbatch == planned[i].microbatch());
          CHECK(step[i].chunk == planned[i].chunk());
        }
      }
    }
  }
}

// Zero-bubble schedules (Qi et al. 2023): the backward split into B (input gradients) and W (the
// projections' weight gradients, deferred by WeightGradStore). Every weight still accumulates its
// microbatches' gradients in microbatch order, so an untied model trains bitwise like one rank;
// with data parallelism the tolerances above apply.
const char* kLlama8 =
    "model: {arch: llama, hidden_size: 32, num_layers: 8, num_heads: 4, num_kv_heads: 2, ffn_hidden_size: 48,\n"
    "        vocab_size: 256, max_seq_len: 16, qkv_bias: true, tie_word_embeddings: false}\n";

std::string ZeroBubbleLayout(const char* schedule, int pp, int dp) {
  return std::string("parallel: {pipeline: ") + std::to_string(pp) + ", pipeline_schedule: " + schedule +
         ", data_replicate: 1, data_shard: " + std::to_string(dp) + "}\nsharding: {stage: 1}\n";
}

TEST_CASE("zero-bubble schedules train like one rank: zb_h1 and zbv on 2 and 4 stages, with dp 2") {
  for (const char* schedule : {"zb_h1", "zbv"}) {
    for (int pp : {2, 4}) {
      // zbv runs 2 chunks per stage: 4 stages need 8 blocks.
      const char* model = std::string(schedule) == "zbv" && pp == 4 ? kLlama8 : kLlama;
      INFO(schedule << " pp " << pp);
      CheckParity(PlanFor(model, pp, ZeroBubbleLayout(schedule, pp, 1)), Reference(model), /*bitwise=*/true);
    }
    INFO(schedule << " pp 2 x dp 2");
    CheckParity(PlanFor(kLlama, 4, ZeroBubbleLayout(schedule, 2, 2)), Reference(kLlama, 2));
  }
}

TEST_CASE("zero-bubble schedules on 4 stages x dp 2 (8 ranks) train like one rank") {
  for (const char* schedule : {"zb_h1", "zbv"}) {
    const char* model = std::string(schedule) == "zbv" ? kLlama8 : kLlama;
    INFO(schedule << " pp 4 x dp 2");
    CheckParity(PlanFor(model, 8, ZeroBubbleLayout(schedule, 4, 2)), Reference(model, 2));
  }
}

TEST_CASE("zero-bubble ranks execute their op lists, B and W included") {
  for (const char* schedule : {"zb_h1", "zbv"}) {
    INFO(schedule);
    const ir::Plan plan = PlanFor(kLlama, 2, ZeroBubbleLayout(schedule, 2, 1), 6);
    std::vector<RankOutcome> ranks = Train(plan, 2);
    for (const RankOutcome& r : ranks) {
      const auto& planned = plan.pipeline().stages(r.stage).ops();
      int weights = 0;
      for (const std::vector<ExecutedOp>& step : r.ops) {
        REQUIRE(step.size() == static_cast<size_t>(planned.size()));
        for (int i = 0; i < planned.size(); ++i) {
          INFO("stage " << r.stage << " op " << i);
          CHECK(step[i].kind == planned[i].kind());
          CHECK(step[i].microbatch == planned[i].microbatch());
          CHECK(step[i].chunk == planned[i].chunk());
          if (step[i].kind == ir::BACKWARD_WEIGHT) ++weights;
        }
      }
      // One W per microbatch and chunk, every step.
      CHECK(weights == 2 * 6 * static_cast<int>(plan.pipeline().virtual_stages() > 1 ? 2 : 1));
    }
  }
}

TEST_CASE("pipeline and data parallel with every sharding stage equal one rank") {
  const RankOutcome reference = Reference(kGpt2, 2);
  for (int stage : {0, 1, 2, 3}) {
    INFO("sharding stage " << stage);
    CheckParity(PlanFor(kGpt2, 4, "parallel: {pipeline: 2, pipeline_schedule: 1f1b, data_replicate: 1, data_shard: 2}\n"
                                  "sharding: {stage: " + std::to_string(stage) + "}\n"),
                reference);
  }
}

TEST_CASE("3D: tensor 2 with sequence parallel x pipeline 2 x data 2 on 8 ranks equals one rank") {
  for (const char* model : {kGpt2, kLlama, kLlamaMqa}) {
    INFO(model);
    CheckParity(PlanFor(model, 8, "parallel: {tensor: 2, sequence_parallel: true, pipeline: 2, pipeline_schedule: 1f1b,\n"
                                  "           data_replicate: 1, data_shard: 2}\nsharding: {stage: 1}\n"),
                Reference(model, 2));
  }
}

TEST_CASE("a pipeline checkpoint resumes to the uninterrupted run's weights bitwise") {
  const ir::Plan plan = PlanFor(kGpt2, 4, "parallel: {pipeline: 2, data_replicate: 1, data_shard: 2}\nsharding: {stage: 2}\n");
  const std::string root = (std::filesystem::temp_directory_path() /
                            ("accel_pp_ckpt_" + std::to_string(::getpid()))).string();
  RemoveDir(root);
  std::vector<RankOutcome> straight = Train(plan, 4, {root, 2, false});
  std::vector<RankOutcome> resumed = Train(plan, 4, {root, 0, true});
  for (size_t r = 0; r < straight.size(); ++r) {
    INFO("rank " << r);
    REQUIRE(resumed[r].losses.size() == 2);
    CHECK(resumed[r].losses[1] == straight[r].losses[3]);
    for (const auto& [name, w] : straight[r].weights) CHECK(torch::equal(resumed[r].weights.at(name), w));
  }
  RemoveDir(root);
}

TEST_CASE("a checkpoint resumes under another pipeline degree with the saved weights bitwise") {
  const std::string root = (std::filesystem::temp_directory_path() /
                            ("accel_pp_reshard_" + std::to_string(::getpid()))).string();
  // GPT-2 at sharding stage 1 (sharded checkpoints on one rank too): one stage saves, two and
  // four stages resume (the last stage's tied copy reads the embedding), and back.
  const std::string sharded = "sharding: {stage: 1}\n";
  const ir::Plan one = PlanFor(kGpt2, 1, "parallel: {data_replicate: 1, data_shard: 1}\n" + sharded);
  const ir::Plan two = PlanFor(kGpt2, 2, "parallel: {pipeline: 2, data_replicate: 1, data_shard: 1}\n" + sharded);
  const ir::Plan four = PlanFor(kGpt2, 4, "parallel: {pipeline: 4, data_replicate: 1, data_shard: 1}\n" + sharded);
  const ir::Plan interleaved = PlanFor(
      kGpt2, 2, "parallel: {pipeline: 2, pipeline_schedule: interleaved_1f1b, data_replicate: 1, data_shard: 1}\n" + sharded);
  for (const auto& [saver, loader] : {std::pair{&one, &two}, std::pair{&one, &four}, std::pair{&two, &one},
                                      std::pair{&four, &two}, std::pair{&interleaved, &four},
                                      std::pair{&two, &interleaved}}) {
    INFO("saved with " << saver->pipeline().stages_size() << " stages, resumed with "
                       << loader->pipeline().stages_size());
    RemoveDir(root);
    // Train 2 steps and save; resuming with 2 steps to go trains no more: its weights are the
    // loaded ones.
    const std::map<std::string, torch::Tensor> saved = Replica(*saver, Train(*saver, 2, {root, 2, false}), 0);
    const std::map<std::string, torch::Tensor> loaded = Replica(*loader, Train(*loader, 2, {root, 0, true}), 0);
    CHECK(MaxRelativeDifference(loaded, saved) == 0);
  }
  RemoveDir(root);
}

}  // namespace
}  // namespace accel::exec
