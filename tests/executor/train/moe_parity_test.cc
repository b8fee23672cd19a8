// Mixture of experts trained on several ranks against one rank from identical weights: expert
// parallelism 2 and 4 under every ZeRO stage, with tensor (and sequence) parallelism, recompute
// and pipeline stages. The plans come from the real planner and the ranks are set up as the
// worker does (parity.h).
//
// Tolerances: the layouts change only the order of fp32 sums (the data-parallel and tp
// reductions, the experts' rows arriving in another order changes nothing: each expert's matmul
// is row-independent), so losses and weights agree to kLossEps / kWeightRel as the dense parity
// suites (measured: weights within 7.5e-7 relative, the pipeline bitwise). The routing is
// discrete: per-expert token counts must be equal exactly, which also shows that no top-k
// choice flipped under the reordered sums.
#include <torch/torch.h>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/export.h"
#include "checkpoint/pretrained.h"
#include "parity.h"
#include "tests/common/files.h"
#include "executor/models/tensor_parallel.h"
#include "ir/plan_access.h"

namespace accel::exec {
namespace {

using accel::testing::RemoveDir;
using testing::kLossEps;
using testing::kWeightRel;
using testing::MergedOverTp;
using testing::RankOutcome;
using testing::TinyPlan;

// Two blocks, the first dense (first_dense_layers), the second an MoE block of 4 experts (top-2)
// with a gated shared expert and the load-balancing loss at a visible weight.
constexpr const char* kTinyMoe =
    "model: {arch: llama, hidden_size: 32, num_layers: 2, num_heads: 4, num_kv_heads: 2, ffn_hidden_size: 48,\n"
    "        vocab_size: 256, max_seq_len: 16, tie_word_embeddings: false,\n"
    "        moe: {num_experts: 4, experts_per_token: 2, expert_ffn_size: 16, num_shared_experts: 1,\n"
    "              shared_expert_ffn_size: 16, shared_expert_gate: true, router_aux_loss_coef: 0.1,\n"
    "              first_dense_layers: 1}}\n";

constexpr int kSteps = 4;

ir::Plan MoePlan(int world, const std::string& layout, std::vector<std::string> overrides = {}) {
  overrides.push_back("data.global_batch_size=8");
  return TinyPlan(kTinyMoe, world, layout, overrides);
}

bool IsRouted(const ir::Plan& plan, const std::string& name) {
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) {
      if (p.name() == name) return p.routed_expert();
    }
  }
  return false;
}

// The whole model of the first replica: tp slices merged (MergedOverTp), then the routed experts
// of the ep ranks concatenated in expert order. The ranks of the first ep group are dp_shard
// ranks 0 … ep − 1, each the first of its tp group (ranks j·tp … j·tp + tp − 1). With pipeline
// stages (the only layout here without tp and ep) the stages' weights together.
std::map<std::string, torch::Tensor> WholeWeights(const ir::Plan& plan, const std::vector<RankOutcome>& ranks) {
  if (plan.pipeline().stages_size() > 1) {  // one rank per stage, each with its own blocks
    std::map<std::string, torch::Tensor> whole;
    for (const RankOutcome& r : ranks) whole.insert(r.weights.begin(), r.weights.end());
    return whole;
  }
  const int tp = static_cast<int>(ir::AxisSize(plan, ir::Axis::kTp));
  const int ep = std::max<int>(1, static_cast<int>(plan.model().moe().expert_parallel()));
  std::vector<std::map<std::string, torch::Tensor>> merged;
  for (int j = 0; j < ep; ++j) {
    merged.push_back(MergedOverTp(plan, ranks, j * tp, tp));
    CHECK(ranks[j * tp].local_experts.first == j * plan.model().moe().num_experts() / ep);
  }
  std::map<std::string, torch::Tensor> whole = merged.front();
  for (auto& [name, w] : whole) {
    if (!IsRouted(plan, name)) continue;
    std::vector<torch::Tensor> parts;
    for (const auto& m : merged) parts.push_back(m.at(name));
    w = torch::cat(parts, 0);
  }
  return whole;
}

struct Reference {
  ir::Plan plan;
  std::vector<RankOutcome> ranks;
};

const Reference& OneRank() {
  static const Reference* reference = [] {
    auto* r = new Reference{MoePlan(1, "")};
    r->ranks = testing::Train(r->plan, kSteps);
    return r;
  }();
  return *reference;
}

// Trains `plan` and checks it against one rank: losses, routing and whole weights.
void CheckAgainstOneRank(const ir::Plan& plan) {
  const Reference& one = OneRank();
  const std::vector<RankOutcome> ranks = testing::Train(plan, kSteps);
  const RankOutcome& last_stage = ranks.back();
  REQUIRE(last_stage.losses.size() == one.ranks[0].losses.size());
  for (size_t s = 0; s < last_stage.losses.size(); ++s) {
    INFO("step " << s);
    CHECK(last_stage.losses[s] == Approx(one.ranks[0].losses[s]).epsilon(kLossEps));
    for (const RankOutcome& r : ranks) {
      CHECK(r.expert_counts[s] == one.ranks[0].expert_counts[s]);
      REQUIRE(r.aux_losses.size() == one.ranks[0].aux_losses.size());
      CHECK(r.aux_losses[s] == Approx(one.ranks[0].aux_losses[s]).epsilon(kLossEps));
    }
  }
  const double diff = testing::MaxRelativeDifference(WholeWeights(plan, ranks), one.ranks[0].weights);
  INFO("max relative weight difference " << diff);
  CHECK(diff < kWeightRel);
}

TEST_CASE("MoE one-rank reference: counts sum to tokens x top-k, the balancing loss at least k") {
  const Reference& one = OneRank();
  const RankOutcome& r = one.ranks[0];
  REQUIRE(r.expert_counts.size() == static_cast<size_t>(kSteps));
  for (const auto& counts : r.expert_counts) {
    int64_t sum = 0;
    for (int64_t c : counts) sum += c;
    CHECK(sum == 8 * 16 * 2);  // global batch 8 x 16 tokens x top-2, one MoE block
  }
  // The load-balancing loss is k (2) for an even split and larger otherwise.
  REQUIRE(r.aux_losses.size() == static_cast<size_t>(kSteps));
  for (double aux : r.aux_losses) CHECK(aux >= 2.0 - 1e-6);
}

TEST_CASE("expert parallel 2 and 4 on 4 ranks equal one rank (ZeRO-0)") {
  CheckAgainstOneRank(MoePlan(4, "parallel: {data_shard: 4, expert: 2}\nsharding: {stage: 0}\n"));
  CheckAgainstOneRank(MoePlan(4, "parallel: {data_shard: 4, expert: 4}\nsharding: {stage: 0}\n"));
}

TEST_CASE("expert parallel 2 under ZeRO-1, -2 and -3 (experts sharded over ep_dp) equals one rank") {
  for (int stage : {1, 2, 3}) {
    INFO("stage " << stage);
    CheckAgainstOneRank(
        MoePlan(4, "parallel: {data_shard: 4, expert: 2}\nsharding: {stage: " + std::to_string(stage) + "}\n"));
  }
}

TEST_CASE("expert parallel 2 x tensor parallel 2, with and without sequence parallelism, equals one rank") {
  CheckAgainstOneRank(MoePlan(4, "parallel: {data_shard: 2, tensor: 2, expert: 2}\nsharding: {stage: 0}\n",
                              {"parallel.sequence_parallel=false"}));
  CheckAgainstOneRank(MoePlan(4, "parallel: {data_shard: 2, tensor: 2, expert: 2}\nsharding: {stage: 3}\n",
                              {"parallel.sequence_parallel=true"}));
}

TEST_CASE("expert parallel 2 with hybrid sharding and with full and per-op recompute equals one rank") {
  CheckAgainstOneRank(MoePlan(4, "parallel: {data_replicate: 2, data_shard: 2, expert: 2}\nsharding: {stage: 2}\n"));
  CheckAgainstOneRank(MoePlan(2, "parallel: {data_shard: 2, expert: 2}\nsharding: {stage: 3}\n",
                              {"training.recompute=full"}));
  CheckAgainstOneRank(MoePlan(2, "parallel: {data_shard: 2, expert: 2}\nsharding: {stage: 2}\n",
                              {"training.recompute=op"}));
}

TEST_CASE("MoE blocks on two pipeline stages equal one rank") {
  CheckAgainstOneRank(MoePlan(2, "parallel: {pipeline: 2}\n"));
}

// Token dropping is per rank and micro-batch (each expert takes ceil(capacity_factor · T·k / E)
// of a rank's slots), and one rank's micro-batches are the ranks' micro-batches here, so the
// layouts still agree; the drops change the training (the losses differ from dropless ones).
TEST_CASE("token dropping (capacity factor 1) under expert parallel 2 and ZeRO-3 equals one rank") {
  const std::vector<std::string> capped = {"model.moe.capacity_factor=1.0"};
  const ir::Plan one_plan = MoePlan(1, "", capped);
  const std::vector<RankOutcome> one = testing::Train(one_plan, kSteps);
  const ir::Plan ep2 = MoePlan(4, "parallel: {data_shard: 4, expert: 2}\nsharding: {stage: 3}\n", capped);
  const std::vector<RankOutcome> ranks = testing::Train(ep2, kSteps);
  for (size_t s = 0; s < one[0].losses.size(); ++s) {
    CHECK(ranks.back().losses[s] == Approx(one[0].losses[s]).epsilon(kLossEps));
    CHECK(ranks.back().expert_counts[s] == one[0].expert_counts[s]);
  }
  CHECK(testing::MaxRelativeDifference(WholeWeights(ep2, ranks), one[0].weights) < kWeightRel);
  CHECK(one[0].losses.back() != Approx(OneRank().ranks[0].losses.back()).epsilon(1e-6));
}

// A checkpoint stores every routed expert at its place in the whole [E, …] tensor, so any
// expert-parallel degree (and tp degree, and stage) resumes it.
TEST_CASE("an expert-parallel checkpoint resumes bitwise, and under other expert and tp degrees") {
  const std::string root = std::filesystem::temp_directory_path() / ("accel_moe_resume_" + std::to_string(::getpid()));
  RemoveDir(root);
  const ir::Plan ep2 = MoePlan(4, "parallel: {data_shard: 4, expert: 2}\nsharding: {stage: 2}\n");
  const std::vector<RankOutcome> straight = testing::Train(ep2, kSteps);
  const auto saved = WholeWeights(ep2, testing::Train(ep2, 2, {root, 2, false}));
  const std::vector<RankOutcome> resumed = testing::Train(ep2, kSteps, {root, 0, true});
  for (size_t r = 0; r < straight.size(); ++r) {
    REQUIRE(resumed[r].losses.size() == 2);
    CHECK(resumed[r].losses[0] == straight[r].losses[2]);
    for (const auto& [name, w] : straight[r].weights) CHECK(torch::equal(resumed[r].weights.at(name), w));
  }
  // Loaded with 2 steps to go and nothing more trained: the saved weights exactly.
  for (const ir::Plan& loader :
       {MoePlan(4, "parallel: {data_shard: 4, expert: 4}\nsharding: {stage: 3}\n"),
        MoePlan(4, "parallel: {data_shard: 2, tensor: 2, expert: 2}\nsharding: {stage: 1}\n"),
        MoePlan(2, "parallel: {data_shard: 2}\nsharding: {stage: 1}\n")}) {
    INFO("resumed with ep " << loader.model().moe().expert_parallel() << ", tp " << ir::AxisSize(loader, ir::Axis::kTp));
    CHECK(testing::MaxRelativeDifference(WholeWeights(loader, testing::Train(loader, 2, {root, 0, true})), saved) == 0);
  }
  // The optimizer state moves too: 2 steps at ep 2 then 2 at ep 4 match one rank.
  const ir::Plan ep4 = MoePlan(4, "parallel: {data_shard: 4, expert: 4}\nsharding: {stage: 3}\n");
  CHECK(testing::MaxRelativeDifference(WholeWeights(ep4, testing::Train(ep4, kSteps, {root, 0, true})),
                                       OneRank().ranks[0].weights) < kWeightRel);
  RemoveDir(root);
}

// Hugging Face stores one tensor per expert: `accel export` splits the grouped tensors under the
// names of the config's model_type, and model.init_from reads them back under any layout.
TEST_CASE("an MoE checkpoint exports per-expert Hugging Face tensors, which init_from reads under other layouts") {
  const std::string root = std::filesystem::temp_directory_path() / ("accel_moe_export_" + std::to_string(::getpid()));
  RemoveDir(root);
  // Shared expert and a dense block: Qwen2-MoE names. Neither: Mixtral's.
  const std::string mixtral_model =
      "model: {arch: llama, hidden_size: 32, num_layers: 2, num_heads: 4, num_kv_heads: 2, ffn_hidden_size: 48,\n"
      "        vocab_size: 256, max_seq_len: 16, tie_word_embeddings: false,\n"
      "        moe: {num_experts: 4, experts_per_token: 2, expert_ffn_size: 16}}\n";
  struct Flavour {
    ir::Plan saver, loader;
    std::string model_type, expert_name, router_name;
  };
  const std::string ep2 = "parallel: {data_shard: 2, expert: 2}\nsharding: {stage: 2}\n";
  const std::string ep4_tp = "parallel: {data_shard: 2, tensor: 2}\nsharding: {stage: 3}\n";
  const std::vector<Flavour> flavours = {
      {MoePlan(2, ep2), MoePlan(4, ep4_tp), "qwen2_moe", "model.layers.1.mlp.experts.3.down_proj.weight",
       "model.layers.1.mlp.gate.weight"},
      {TinyPlan(mixtral_model.c_str(), 2, ep2, {"data.global_batch_size=8"}),
       TinyPlan(mixtral_model.c_str(), 4, ep4_tp, {"data.global_batch_size=8"}), "mixtral",
       "model.layers.0.block_sparse_moe.experts.3.w2.weight", "model.layers.0.block_sparse_moe.gate.weight"}};
  for (const Flavour& f : flavours) {
    INFO(f.model_type);
    RemoveDir(root);
    const auto saved = WholeWeights(f.saver, testing::Train(f.saver, 2, {root + "/ckpt", 2, false}));
    auto latest = CheckpointStore(root + "/ckpt", 2).LatestGood();
    REQUIRE(latest.ok());
    const absl::Status exported = ExportCheckpoint(latest->path, root + "/hf");
    INFO(exported.message());
    REQUIRE(exported.ok());
    std::ifstream config_file(root + "/hf/config.json");
    const std::string config((std::istreambuf_iterator<char>(config_file)), std::istreambuf_iterator<char>());
    CHECK(config.find("\"model_type\": \"" + f.model_type + "\"") != std::string::npos);
    auto index = OpenPretrained(root + "/hf");
    REQUIRE(index.ok());
    CHECK(index->count(f.expert_name) == 1);
    CHECK(index->at(f.expert_name).shape == std::vector<int64_t>{32, 16});  // down_proj [h, fe]
    CHECK(index->count(f.router_name) == 1);
    for (const auto& [name, t] : *index) CHECK(name.find("experts.gate_proj") == std::string::npos);
    CHECK(CheckPretrainedAgainstPlan(f.loader, *index).empty());
    // Read back at 4 ranks (ep 1, tp 2, ZeRO-3): nothing trained, the saved weights exactly.
    const auto loaded = WholeWeights(f.loader, testing::Train(f.loader, 0, {}, root + "/hf"));
    CHECK(testing::MaxRelativeDifference(loaded, saved) == 0);
  }
  // Mixtral-named experts do not start a Qwen-named model: refused before launch, tensor by tensor.
  auto index = OpenPretrained(root + "/hf");
  REQUIRE(index.ok());
  const std::vector<std::string> problems = CheckPretrainedAgainstPlan(MoePlan(2, ep2), *index);
  CHECK(std::find(problems.begin(), problems.end(),
                  "the checkpoint has no tensor model.layers.1.mlp.experts.0.gate_proj.weight") != problems.end());
  RemoveDir(root);
}

}  // namespace
}  // namespace accel::exec
