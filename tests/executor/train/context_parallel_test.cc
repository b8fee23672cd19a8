// Context parallelism (ring attention and DeepSpeed-Ulysses) against one rank: the attention op
// alone, then whole training runs from identical initial weights with plans from the real
// planner, alone and with tensor parallelism, pipelining, ZeRO-3 and recompute.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "../multi_rank.h"
#include "../plan_from_yaml.h"
#include "parity.h"
#include "executor/models/causal_lm.h"
#include "executor/models/context/context_attention.h"
#include "executor/models/context/context_parallel.h"
#include "ir/plan_access.h"

namespace accel::exec {
namespace {

using testing::kTinyGpt2;
using testing::kTinyLlama;
using testing::MaxRelativeDifference;
using testing::Ok;
using testing::RankOutcome;
using testing::RunRanks;
using testing::TinyPlan;
using testing::Train;

// Tolerances. Context parallelism changes only the order of fp32 sums in attention: ring
// attention merges per-chunk softmaxes by their log-sum-exps instead of one softmax over the row
// (a few ulps per row), and the gradients are averaged over cp (a sum of cp partial gradients,
// reordered). Through 2 layers and 3 SGD updates that stays far below these bounds (measured:
// losses within 2e-7 relative, weights within 3e-6), while a wrong position table, a missing
// chunk, a mask off by one chunk or a missing average over cp changes losses at the 1e-2 level
// and weights by O(1) relative.
constexpr double kCpLossEps = 1e-6;
constexpr double kCpWeightRel = 1e-5;

// The whole weights every rank holds merged over its tp group (ranks first … first + tp − 1 of
// the same stage), by the plan's split of each parameter; only the names the rank holds.
std::map<std::string, torch::Tensor> MergedHeld(const ir::Plan& plan, const std::vector<RankOutcome>& ranks,
                                                int first, int tp) {
  std::map<std::string, const ir::Parameter*> params;
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) params[p.name()] = &p;
  }
  std::map<std::string, torch::Tensor> out;
  for (const auto& [name, w] : ranks[first].weights) {
    const ir::Parameter& p = *params.at(name);
    std::vector<torch::Tensor> slices;
    for (int r = first; r < first + tp; ++r) slices.push_back(ranks[r].weights.at(name));
    out[name] = TpMerge(slices, TpSplit{p.tp_dim(), std::max(1, p.tp_parts()), std::max(1, p.tp_replicas())});
  }
  return out;
}

// Every rank's per-step losses equal the reference's, and every replica's weights (merged over
// tp, the stage's part under pp) equal the reference's.
void CheckCpParity(const ir::Plan& plan, const RankOutcome& reference, int steps,
                   const torch::Tensor& batches = {}) {
  const std::vector<RankOutcome> ranks = Train(plan, steps, {}, "", batches);
  const int tp = static_cast<int>(ir::AxisSize(plan, ir::Axis::kTp));
  for (size_t r = 0; r < ranks.size(); ++r) {
    INFO("rank " << r);
    REQUIRE(ranks[r].losses.size() == reference.losses.size());
    for (size_t s = 0; s < reference.losses.size(); ++s) {
      CHECK(ranks[r].losses[s] == Approx(reference.losses[s]).epsilon(kCpLossEps));
    }
  }
  for (int first = 0; first < static_cast<int>(ranks.size()); first += tp) {
    INFO("ranks " << first << ".." << first + tp - 1);
    const std::map<std::string, torch::Tensor> merged = MergedHeld(plan, ranks, first, tp);
    std::map<std::string, torch::Tensor> expected;
    for (const auto& item : merged) expected[item.first] = reference.weights.at(item.first);
    CHECK(MaxRelativeDifference(merged, expected) < kCpWeightRel);
  }
}

std::string CpLayout(int cp, const char* method, const std::string& extra = "") {
  return "parallel: {data_replicate: 1, context: " + std::to_string(cp) + ", context_method: " + method +
         extra + "}\n";
}

TEST_CASE("the plan lays out context-parallel chunks: head-tail for ring, in order for Ulysses") {
  const ir::Plan ring = TinyPlan(kTinyLlama, 4, CpLayout(4, "ring"));
  const ir::ContextParallel& cp = ring.mesh().context_parallel();
  CHECK(cp.method() == ir::CONTEXT_PARALLEL_METHOD_RING);
  CHECK(cp.chunks() == 8);
  REQUIRE(cp.ranks_size() == 4);
  CHECK(std::vector<int64_t>(cp.ranks(0).chunks().begin(), cp.ranks(0).chunks().end()) == std::vector<int64_t>{0, 7});
  CHECK(std::vector<int64_t>(cp.ranks(3).chunks().begin(), cp.ranks(3).chunks().end()) == std::vector<int64_t>{3, 4});
  const ir::Plan ulysses = TinyPlan(kTinyGpt2, 4, CpLayout(4, "ulysses"));
  CHECK(ulysses.mesh().context_parallel().chunks() == 4);
  CHECK(ulysses.mesh().context_parallel().ranks(2).chunks(0) == 2);
  CHECK_FALSE(TinyPlan(kTinyLlama, 1, "parallel: {data_replicate: 1}\n").mesh().has_context_parallel());
}

TEST_CASE("LocalChunks and LocalPositions take a rank's chunks in the plan's order") {
  ContextParallel cp;
  cp.chunks = 4;
  cp.rank_chunks = {{0, 3}, {1, 2}};
  CHECK(torch::equal(LocalPositions(4, cp, torch::TensorOptions(), 1), torch::tensor({2, 3, 4, 5}, torch::kLong)));
  CHECK(torch::equal(LocalPositions(4, cp, torch::TensorOptions(), 0), torch::tensor({0, 1, 6, 7}, torch::kLong)));
  // Without a group of two or more ranks: the identity.
  CHECK(torch::equal(LocalPositions(3, ContextParallel{}, torch::TensorOptions()), torch::arange(3)));
  torch::Tensor x = torch::arange(8).view({1, 8});
  CHECK(LocalChunks(x, ContextParallel{}).is_same(x));
}

// Each rank's rows of ContextParallelAttention equal those of causal attention over the whole
// sequence, and so do the gradients of q, k and v (grouped-query: 4 query heads, 2 key/value).
TEST_CASE("ring and Ulysses attention equal causal attention over the whole sequence, with gradients") {
  torch::manual_seed(5);
  const int64_t b = 2, heads = 4, kv = 2, s = 16, d = 8;
  const torch::Tensor q = torch::randn({b, heads, s, d}), k = torch::randn({b, kv, s, d}), v = torch::randn({b, kv, s, d});
  const torch::Tensor dout = torch::randn({b, heads, s, d});
  torch::Tensor qf = q.clone().requires_grad_(true), kf = k.clone().requires_grad_(true), vf = v.clone().requires_grad_(true);
  const torch::Tensor expected = CausalAttention(qf, kf, vf);
  (expected * dout).sum().backward();
  for (const ContextMethod method : {ContextMethod::kRing, ContextMethod::kUlysses}) {
    for (const int n : {2, 4}) {
      if (method == ContextMethod::kUlysses && kv % n != 0) continue;
      INFO((method == ContextMethod::kRing ? "ring" : "ulysses") << " over " << n);
      std::vector<std::vector<torch::Tensor>> got(static_cast<size_t>(n));
      std::vector<std::vector<int64_t>> layout(static_cast<size_t>(n));
      const int64_t chunks = method == ContextMethod::kRing ? 2 * n : n;
      for (int r = 0; r < n; ++r) {
        layout[r] = {r};
        if (method == ContextMethod::kRing) layout[r].push_back(2 * n - 1 - r);
      }
      std::vector<std::string> errors = RunRanks(n, [&](int rank, Rendezvous& rdzv) {
        auto comm = rdzv.CreateWorld(CommBackend::kGloo);
        Ok(comm.status());
        ContextParallel cp{*comm, method, chunks, layout};
        auto local = [&](const torch::Tensor& t) {
          return LocalChunks(t.transpose(1, 2), cp).transpose(1, 2).contiguous().requires_grad_(true);
        };
        torch::Tensor ql = local(q), kl = local(k), vl = local(v);
        torch::Tensor out = ContextParallelAttention(ql, kl, vl, cp, /*fused=*/false);
        (out * LocalChunks(dout.transpose(1, 2), cp).transpose(1, 2)).sum().backward();
        got[rank] = {out.detach(), ql.grad(), kl.grad(), vl.grad()};
      });
      for (const std::string& e : errors) REQUIRE(e == "");
      for (int r = 0; r < n; ++r) {
        ContextParallel view{nullptr, method, chunks, layout};
        auto rows = [&](const torch::Tensor& t) {
          std::vector<torch::Tensor> parts;
          const int64_t len = s / chunks;
          for (int64_t c : layout[r]) parts.push_back(t.narrow(2, c * len, len));
          return torch::cat(parts, 2);
        };
        INFO("rank " << r);
        CHECK(torch::allclose(got[r][0], rows(expected.detach()), 1e-5, 1e-6));
        CHECK(torch::allclose(got[r][1], rows(qf.grad()), 1e-5, 1e-6));
        CHECK(torch::allclose(got[r][2], rows(kf.grad()), 1e-5, 1e-6));
        CHECK(torch::allclose(got[r][3], rows(vf.grad()), 1e-5, 1e-6));
      }
    }
  }
}

TEST_CASE("context parallel 2 and 4 train like one rank: ring (llama, GQA) and Ulysses (gpt2)") {
  const RankOutcome llama = Train(TinyPlan(kTinyLlama, 1, "parallel: {data_replicate: 1}\n"), 3)[0];
  const RankOutcome gpt2 = Train(TinyPlan(kTinyGpt2, 1, "parallel: {data_replicate: 1}\n"), 3)[0];
  for (int cp : {2, 4}) {
    INFO("cp " << cp);
    CheckCpParity(TinyPlan(kTinyLlama, cp, CpLayout(cp, "ring")), llama, 3);
    CheckCpParity(TinyPlan(kTinyGpt2, cp, CpLayout(cp, "ulysses")), gpt2, 3);
  }
  CheckCpParity(TinyPlan(kTinyLlama, 2, CpLayout(2, "ulysses")), llama, 3);
  CheckCpParity(TinyPlan(kTinyGpt2, 2, CpLayout(2, "ring")), gpt2, 3);
}

TEST_CASE("context parallel 2 and 4 train like one rank on packed documents of uneven length") {
  for (const char* model : {kTinyLlama, kTinyGpt2}) {
    const ir::Plan one = TinyPlan(model, 1, "parallel: {data_replicate: 1}\n");
    const torch::Tensor documents = testing::PackedDocumentBatches(one, 3);
    // Some window holds a document boundary away from the chunk boundaries (seq / 8 apart).
    const torch::Tensor boundaries = (documents == 2).nonzero();
    const int64_t chunk = one.batch().seq_len() / 8;
    CHECK((boundaries.select(1, 3) % chunk != 0).any().item<bool>());
    const RankOutcome reference = Train(one, 3, {}, "", documents)[0];
    for (int cp : {2, 4}) {
      for (const char* method : {"ring", "ulysses"}) {
        // Ulysses splits heads: the tiny Llama's 2 key/value heads allow cp 2 only (E0417).
        if (model == kTinyLlama && cp == 4 && std::string(method) == "ulysses") continue;
        INFO(method << " cp " << cp);
        CheckCpParity(TinyPlan(model, cp, CpLayout(cp, method)), reference, 3, documents);
      }
    }
  }
}

TEST_CASE("context parallel 2 composes: with tensor parallel 2, pipeline 2, ZeRO-3 and recompute") {
  const RankOutcome llama = Train(TinyPlan(kTinyLlama, 1, "parallel: {data_replicate: 1}\n"), 3)[0];
  const RankOutcome gpt2 = Train(TinyPlan(kTinyGpt2, 1, "parallel: {data_replicate: 1}\n"), 3)[0];
  SECTION("cp 2 x tp 2 with sequence parallel") {
    CheckCpParity(TinyPlan(kTinyLlama, 4, CpLayout(2, "ring", ", tensor: 2, sequence_parallel: true")), llama, 3);
    CheckCpParity(TinyPlan(kTinyGpt2, 4, CpLayout(2, "ulysses", ", tensor: 2")), gpt2, 3);
  }
  SECTION("cp 2 x pp 2, 1F1B over 2 microbatches") {
    // The reference accumulates the same 2 micro-batches per step.
    const RankOutcome accumulated =
        Train(TinyPlan(kTinyLlama, 1, "parallel: {data_replicate: 1}\n", {"data.grad_accum_steps=2"}), 3)[0];
    const std::string pp = ", pipeline: 2, pipeline_microbatches: 2";
    CheckCpParity(TinyPlan(kTinyLlama, 4, CpLayout(2, "ring", pp)), accumulated, 3);
    CheckCpParity(TinyPlan(kTinyLlama, 4, CpLayout(2, "ulysses", pp)), accumulated, 3);
  }
  SECTION("cp 2 x dp_shard 2 at ZeRO-3, and full recompute") {
    // Twice the reference's global batch: the reference is the same layout without cp.
    const std::string shard = "parallel: {data_replicate: 1, data_shard: 2}\nsharding: {stage: 3}\n";
    const RankOutcome sharded = Train(TinyPlan(kTinyLlama, 2, shard), 3)[0];
    CheckCpParity(TinyPlan(kTinyLlama, 4,
                           "parallel: {data_replicate: 1, data_shard: 2, context: 2}\nsharding: {stage: 3}\n"),
                  sharded, 3);
    CheckCpParity(TinyPlan(kTinyLlama, 2, CpLayout(2, "ring"), {"training.recompute=full"}), llama, 3);
  }
}

// The collectives each rank ran are the ones the plan names per layer: ring, cp − 1 send/recv
// of k and v stacked per block in forward and as many of their gradients in backward; Ulysses,
// four all-to-alls per block each way.
TEST_CASE("context-parallel ranks run the planned collectives per layer") {
  for (const char* method : {"ring", "ulysses"}) {
    INFO(method);
    const ir::Plan plan = TinyPlan(kTinyLlama, 2, CpLayout(2, method));
    const std::vector<RankOutcome> ranks = Train(plan, 1);
    std::map<std::string, int> counts;
    for (const CollectiveRecord& c : ranks[0].trace) {
      if (c.group_size == 2) ++counts[c.kind];
    }
    const int layers = static_cast<int>(plan.model().num_layers());
    if (std::string(method) == "ring") {
      CHECK(counts["send"] == 2 * layers);  // (cp − 1) forward + (cp − 1) backward per block
      CHECK(counts["all-to-all"] == 0);
    } else {
      CHECK(counts["all-to-all"] == 8 * layers);
      CHECK(counts["send"] == 0);
    }
  }
}

}  // namespace
}  // namespace accel::exec
