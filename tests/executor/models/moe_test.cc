// The mixture-of-experts layer (executor/models/moe/): routing, the load-balancing loss against a
// hand-computed case, the layer against a token-by-token reference in fp64, its parameters'
// names, and expert parallelism (ep 2 and 4 over Gloo) against one rank holding every expert.
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "executor/communicator.h"
#include "executor/memory/counting_allocator.h"
#include "executor/models/moe/grouped_experts.h"
#include "executor/models/moe/moe_layer.h"
#include "executor/models/moe/router.h"
#include "executor/models/moe/token_dispatch.h"
#include "executor/train/autocast.h"
#include "../multi_rank.h"

namespace accel::exec {
namespace {

using testing::Expect;
using testing::Ok;
using testing::RunRanks;

const torch::TensorOptions kDouble = torch::TensorOptions().dtype(torch::kDouble);

TEST_CASE("token dispatch with a capacity keeps each expert's first slots and zeroes the rest") {
  // Tokens 0, 1, 2 choose expert 0 and token 3 expert 1 (top-1); capacity 2: token 2 is dropped.
  const torch::Tensor experts = torch::tensor({0, 0, 0, 1}, torch::kLong).view({4, 1});
  const torch::Tensor counts = torch::tensor({3, 1}, torch::kLong);
  const TokenDispatch dispatch(experts, counts, {}, /*capacity=*/2);
  CHECK(dispatch.dropped() == 1);
  CHECK(dispatch.RowsPerExpert() == std::vector<int64_t>{2, 1});
  const torch::Tensor x = torch::arange(8, kDouble).view({4, 2}).requires_grad_(true);
  const torch::Tensor rows = dispatch.Dispatch(x);
  CHECK(torch::equal(rows, x.detach().index_select(0, torch::tensor({0, 1, 3}, torch::kLong))));
  const torch::Tensor by_slot = dispatch.Combine(rows * 10);
  CHECK(torch::equal(by_slot.view({4, 2}),
                     torch::tensor({0., 10., 20., 30., 0., 0., 60., 70.}, kDouble).view({4, 2})));
  by_slot.sum().backward();
  // The dropped token gets no gradient through its expert.
  CHECK(torch::equal(x.grad(), torch::tensor({10., 10., 10., 10., 0., 0., 10., 10.}, kDouble).view({4, 2})));
  // A capacity at or above every count drops nothing and equals the dropless dispatch.
  const TokenDispatch roomy(experts, counts, {}, /*capacity=*/3);
  CHECK(roomy.dropped() == 0);
  CHECK(torch::equal(roomy.Dispatch(x.detach()), TokenDispatch(experts, counts, {}).Dispatch(x.detach())));
}

TEST_CASE("MoE routing is deterministic: the same logits, ties included, route the same way") {
  torch::manual_seed(3);
  torch::Tensor logits = torch::randn({64, 8});
  // Exact ties: rows whose 8 logits are equal, and rows with two equal maxima.
  logits.narrow(0, 0, 4).fill_(0.5);
  logits.narrow(0, 4, 4).narrow(1, 2, 2).fill_(9.0);
  for (torch::ScalarType dtype : {torch::kFloat, torch::kBFloat16}) {
    const torch::Tensor x = logits.to(dtype);
    const Routing a = Route(x, {2, RouterScoring::kSoftmax, true});
    const Routing b = Route(x.clone(), {2, RouterScoring::kSoftmax, true});
    CHECK(torch::equal(a.experts, b.experts));
    CHECK(torch::equal(a.probabilities, b.probabilities));
    CHECK(torch::equal(a.counts, b.counts));
    // The two tied maxima are the two choices of those rows.
    CHECK(torch::equal(std::get<0>(a.experts.narrow(0, 4, 4).sort(1)),
                       torch::tensor({2, 3}, torch::kLong).repeat({4, 1})));
    // Token dispatch orders the slots the same way every time.
    const TokenDispatch d1(a.experts, a.counts, {}), d2(b.experts, b.counts, {});
    const torch::Tensor rows = torch::arange(64, torch::kDouble).view({64, 1});
    CHECK(torch::equal(d1.Dispatch(rows), d2.Dispatch(rows)));
  }
}

TEST_CASE("MoE router: top-k of softmax scores, renormalized, with per-expert counts") {
  const torch::Tensor logits = torch::tensor({{1.0, 3.0, 2.0, 0.0}, {0.0, 0.5, 0.1, 2.0}, {4.0, 0.0, 0.0, 3.0}});
  const Routing r = Route(logits, {2, RouterScoring::kSoftmax, true});
  CHECK(torch::equal(r.experts, torch::tensor({{1, 2}, {3, 1}, {0, 3}}, torch::kLong)));
  CHECK(torch::equal(r.counts, torch::tensor({1, 2, 1, 2}, torch::kLong)));
  CHECK(torch::allclose(r.probabilities.sum(-1), torch::ones({3})));
  const torch::Tensor s = torch::softmax(logits, -1);
  CHECK(r.probabilities[0][0].item<double>() ==
        Approx(s[0][1].item<double>() / (s[0][1].item<double>() + s[0][2].item<double>())).epsilon(1e-6));
  // Qwen's norm_topk_prob = false keeps the softmax values; sigmoid scores each expert alone.
  CHECK(torch::equal(Route(logits, {2, RouterScoring::kSoftmax, false}).probabilities,
                     std::get<0>(torch::topk(s, 2))));
  CHECK(torch::allclose(Route(logits, {1, RouterScoring::kSigmoid, false}).probabilities,
                        torch::sigmoid(torch::tensor({{3.0}, {2.0}, {4.0}}))));
  // The same logits, the same routing.
  CHECK(torch::equal(Route(logits, {2, RouterScoring::kSoftmax, true}).experts, r.experts));
  CHECK_THROWS_WITH(Route(logits, {5, RouterScoring::kSoftmax, true}),
                    Catch::Contains("MoE router: top_k 5 must be in [1, 4]"));
}

TEST_CASE("MoE load-balancing loss: a hand-computed case and the uniform value k") {
  // Softmax of [0, ln 3] is [1/4, 3/4]. Top-1 picks experts 1, 1, 1, 0: f = [1/4, 3/4];
  // mean scores P = [(3·1/4 + 3/4)/4, (3·3/4 + 1/4)/4] = [3/8, 5/8];
  // loss = E · Σ f·P = 2 · (1/4·3/8 + 3/4·5/8) = 2 · 18/32 = 1.125.
  const double l3 = std::log(3.0);
  const torch::Tensor logits = torch::tensor({{0.0, l3}, {0.0, l3}, {0.0, l3}, {l3, 0.0}}, kDouble);
  CHECK(LoadBalancingLoss(Route(logits, {1, RouterScoring::kSoftmax, true})).item<double>() == Approx(1.125));
  // Equal logits: scores 1/E each; top-2 of 4 over 4 tokens spread as 2 per expert: loss k = 2.
  const torch::Tensor ties = torch::zeros({4, 4});
  Routing uniform = Route(ties, {2, RouterScoring::kSoftmax, true});
  uniform.counts = torch::full({4}, 2, torch::kLong);
  CHECK(LoadBalancingLoss(uniform).item<double>() == Approx(2.0));
  // The gradient flows to the logits through the mean scores.
  torch::Tensor x = logits.clone().requires_grad_(true);
  LoadBalancingLoss(Route(x, {1, RouterScoring::kSoftmax, true})).backward();
  CHECK(x.grad().abs().sum().item<double>() > 0);
}

ModelConfig TinyMoe(int64_t experts, int64_t top_k, bool shared) {
  ModelConfig c;
  c.arch = ModelArch::kLlama;
  c.hidden_size = 8;
  c.moe.num_experts = experts;
  c.moe.top_k = top_k;
  c.moe.expert_ffn_size = 6;
  if (shared) {  // Qwen2-MoE's shape: a gated shared expert, probabilities not renormalized
    c.moe.shared_expert_ffn_size = 10;
    c.moe.shared_expert_gate = true;
    c.moe.normalize_top_k = false;
  }
  return c;
}

// Fills a layer's parameters from a seed per name, so layers holding different experts agree: a
// grouped expert tensor is drawn for all E experts and the layer takes its own rows.
// randn from a generator of its own: Fill and the inputs run on RunRanks' threads, where
// torch::manual_seed would reseed the one global generator under another rank's draws (the
// test failed now and then with every rank's output off).
torch::Tensor SeededRandn(uint64_t seed, at::IntArrayRef shape) {
  at::Generator generator = at::detail::createCPUGenerator(seed);
  return torch::randn(shape, generator, kDouble);
}

void Fill(MoeLayer& layer, int64_t num_experts) {
  layer.to(torch::kDouble);
  torch::NoGradGuard no_grad;
  const auto [first, end] = layer.local_experts();
  for (const auto& p : layer.named_parameters()) {
    const std::string& name = p.key();
    int64_t seed = 17;
    for (char ch : name) seed = seed * 131 + ch;
    std::vector<int64_t> shape = p.value().sizes().vec();
    const bool grouped = name.rfind("experts.", 0) == 0;
    if (grouped) shape[0] = num_experts;
    const torch::Tensor full = SeededRandn(static_cast<uint64_t>(seed & 0x7fffffff), shape) * 0.5;
    p.value().copy_(grouped ? full.narrow(0, first, end - first) : full);
  }
}

std::map<std::string, torch::Tensor> Params(MoeLayer& layer) {
  std::map<std::string, torch::Tensor> out;
  for (const auto& p : layer.named_parameters()) out[p.key()] = p.value();
  return out;
}

// silu(x·Gᵀ) ⊙ (x·Uᵀ) · Dᵀ for one row.
torch::Tensor SwiGluRow(const torch::Tensor& x, const torch::Tensor& g, const torch::Tensor& u,
                        const torch::Tensor& d) {
  return torch::matmul(torch::silu(torch::matmul(x, g.t())) * torch::matmul(x, u.t()), d.t());
}

// Token by token, as Hugging Face's MixtralSparseMoeBlock and Qwen2MoeSparseMoeBlock define it.
torch::Tensor Reference(const std::map<std::string, torch::Tensor>& w, const ModelConfig& c, const torch::Tensor& x) {
  std::vector<torch::Tensor> rows;
  for (int64_t t = 0; t < x.size(0); ++t) {
    const torch::Tensor row = x[t];
    const torch::Tensor scores = torch::softmax(torch::matmul(row, w.at("gate.weight").t()), -1);
    auto [top, idx] = torch::topk(scores, c.moe.top_k);
    if (c.moe.normalize_top_k) top = top / top.sum();
    torch::Tensor y = torch::zeros_like(row);
    for (int64_t j = 0; j < c.moe.top_k; ++j) {
      const int64_t e = idx[j].item<int64_t>();
      y = y + top[j] * SwiGluRow(row, w.at("experts.gate_proj")[e], w.at("experts.up_proj")[e],
                                 w.at("experts.down_proj")[e]);
    }
    if (c.moe.shared_expert_ffn_size > 0) {
      y = y + torch::sigmoid(torch::matmul(row, w.at("shared_expert_gate.weight").t())) *
                  SwiGluRow(row, w.at("shared_expert.gate_proj.weight"), w.at("shared_expert.up_proj.weight"),
                            w.at("shared_expert.down_proj.weight"));
    }
    rows.push_back(y);
  }
  return torch::stack(rows);
}

TEST_CASE("MoE layer equals the token-by-token formula, values and gradients (fp64)") {
  for (bool shared : {false, true}) {
    INFO((shared ? "qwen2-moe: a gated shared expert" : "mixtral"));
    const ModelConfig c = TinyMoe(4, 2, shared);
    MoeLayer layer(c, {});
    Fill(layer, 4);
    torch::manual_seed(3);
    const torch::Tensor x0 = torch::randn({2, 5, 8}, kDouble);
    const torch::Tensor w = torch::randn({2, 5, 8}, kDouble);
    torch::Tensor x = x0.clone().requires_grad_(true);
    const MoeOutput out = layer.Forward(x);
    (out.y * w).sum().backward();
    CHECK(out.counts.sum().item<int64_t>() == 10 * 2);

    std::map<std::string, torch::Tensor> ref_w;
    for (const auto& [name, t] : Params(layer)) ref_w[name] = t.detach().clone().requires_grad_(true);
    torch::Tensor xr = x0.clone().requires_grad_(true);
    const torch::Tensor yr = Reference(ref_w, c, xr.view({10, 8})).view({2, 5, 8});
    (yr * w).sum().backward();
    CHECK((out.y - yr).abs().max().item<double>() < 1e-12);
    CHECK((x.grad() - xr.grad()).abs().max().item<double>() < 1e-12);
    for (const auto& [name, t] : Params(layer)) {
      INFO(name);
      const torch::Tensor ref = ref_w[name].grad().defined() ? ref_w[name].grad() : torch::zeros_like(t);
      REQUIRE(t.grad().defined());
      CHECK((t.grad() - ref).abs().max().item<double>() < 1e-12);
    }
  }
}

TEST_CASE("MoE layer parameters carry the plan's names and shapes, experts grouped") {
  auto shapes = [](MoeLayer& layer) {
    std::map<std::string, std::vector<int64_t>> out;
    for (const auto& p : layer.named_parameters()) out[p.key()] = p.value().sizes().vec();
    return out;
  };
  MoeLayer plain(TinyMoe(2, 1, false), {});
  CHECK(shapes(plain) == std::map<std::string, std::vector<int64_t>>{{"gate.weight", {2, 8}},
                                                                     {"experts.gate_proj", {2, 6, 8}},
                                                                     {"experts.up_proj", {2, 6, 8}},
                                                                     {"experts.down_proj", {2, 8, 6}}});
  MoeLayer shared(TinyMoe(2, 1, true), {});
  CHECK(shapes(shared) == std::map<std::string, std::vector<int64_t>>{{"gate.weight", {2, 8}},
                                                                      {"experts.gate_proj", {2, 6, 8}},
                                                                      {"experts.up_proj", {2, 6, 8}},
                                                                      {"experts.down_proj", {2, 8, 6}},
                                                                      {"shared_expert.gate_proj.weight", {10, 8}},
                                                                      {"shared_expert.up_proj.weight", {10, 8}},
                                                                      {"shared_expert.down_proj.weight", {8, 10}},
                                                                      {"shared_expert_gate.weight", {1, 8}}});
}

TEST_CASE("grouped experts keep the rows, the weights and the gate and up products only") {
  // fp32 without autocast: the rows are the caller's; gate and up [R, fe] are the node's.
  InstallCountingCpuAllocator();
  torch::manual_seed(9);
  const torch::Tensor gate = torch::randn({3, 6, 8}, torch::requires_grad());
  const torch::Tensor up = torch::randn({3, 6, 8}, torch::requires_grad());
  const torch::Tensor down = torch::randn({3, 8, 6}, torch::requires_grad());
  const torch::Tensor rows = torch::randn({7, 8}, torch::requires_grad());
  const int64_t before = LiveTensorBytes();
  torch::Tensor y = GroupedExperts(rows, gate, up, down, {2, 0, 5});
  CHECK(LiveTensorBytes() - before - y.numel() * 4 == 2 * 7 * 6 * 4);
  y.sum().backward();
  CHECK(gate.grad()[1].abs().sum().item<double>() == 0);  // the expert without rows
  CHECK(gate.grad()[0].abs().sum().item<double>() > 0);
}

TEST_CASE("grouped experts under bf16 autocast: bf16 products, fp32 gradients near the fp32 ones") {
  torch::manual_seed(10);
  const torch::Tensor gate = torch::randn({2, 6, 8}), up = torch::randn({2, 6, 8}), down = torch::randn({2, 8, 6});
  const torch::Tensor rows = torch::randn({5, 8});
  auto run = [&](bool autocast) {
    std::vector<torch::Tensor> w = {gate.clone().requires_grad_(true), up.clone().requires_grad_(true),
                                    down.clone().requires_grad_(true)};
    torch::Tensor x = rows.clone().requires_grad_(true);
    std::optional<AutocastScope> scope;
    if (autocast) scope.emplace(c10::kCPU, ComputePrecision::kBf16);
    torch::Tensor y = GroupedExperts(x, w[0], w[1], w[2], {3, 2});
    scope.reset();
    y.to(torch::kFloat).sum().backward();
    return std::vector<torch::Tensor>{y.to(torch::kFloat), x.grad(), w[0].grad(), w[1].grad(), w[2].grad()};
  };
  const std::vector<torch::Tensor> bf16 = run(true), fp32 = run(false);
  CHECK(bf16[1].scalar_type() == torch::kFloat);
  CHECK(bf16[2].scalar_type() == torch::kFloat);
  for (size_t i = 0; i < fp32.size(); ++i) {
    INFO("result " << i);
    // bf16 products of 6- and 8-term sums: within 5% of the largest magnitude.
    CHECK((bf16[i] - fp32[i]).abs().max().item<double>() <= 0.05 * fp32[i].abs().max().item<double>());
  }
}

TEST_CASE("the plan's mixture of experts reads into the executor's model config") {
  ir::Model m;
  m.set_arch(ir::ARCHITECTURE_LLAMA);
  m.set_hidden_size(16);
  m.set_num_layers(4);
  m.set_num_heads(4);
  m.set_num_kv_heads(2);
  m.set_ffn_hidden_size(32);
  m.set_vocab_size(256);
  m.set_max_seq_len(64);
  m.set_norm_eps(1e-6);
  m.set_rope_theta(10000);
  ir::MixtureOfExperts* moe = m.mutable_moe();
  moe->set_num_experts(8);
  moe->set_experts_per_token(2);
  moe->set_expert_ffn_size(12);
  moe->set_num_shared_experts(2);
  moe->set_shared_expert_ffn_size(10);
  moe->set_shared_expert_gate(true);
  moe->set_router_scoring(ir::ROUTER_SCORING_SOFTMAX);
  moe->set_norm_topk_prob(false);
  moe->set_router_aux_loss_coef(0.01);
  moe->add_dense_layers(0);
  const absl::StatusOr<ModelConfig> c = ModelConfigFromPlan(m);
  REQUIRE(c.ok());
  CHECK(c->moe.num_experts == 8);
  CHECK(c->moe.top_k == 2);
  CHECK(c->moe.expert_ffn_size == 12);
  CHECK(c->moe.shared_expert_ffn_size == 20);  // two shared experts of 10, one SwiGLU
  CHECK(c->moe.shared_expert_gate);
  CHECK_FALSE(c->moe.sigmoid_scoring);
  CHECK_FALSE(c->moe.normalize_top_k);
  CHECK(c->moe.aux_loss_coef == 0.01);
  CHECK_FALSE(c->IsMoeLayer(0));
  CHECK(c->IsMoeLayer(1));
  CHECK(c->IsMoeLayer(3));
  moe->set_experts_per_token(9);
  CHECK(ModelConfigFromPlan(m).status().message() == "model.moe: top_k 9 must be in [1, num_experts 8]");
  m.clear_moe();
  const absl::StatusOr<ModelConfig> dense = ModelConfigFromPlan(m);
  REQUIRE(dense.ok());
  CHECK_FALSE(dense->IsMoeLayer(1));
}

// Expert parallelism against one rank holding every expert: rank r routes its own tokens x_r;
// the reference runs the whole layer on each x_r in turn. Outputs, the input gradients and the
// replicated parameters' gradients (router, shared expert: each rank's from its own tokens, which
// data parallelism then reduces) must match the reference's for x_r; an
// expert's gradient on its owner must equal the reference's summed over every rank's tokens.
// fp64: the grouped matmuls of the parallel run cover several ranks' rows at once and its
// gradient sums run in another order, so results agree to rounding (1e-12), not bit for bit.
void CheckExpertParallel(int world, int64_t experts, bool shared) {
  const ModelConfig c = TinyMoe(experts, 2, shared);
  auto input = [&](int rank) {
    return SeededRandn(100 + rank, {1, 3 + rank, 8});  // uneven token counts
  };
  MoeLayer whole(c, {});
  Fill(whole, experts);
  std::vector<torch::Tensor> ref_out, ref_dx;
  std::vector<std::map<std::string, torch::Tensor>> replicated_grads;  // router, shared expert
  std::map<std::string, torch::Tensor> expert_grads;
  for (int r = 0; r < world; ++r) {
    whole.zero_grad();
    torch::Tensor x = input(r).requires_grad_(true);
    const MoeOutput out = whole.Forward(x);
    out.y.pow(2).sum().backward();
    ref_out.push_back(out.y.detach());
    ref_dx.push_back(x.grad());
    replicated_grads.emplace_back();
    for (const auto& [name, t] : Params(whole)) {
      if (name.rfind("experts.", 0) != 0) {
        replicated_grads.back()[name] = t.grad().clone();
      } else {
        expert_grads[name] = expert_grads.count(name) ? expert_grads[name] + t.grad() : t.grad().clone();
      }
    }
  }
  const std::vector<std::string> errors = RunRanks(world, [&](int rank, Rendezvous& rdzv) {
    auto comm = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(comm.status());
    MoeLayer layer(c, {comm->get()});
    Fill(layer, experts);
    Expect(layer.local_experts().first == rank * experts / world, "local experts");
    torch::Tensor x = input(rank).requires_grad_(true);
    const MoeOutput out = layer.Forward(x);
    out.y.pow(2).sum().backward();
    Expect((out.y - ref_out[rank]).abs().max().item<double>() < 1e-12, "output");
    Expect((x.grad() - ref_dx[rank]).abs().max().item<double>() < 1e-12, "input gradient");
    for (const auto& [name, t] : Params(layer)) {
      const bool expert = name.rfind("experts.", 0) == 0;
      const auto [first, end] = layer.local_experts();
      const torch::Tensor want =
          expert ? expert_grads.at(name).narrow(0, first, end - first) : replicated_grads[rank].at(name);
      Expect((t.grad() - want).abs().max().item<double>() < 1e-12, "gradient of " + name);
    }
  });
  for (size_t r = 0; r < errors.size(); ++r) {
    INFO("rank " << r);
    CHECK(errors[r] == "");
  }
}

TEST_CASE("expert parallel 2 and 4 over Gloo equal one rank holding every expert") {
  CheckExpertParallel(2, 4, false);
  CheckExpertParallel(4, 8, true);
  CheckExpertParallel(4, 4, false);
}

}  // namespace
}  // namespace accel::exec
