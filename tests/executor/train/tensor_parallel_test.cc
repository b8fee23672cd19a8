// Tensor parallelism (Megatron-LM) and sequence parallelism against one rank: the collectives'
// autograd, the vocabulary-parallel loss, model forward/backward and whole training runs from
// identical initial weights, with plans from the real planner; and tp-major checkpoints.
#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
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
#include "checkpoint/sharded_tensors.h"
#include "common/remove_tree.h"
#include "executor/comm_trace.h"
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
using testing::kTinyGpt2;
using testing::kTinyLlama;
using testing::MergedOverTp;
using testing::TinyPlan;
using testing::CheckpointPlan;
using testing::MaxRelativeDifference;
using testing::RankOutcome;
using testing::Train;
using testing::Ok;
using testing::RunRanks;

// Tolerances. Tensor parallelism changes only the order of fp32 sums: the row-parallel matmuls
// are two half-sums added by an all-reduce, and the vocabulary-parallel loss sums exp over two
// halves. Each such reordering costs a few ulps (~1e-7 relative); through a few layers and
// updates with SGD (linear in the gradient, so no amplification) that stays below 1e-5 (measured:
// losses within 9e-8 relative, weights within 1.8e-6), while a missing or doubled all-reduce
// changes gradients by O(1) relative and a wrong slice by O(1) absolute (dropping the backward
// all-reduce of EnterTensorParallel fails every parity case here).
using testing::kLossEps;    // 1e-6 relative (parity.h)
using testing::kWeightRel;  // 1e-5 relative

void CheckParity(const ir::Plan& plan, const std::vector<RankOutcome>& ranks, const RankOutcome& reference) {
  const int tp = static_cast<int>(ir::AxisSize(plan, ir::Axis::kTp));
  for (size_t r = 0; r < ranks.size(); ++r) {
    INFO("rank " << r);
    REQUIRE(ranks[r].losses.size() == reference.losses.size());
    for (size_t s = 0; s < reference.losses.size(); ++s) {
      CHECK(ranks[r].losses[s] == Approx(reference.losses[s]).epsilon(kLossEps));
    }
  }
  for (int first = 0; first < static_cast<int>(ranks.size()); first += tp) {
    INFO("replica of ranks " << first << ".." << first + tp - 1);
    CHECK(MaxRelativeDifference(MergedOverTp(plan, ranks, first, tp), reference.weights) < kWeightRel);
  }
}

void CheckParity(const ir::Plan& plan, const RankOutcome& reference, int steps) {
  CheckParity(plan, Train(plan, steps), reference);
}

TEST_CASE("TpSlice and TpMerge: q, k and v blocks split separately, merged back exactly") {
  torch::Tensor full = torch::arange(2 * 12, torch::kFloat).view({2, 12});  // [in 2, out q|k|v]
  const TpSplit fused{1, 3};
  torch::Tensor r0 = TpSlice(full, fused, 0, 2);
  torch::Tensor r1 = TpSlice(full, fused, 1, 2);
  // Rank 0 holds the first half of q, of k and of v: columns 0-1, 4-5, 8-9.
  CHECK(torch::equal(r0[0], torch::tensor({0.f, 1.f, 4.f, 5.f, 8.f, 9.f})));
  CHECK(torch::equal(r1[1], torch::tensor({14.f, 15.f, 18.f, 19.f, 22.f, 23.f})));
  CHECK(torch::equal(TpMerge({r0, r1}, fused), full));
  CHECK(torch::equal(TpMerge({TpSlice(full, {0, 1}, 0, 2), TpSlice(full, {0, 1}, 1, 2)}, {0, 1}), full));
  CHECK(TpSlice(full, {}, 1, 2).is_same(full));
}

TEST_CASE("vocabulary-parallel cross-entropy equals cross-entropy over the full logits, with gradients") {
  torch::manual_seed(3);
  torch::Tensor logits = torch::randn({6, 10}) * 3;
  torch::Tensor targets = torch::tensor({0, 4, 5, 9, 2, 7}, torch::kLong);
  torch::Tensor full = logits.clone().requires_grad_(true);
  torch::Tensor expected = torch::nn::functional::cross_entropy(full, targets);
  expected.backward();
  std::vector<torch::Tensor> grads(2);
  std::vector<double> losses(2);
  std::vector<std::string> errors = RunRanks(2, [&](int rank, Rendezvous& rdzv) {
    auto comm = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(comm.status());
    TensorParallel tp{*comm, false};
    torch::Tensor local = logits.narrow(1, rank * 5, 5).clone().requires_grad_(true);
    torch::Tensor loss = VocabParallelCrossEntropy(local, targets, tp).mean();
    loss.backward();
    losses[rank] = loss.item<double>();
    grads[rank] = local.grad();
  });
  for (const std::string& e : errors) REQUIRE(e == "");
  CHECK(losses[0] == Approx(expected.item<double>()).epsilon(1e-6));
  CHECK(losses[1] == losses[0]);
  CHECK(torch::allclose(torch::cat(grads, 1), full.grad(), 1e-6, 1e-7));
}

TEST_CASE("a tensor-parallel model's forward and gradients equal the single-rank model's") {
  for (const char* model : {kTinyGpt2, kTinyLlama}) {
    for (bool sp : {false, true}) {
      INFO(model << "sequence parallel " << sp);
      const ir::Plan plan = TinyPlan(model, 1, "parallel: {data_replicate: 1, data_shard: 1}\n");
      auto config = ModelConfigFromPlan(plan.model());
      REQUIRE(config.ok());
      auto single = BuildCausalLm(*config, 99);
      REQUIRE(single.ok());
      torch::manual_seed(5);
      torch::Tensor batch = torch::randint(0, 256, {2, 17}, torch::kLong);
      torch::Tensor loss = CausalLmLoss()(**single, batch);
      loss.backward();
      torch::Tensor logits = (*single)->Forward(batch.narrow(1, 0, 16)).detach();
      std::vector<std::map<std::string, torch::Tensor>> grads(2);
      std::vector<torch::Tensor> gathered(2);
      std::vector<double> losses(2);
      std::vector<std::string> errors = RunRanks(2, [&](int rank, Rendezvous& rdzv) {
        auto comm = rdzv.CreateWorld(CommBackend::kGloo);
        Ok(comm.status());
        auto m = BuildCausalLm(*config, 99, TensorParallel{*comm, sp});
        Ok(m.status());
        torch::Tensor l = CausalLmLoss()(**m, batch);
        l.backward();
        losses[rank] = l.item<double>();
        for (const auto& item : (*m)->named_parameters()) grads[rank][item.key()] = item.value().grad();
        torch::NoGradGuard no_grad;
        gathered[rank] = GatherVocabParallel((*m)->Forward(batch.narrow(1, 0, 16)), (*m)->tensor_parallel());
      });
      for (const std::string& e : errors) REQUIRE(e == "");
      CHECK(losses[0] == Approx(loss.item<double>()).epsilon(kLossEps));
      CHECK(losses[1] == losses[0]);
      CHECK(torch::allclose(gathered[0], logits, 1e-5, 1e-6));
      CHECK(torch::equal(gathered[0], gathered[1]));
      for (const auto& item : (*single)->named_parameters()) {
        INFO(item.key());
        const TpSplit split = (*single)->TensorParallelSplit(item.key());
        const torch::Tensor& g0 = grads[0].at(item.key());
        const torch::Tensor& g1 = grads[1].at(item.key());
        torch::Tensor merged = TpMerge({g0, g1}, split);
        if (split.dim < 0 && !sp) CHECK(torch::allclose(g0, g1, 1e-6, 1e-9));
        // With sequence parallelism a replicated parameter's gradient is each rank's part, from
        // its own sequence shard (the trainer sums them, replicated_grads.h): the parts differ,
        // and their sum is the single rank's gradient.
        if (split.dim < 0 && sp) {
          CHECK_FALSE(torch::allclose(g0, g1, 1e-3, 1e-6));
          merged = g0 + g1;
        }
        CHECK(torch::allclose(merged, item.value().grad(), 1e-4, 1e-7));
      }
    }
  }
}

TEST_CASE("tensor parallel 2 trains like one rank: gpt2 and llama (GQA), with sequence parallel") {
  for (const char* model : {kTinyGpt2, kTinyLlama}) {
    INFO(model);
    const RankOutcome reference = Train(TinyPlan(model, 1, "parallel: {data_replicate: 1}\n"), 3)[0];
    CheckParity(TinyPlan(model, 2, "parallel: {data_replicate: 1, tensor: 2}\n"), reference, 3);
    CheckParity(TinyPlan(model, 2, "parallel: {data_replicate: 1, tensor: 2, sequence_parallel: true}\n"),
                reference, 3);
  }
}

// Qwen3's attention: per-head q/k norms (weights whole on every tp rank, gradients summed over
// tp: ir::Parameter.tp_partial_grad) and heads wider than hidden / heads. Same tolerance as
// above; a missing sum over tp leaves each norm with its rank's heads' part of the gradient.
TEST_CASE("tensor parallel trains a Qwen3 block (q/k norms, head_dim 16 on h 32 x 4 heads) like one rank") {
  const std::vector<std::string> qwen3 = {"model.qk_norm=true", "model.head_dim=16", "model.vocab_size=512"};
  const RankOutcome reference = Train(TinyPlan(kTinyLlama, 1, "parallel: {data_replicate: 1}\n", qwen3), 3)[0];
  CheckParity(TinyPlan(kTinyLlama, 2, "parallel: {data_replicate: 1, tensor: 2}\n", qwen3), reference, 3);
  CheckParity(TinyPlan(kTinyLlama, 2, "parallel: {data_replicate: 1, tensor: 2, sequence_parallel: true}\n", qwen3),
              reference, 3);
  // tp 4 over 2 key/value heads: each k_norm sees the query heads of its rank only.
  const ir::Plan tp4 = TinyPlan(kTinyLlama, 4, "parallel: {data_replicate: 1, tensor: 4}\n", qwen3);
  REQUIRE(tp4.model().kv_head_replicas() == 2);
  CheckParity(tp4, reference, 3);
}

// Phi-3's fused projections (ir::Model.model_type phi3): qkv_proj split over tp as 3 equal blocks,
// gate_up_proj as 2. A wrong block split mixes q, k and v rows across ranks: O(1) differences.
TEST_CASE("tensor parallel 2 trains a Phi-3 block (fused qkv_proj, gate_up_proj) like one rank") {
  // tests/testdata/models/phi3-tiny: the tiny Llama's dimensions (h 32, 4 heads, ffn 48) as phi3.
  const std::string model = "model: {config: " ACCEL_SOURCE_ROOT "/tests/testdata/models/phi3-tiny/config.json}\n";
  auto plan = [&](int tp, const std::string& layout) { return TinyPlan(model.c_str(), tp, layout); };
  const RankOutcome reference = Train(plan(1, "parallel: {data_replicate: 1}\n"), 3)[0];
  REQUIRE(reference.weights.count("model.layers.0.self_attn.qkv_proj.weight") == 1);
  CheckParity(plan(2, "parallel: {data_replicate: 1, tensor: 2}\n"), reference, 3);
  CheckParity(plan(2, "parallel: {data_replicate: 1, tensor: 2, sequence_parallel: true}\n"), reference, 3);
}

// Gemma 2 (tests/testdata/models/gemma2-tiny: h 32, 4 heads of 16, 2 kv heads, ffn 48): four
// x̂·(1 + w) norms (whole on every rank, summed over tp with sequence parallelism), √h embeddings
// over the vocabulary-parallel embedding, GeGLU over the split MLP, scores scaled, capped at 0.5
// and windowed (8 of 16 tokens) per rank's heads, and the final cap inside the vocabulary-parallel
// loss. Same tolerance as above: elementwise caps and masks commute with the head and vocabulary
// splits; a cap applied to a partial sum or a wrong window gives O(1) differences.
TEST_CASE("tensor parallel 2 trains a Gemma 2 block (post-norms, GeGLU, soft caps, sliding window) like one rank") {
  const std::string model = "model: {config: " ACCEL_SOURCE_ROOT "/tests/testdata/models/gemma2-tiny/config.json}\n";
  auto plan = [&](int tp, const std::string& layout) { return TinyPlan(model.c_str(), tp, layout); };
  const RankOutcome reference = Train(plan(1, "parallel: {data_replicate: 1}\n"), 3)[0];
  REQUIRE(reference.weights.count("model.layers.0.pre_feedforward_layernorm.weight") == 1);
  CheckParity(plan(2, "parallel: {data_replicate: 1, tensor: 2}\n"), reference, 3);
  CheckParity(plan(2, "parallel: {data_replicate: 1, tensor: 2, sequence_parallel: true}\n"), reference, 3);
}

// OLMo 2 (tests/testdata/models/olmo2-tiny: h 32, 4 heads, 2 kv heads): q/k norms over the whole
// projection, each rank holding its heads' slice of the weights and taking the statistics of the
// whole width (RmsNormOverGroup); at tp 4 each key/value head is held by 2 ranks, counted twice in
// the sums and the divisor. Same tolerance as above: the sums over tp reorder fp32 additions; a
// rank normalizing by its own slice alone changes q and k by O(1).
TEST_CASE("tensor parallel trains an OLMo 2 block (full-width q/k norms, post-norms) like one rank") {
  const std::string model = "model: {config: " ACCEL_SOURCE_ROOT "/tests/testdata/models/olmo2-tiny/config.json}\n";
  const std::vector<std::string> vocab512 = {"model.vocab_size=512"};  // tp 4 pads to 512 rows
  auto plan = [&](int tp, const std::string& layout) { return TinyPlan(model.c_str(), tp, layout, vocab512); };
  const RankOutcome reference = Train(plan(1, "parallel: {data_replicate: 1}\n"), 3)[0];
  REQUIRE(reference.weights.at("model.layers.0.self_attn.q_norm.weight").numel() == 32);
  CheckParity(plan(2, "parallel: {data_replicate: 1, tensor: 2}\n"), reference, 3);
  CheckParity(plan(2, "parallel: {data_replicate: 1, tensor: 2, sequence_parallel: true}\n"), reference, 3);
  const ir::Plan tp4 = plan(4, "parallel: {data_replicate: 1, tensor: 4}\n");
  REQUIRE(tp4.model().kv_head_replicas() == 2);
  CheckParity(tp4, reference, 3);
}

// Grouped-query attention with more tensor ranks than key/value heads (ir::Model
// .kv_head_replicas): each rank holds the one head its query heads use, and the copies'
// gradients are summed over the tp_kv group. Same tolerance as above: only the order of fp32
// sums changes, while a missing sum over tp_kv halves a head's gradient (O(1) relative).
TEST_CASE("grouped-query attention with more tensor ranks than key/value heads trains like one rank") {
  const std::vector<std::string> vocab512 = {"model.vocab_size=512"};  // tp 4 pads to 512 rows
  const std::vector<std::string> mqa = {"model.vocab_size=512", "model.num_kv_heads=1"};
  for (const auto& overrides : {vocab512, mqa}) {
    const RankOutcome reference = Train(TinyPlan(kTinyLlama, 1, "parallel: {data_replicate: 1}\n", overrides), 3)[0];
    for (int tp : {2, 4}) {
      const ir::Plan plan =
          TinyPlan(kTinyLlama, tp, "parallel: {data_replicate: 1, tensor: " + std::to_string(tp) + "}\n", overrides);
      const int64_t kv = plan.model().num_kv_heads();
      INFO("tp " << tp << ", kv heads " << kv);
      if (tp <= kv) continue;
      REQUIRE(plan.model().kv_head_replicas() == tp / kv);
      CheckParity(plan, reference, 3);
      // The copies of a head take the same summed gradient: they stay bitwise equal.
      const std::vector<RankOutcome> ranks = Train(plan, 2);
      for (int r = 0; r < tp; ++r) {
        for (const char* name : {"model.layers.1.self_attn.k_proj.weight", "model.layers.1.self_attn.v_proj.bias"}) {
          const int first = r / static_cast<int>(tp / kv) * static_cast<int>(tp / kv);
          CHECK(torch::equal(ranks[r].weights.at(name), ranks[first].weights.at(name)));
        }
      }
    }
  }
  const RankOutcome reference = Train(TinyPlan(kTinyLlama, 1, "parallel: {data_replicate: 1}\n", vocab512), 3)[0];
  CheckParity(TinyPlan(kTinyLlama, 4, "parallel: {data_replicate: 1, tensor: 4, sequence_parallel: true}\n", vocab512),
              reference, 3);
  const RankOutcome batch4 =
      Train(TinyPlan(kTinyLlama, 1, "parallel: {data_replicate: 1}\n", {"model.vocab_size=512", "data.micro_batch_size=4"}),
            3)[0];
  CheckParity(TinyPlan(kTinyLlama, 8,
                       "parallel: {data_replicate: 1, data_shard: 2, tensor: 4}\nsharding: {stage: 3, bucket_size: 3000}\n",
                       vocab512),
              batch4, 3);
}

TEST_CASE("a replicated key/value head without its tp_kv group is refused") {
  const ir::Plan plan = TinyPlan(kTinyLlama, 2, "parallel: {data_replicate: 1, tensor: 2}\n", {"model.num_kv_heads=1"});
  REQUIRE(plan.model().kv_head_replicas() == 2);
  std::vector<std::string> messages(2);
  std::vector<std::string> errors = RunRanks(2, [&](int rank, Rendezvous& rdzv) {
    auto comm = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(comm.status());
    auto model = BuildCausalLm(*ModelConfigFromPlan(plan.model()), 1, TensorParallel{*comm, false});
    Ok(model.status());
    std::vector<std::pair<std::string, int64_t>> names;
    for (const auto& item : (*model)->named_parameters()) names.emplace_back(item.key(), item.value().numel());
    auto layout = ShardLayout::FromPlan(plan.sharding(), 0, names, 0);
    Ok(layout.status());
    DataParallelGroups dpg;
    dpg.tp = *comm;
    auto trainer = Trainer::Create(*model, CausalLmLoss(), TrainerOptions{}, *std::move(layout), dpg);
    messages[rank] = std::string(trainer.status().message());
  });
  for (const std::string& e : errors) REQUIRE(e == "");
  CHECK(messages[0] ==
        "parameter model.layers.0.self_attn.k_proj.weight is replicated on 2 tensor-parallel ranks, but the tp_kv "
        "group has 0");
}

// Elements of the gradients the trainer sums over one group (replicated_grads.h): the
// optimizer's tensors of the parameters `selected` picks, whole at stage 0, owned ranges above.
int64_t ReplicatedElements(const ShardLayout& layout, bool (*selected)(const ParamSlot&)) {
  int64_t n = 0;
  for (const ParamSlot& slot : layout.params) {
    if (selected(slot)) n += layout.stage == 0 ? slot.numel : slot.owned_numel();
  }
  return n;
}

int64_t AllReducesOf(const std::vector<CollectiveRecord>& trace, int64_t elements) {
  return std::count_if(trace.begin(), trace.end(), [&](const CollectiveRecord& r) {
    return r.kind == "all_reduce" && r.group_size == 2 && r.elements == elements;
  });
}

// Sequence parallelism's replicated parameters and a key/value head held by two tp ranks: each
// rank's part of their gradients is summed over its group once per step, after the
// data-parallel reduction and the accumulation, in one all-reduce for all of them (Megatron-LM's
// finalize_model_grads), not one per parameter and micro-step. Parity as above: only the order
// of fp32 sums changes (the tp and dp sums swap), while a missing or doubled sum changes the
// norms' and the head's gradients by O(1) relative.
TEST_CASE("replicated gradients are summed once per step in one all-reduce, at ZeRO stages 0, 2 and 3") {
  const std::vector<std::string> overrides = {"model.num_kv_heads=1", "data.grad_accum_steps=2"};
  std::vector<std::string> whole_batch = overrides;
  whole_batch.push_back("data.micro_batch_size=4");
  const RankOutcome reference = Train(TinyPlan(kTinyLlama, 1, "parallel: {data_replicate: 1}\n", whole_batch), 2)[0];
  for (int stage : {0, 2, 3}) {
    INFO("stage " << stage);
    const std::string dp = stage == 0 ? "data_replicate: 2" : "data_replicate: 1, data_shard: 2";
    const ir::Plan plan = TinyPlan(kTinyLlama, 4,
                                  "parallel: {" + dp + ", tensor: 2, sequence_parallel: true}\n"
                                  "sharding: {stage: " + std::to_string(stage) + ", bucket_size: 3000}\n",
                                  overrides);
    REQUIRE(plan.model().kv_head_replicas() == 2);
    REQUIRE(plan.batch().grad_accum_steps() == 2);
    const std::vector<RankOutcome> ranks = Train(plan, 2);
    CheckParity(plan, ranks, reference);
    for (size_t r = 0; r < ranks.size(); ++r) {
      INFO("rank " << r);
      const int64_t sequence = ReplicatedElements(ranks[r].layout, [](const ParamSlot& p) { return !p.tp_split; });
      const int64_t kv = ReplicatedElements(ranks[r].layout, [](const ParamSlot& p) { return p.tp_replicas > 1; });
      REQUIRE(sequence > 0);
      REQUIRE(kv > 0);
      REQUIRE(sequence != kv);
      CHECK(AllReducesOf(ranks[r].trace, sequence) == 2);
      CHECK(AllReducesOf(ranks[r].trace, kv) == 2);
    }
  }
}

TEST_CASE("tp 2 x dp 2 with ZeRO stages 1 and 3 trains like one rank") {
  const RankOutcome reference =
      Train(TinyPlan(kTinyGpt2, 1, "parallel: {data_replicate: 1}\n", {"data.micro_batch_size=4"}), 3)[0];
  for (int stage : {1, 3}) {
    INFO("stage " << stage);
    const ir::Plan plan = TinyPlan(kTinyGpt2, 4,
                                  "parallel: {data_replicate: 1, data_shard: 2, tensor: 2, sequence_parallel: true}\n"
                                  "sharding: {stage: " + std::to_string(stage) + ", bucket_size: 3000}\n");
    REQUIRE(plan.batch().global_batch_size() == 4);
    CheckParity(plan, reference, 3);
  }
}

TEST_CASE("the plan's parameter splits are the model's") {
  for (const char* model : {kTinyGpt2, kTinyLlama}) {
    const ir::Plan plan = TinyPlan(model, 2, "parallel: {data_replicate: 1, tensor: 2}\n");
    auto config = ModelConfigFromPlan(plan.model());
    REQUIRE(config.ok());
    auto built = BuildCausalLm(*config, 1);
    REQUIRE(built.ok());
    for (const ir::ShardUnit& unit : plan.sharding().units()) {
      for (const ir::Parameter& p : unit.parameters()) {
        INFO(p.name());
        const TpSplit split = (*built)->TensorParallelSplit(p.name());
        CHECK(split.dim == p.tp_dim());
        CHECK(split.parts == std::max(1, p.tp_parts()));
      }
    }
  }
}

TEST_CASE("a tp 2 checkpoint resumes bitwise under tp 2") {
  const std::string root = std::filesystem::temp_directory_path() / ("accel_tp_resume_" + std::to_string(::getpid()));
  RemoveDir(root);
  const ir::Plan plan = TinyPlan(kTinyLlama, 4, "parallel: {data_replicate: 1, data_shard: 2, tensor: 2}\n"
                                           "sharding: {stage: 2, bucket_size: 3000}\n");
  const std::vector<RankOutcome> straight = Train(plan, 4);
  Train(plan, 2, {root, 2, false});
  const std::vector<RankOutcome> resumed = Train(plan, 4, {root, 0, true});
  for (size_t r = 0; r < straight.size(); ++r) {
    REQUIRE(resumed[r].losses.size() == 2);
    CHECK(resumed[r].losses[0] == straight[r].losses[2]);
    for (const auto& [name, w] : straight[r].weights) CHECK(torch::equal(resumed[r].weights.at(name), w));
  }
  RemoveDir(root);
}

TEST_CASE("a checkpoint resumes under another tensor-parallel degree with the saved weights bitwise") {
  const std::string root = std::filesystem::temp_directory_path() / ("accel_tp_reshard_" + std::to_string(::getpid()));
  auto tp_of = [](const ir::Plan& p) { return static_cast<int>(ir::AxisSize(p, ir::Axis::kTp)); };
  const std::string sharded = "sharding: {stage: 1}\n";
  auto plan = [&](const char* model, int tp, int shard, const std::vector<std::string>& overrides = {}) {
    return TinyPlan(model, tp * shard,
                   "parallel: {data_replicate: 1, data_shard: " + std::to_string(shard) +
                       ", tensor: " + std::to_string(tp) + "}\n" + sharded, overrides);
  };
  // Save with one plan, resume with another with 2 steps to go (so nothing more trains): the
  // resumed ranks' merged weights are the saved ones.
  auto check = [&](const ir::Plan& saver, const ir::Plan& loader) {
    INFO("saved with tp " << tp_of(saver) << ", resumed with tp " << tp_of(loader));
    RemoveDir(root);
    const auto saved = MergedOverTp(saver, Train(saver, 2, {root, 2, false}), 0, tp_of(saver));
    const auto loaded = MergedOverTp(loader, Train(loader, 2, {root, 0, true}), 0, tp_of(loader));
    CHECK(MaxRelativeDifference(loaded, saved) == 0);
  };
  // GPT-2's fused c_attn (tp_parts 3), a GQA Llama's q/k/v, the vocabulary-parallel embeddings
  // and the row-parallel projections are merged and sliced again on load.
  for (const char* model : {kTinyGpt2, kTinyLlama}) {
    INFO(model);
    check(plan(model, 2, 2), plan(model, 1, 2));
    check(plan(model, 1, 2), plan(model, 2, 2));
  }
  // tp 4 pads a 512-token vocabulary as tp 1 and 2 do.
  const std::vector<std::string> vocab512 = {"model.vocab_size=512"};
  check(plan(kTinyGpt2, 2, 2, vocab512), plan(kTinyGpt2, 4, 1, vocab512));
  check(plan(kTinyGpt2, 4, 1, vocab512), plan(kTinyGpt2, 1, 2, vocab512));
  // Llama's 2 key/value heads at tp 4 are each held by 2 ranks and stored once per head.
  check(plan(kTinyLlama, 4, 1, vocab512), plan(kTinyLlama, 1, 2, vocab512));
  check(plan(kTinyLlama, 2, 2, vocab512), plan(kTinyLlama, 4, 1, vocab512));
  check(plan(kTinyLlama, 4, 1, vocab512), plan(kTinyLlama, 2, 2, vocab512));
  // The SGD momentum moves too: 2 steps at tp 2 then 2 at tp 1 match 4 at tp 1 (within the
  // tensor-parallel tolerance).
  RemoveDir(root);
  const ir::Plan one = plan(kTinyLlama, 1, 2), two = plan(kTinyLlama, 2, 2);
  const auto straight = MergedOverTp(one, Train(one, 4), 0, 1);
  Train(two, 2, {root, 2, false});
  CHECK(MaxRelativeDifference(MergedOverTp(one, Train(one, 4, {root, 0, true}), 0, 1), straight) < kWeightRel);
  RemoveDir(root);
}

TEST_CASE("a checkpoint is refused under a tensor-parallel degree that pads the vocabulary differently") {
  const std::string root = std::filesystem::temp_directory_path() / ("accel_tp_pad_" + std::to_string(::getpid()));
  RemoveDir(root);
  // A 256-token vocabulary: tp 2 keeps 256 rows, tp 4 pads to 512 (a multiple of 128 x 4).
  const ir::Plan two = TinyPlan(kTinyGpt2, 4, "parallel: {data_replicate: 1, data_shard: 2, tensor: 2}\nsharding: {stage: 1}\n");
  const ir::Plan four = TinyPlan(kTinyGpt2, 4, "parallel: {data_replicate: 1, data_shard: 1, tensor: 4}\nsharding: {stage: 1}\n");
  Train(two, 2, {root, 2, false});
  std::vector<std::string> errors = RunRanks(4, [&](int rank, Rendezvous& rdzv) {
    auto world_comm = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(world_comm.status());
    auto groups = ProcessGroups::Create(four, rank, rdzv, *world_comm, CommBackend::kGloo);
    Ok(groups.status());
    TensorParallel tp{groups->Get("tp"), false};
    auto model = BuildCausalLm(*ModelConfigFromPlan(four.model()), 1234, tp);
    Ok(model.status());
    std::vector<std::pair<std::string, int64_t>> names;
    for (const auto& item : (*model)->named_parameters()) names.emplace_back(item.key(), item.value().numel());
    auto layout = ShardLayout::FromPlan(four.sharding(), 0, names, groups->RankIn("dp_shard"));
    Ok(layout.status());
    DataParallelGroups dpg;
    dpg.tp = groups->Get("tp");
    TrainerOptions options;
    options.optimizer = OptimizerKind::kSgd;
    options.momentum = 0.9;
    auto trainer = Trainer::Create(*model, CausalLmLoss(), options, *std::move(layout), dpg);
    Ok(trainer.status());
    auto latest = CheckpointStore(root, 2).LatestGood();
    Ok(latest.status());
    const std::string message((*trainer)->LoadState(latest->path).status().message());
    Expect(message == latest->path + ": tensor transformer.wte.weight saved under tensor-parallel degree 2 "
                                      "is [256, 32] whole, but this run's degree 4 needs [512, 32]: the "
                                      "vocabulary is padded to a multiple of 128 x tp (model.padded_vocab_size), "
                                      "and degrees that pad it differently cannot resume each other",
           message);
  });
  for (const std::string& e : errors) CHECK(e == "");
  RemoveDir(root);
}

}  // namespace
}  // namespace accel::exec
