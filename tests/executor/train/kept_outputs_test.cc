// Per-op selective checkpointing (executor/train/kept_outputs.h): a recomputed region that keeps
// some ops' outputs gives the gradients of the plain region bit for bit, keeps exactly those
// outputs from forward to backward, and re-runs only the other ops.
#include "executor/train/kept_outputs.h"

#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <array>
#include <cmath>
#include <functional>
#include <vector>

#include "executor/memory/counting_allocator.h"
#include "executor/train/autocast.h"
#include "executor/train/recompute.h"

namespace accel::exec {
namespace {

using Catch::Matchers::Contains;

// An attention layer of the shape of the executor's blocks, every matmul and the core kept or not:
// h [b, s, w] -> h + o(attention(q(h), k(h), v(h))) + down(gelu(up(h)) · gate(h)), with Linear
// layers (q, k, v, o, gate, up, one with a bias) and a Conv1D-style matmul (down: [ffn, w]).
struct Layer {
  torch::nn::Linear q{nullptr}, k{nullptr}, v{nullptr}, o{nullptr}, gate{nullptr}, up{nullptr};
  torch::Tensor down;
  Layer(int64_t w, int64_t ffn) {
    q = torch::nn::Linear(torch::nn::LinearOptions(w, w).bias(true));
    k = torch::nn::Linear(torch::nn::LinearOptions(w, w).bias(false));
    v = torch::nn::Linear(torch::nn::LinearOptions(w, w).bias(true));
    o = torch::nn::Linear(torch::nn::LinearOptions(w, w).bias(false));
    gate = torch::nn::Linear(torch::nn::LinearOptions(w, ffn).bias(false));
    up = torch::nn::Linear(torch::nn::LinearOptions(w, ffn).bias(false));
    down = (torch::randn({ffn, w}) * 0.1).requires_grad_(true);
  }
  std::vector<torch::Tensor> Parameters() const {
    std::vector<torch::Tensor> params;
    for (const auto* m : {&q, &k, &v, &o, &gate, &up}) {
      for (const auto& p : (*m)->parameters()) params.push_back(p);
    }
    params.push_back(down);
    return params;
  }
};

// Which ops keep their outputs: q, k, v, core, o, gate, up, down.
using KeepMask = std::array<bool, 8>;

std::vector<torch::Tensor> Core(const std::vector<torch::Tensor>& in) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(in[0].size(-1)));
  torch::Tensor scores = torch::matmul(in[0], in[1].transpose(-2, -1)) * scale;
  return {torch::matmul(torch::softmax(scores, -1), in[2])};
}

torch::Tensor LayerForward(const Layer& l, const torch::Tensor& h, const KeepMask& keep) {
  auto linear = [&](const torch::nn::Linear& m, const torch::Tensor& x, int i) {
    return KeptLinear(x, m->weight, m->bias, keep[i]);
  };
  torch::Tensor n = torch::layer_norm(h, {h.size(-1)});
  torch::Tensor q = linear(l.q, n, 0), k = linear(l.k, n, 1), v = linear(l.v, n, 2);
  torch::Tensor a = KeptOutputs(Core, {q, k, v}, keep[3])[0];
  torch::Tensor r = h + linear(l.o, a, 4);
  torch::Tensor m = torch::gelu(linear(l.up, r, 6)) * linear(l.gate, r, 5);
  return r + KeptMatmul(m, l.down, keep[7]);
}

std::vector<torch::Tensor> Grads(const std::vector<torch::Tensor>& watched, const std::function<torch::Tensor()>& loss) {
  for (auto t : watched) {
    if (t.grad().defined()) t.mutable_grad() = torch::Tensor();
  }
  loss().backward();
  std::vector<torch::Tensor> grads;
  for (const auto& t : watched) grads.push_back(t.grad().clone());
  return grads;
}

// Gradients of two stacked layers, each recomputed when `recompute`, keeping `keep`'s outputs.
std::vector<torch::Tensor> RunLayers(const Layer& l1, const Layer& l2, const torch::Tensor& h, bool recompute,
                                     const KeepMask& keep, ComputePrecision precision) {
  std::vector<torch::Tensor> watched = l1.Parameters();
  for (const auto& p : l2.Parameters()) watched.push_back(p);
  watched.push_back(h);
  return Grads(watched, [&] {
    torch::Tensor out;
    {
      AutocastScope autocast(c10::kCPU, precision);
      auto f1 = [&](const torch::Tensor& x) { return LayerForward(l1, x, keep); };
      auto f2 = [&](const torch::Tensor& x) { return LayerForward(l2, x, keep); };
      torch::Tensor x = recompute ? Recompute(f1, h) : f1(h);
      out = recompute ? Recompute(f2, x) : f2(x);
    }
    return out.to(torch::kFloat).pow(2).sum();
  });
}

TEST_CASE("kept outputs: gradients equal the plain layers' bit for bit, fp32 and bf16 autocast", "[recompute]") {
  torch::manual_seed(5);
  Layer l1(16, 40), l2(16, 40);
  torch::Tensor h = torch::randn({2, 6, 16}).requires_grad_(true);
  const KeepMask none{};
  const KeepMask every{true, true, true, true, true, true, true, true};
  // torchtitan's rule on this layer: matmuls 1, 3, 5, 7 (q, v, gate, down) and the core.
  const KeepMask op_policy{true, false, true, true, false, true, false, true};
  for (ComputePrecision precision : {ComputePrecision::kFp32, ComputePrecision::kBf16}) {
    INFO("bf16 " << (precision == ComputePrecision::kBf16));
    const std::vector<torch::Tensor> plain = RunLayers(l1, l2, h, false, none, precision);
    for (const KeepMask& keep : {none, every, op_policy}) {
      const std::vector<torch::Tensor> kept = RunLayers(l1, l2, h, true, keep, precision);
      REQUIRE(kept.size() == plain.size());
      for (size_t i = 0; i < kept.size(); ++i) {
        INFO("gradient " << i);
        CHECK(torch::equal(kept[i], plain[i]));
      }
    }
    // Outside a region `keep` changes nothing.
    const std::vector<torch::Tensor> unchecked = RunLayers(l1, l2, h, false, every, precision);
    for (size_t i = 0; i < plain.size(); ++i) CHECK(torch::equal(unchecked[i], plain[i]));
  }
}

TEST_CASE("kept outputs: a recomputed layer keeps its input and exactly the kept outputs", "[recompute][memory]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  torch::manual_seed(6);
  const int64_t b = 2, s = 8, w = 16, ffn = 40;
  Layer layer(w, ffn);
  torch::Tensor h = torch::randn({b, s, w}).requires_grad_(true);
  auto kept_bytes = [&](const KeepMask& keep) {
    int64_t kept = 0;
    for (int round = 0; round < 2; ++round) {
      const int64_t before = LiveTensorBytes();
      torch::Tensor out = Recompute([&](const torch::Tensor& x) { return LayerForward(layer, x, keep); }, h);
      kept = LiveTensorBytes() - before;
      out.pow(2).sum().backward();
    }
    return kept;
  };
  const int64_t n = b * s;
  const int64_t nothing = kept_bytes(KeepMask{});
  // q, v, the core's output, gate, down: n × (w + w + w + ffn + w) fp32 elements.
  const int64_t op_policy = kept_bytes(KeepMask{true, false, true, true, false, true, false, true});
  CHECK(op_policy - nothing == 4 * n * (4 * w + ffn));
  // The output itself (n × w) is what the region returns in both cases.
  CHECK(nothing >= 4 * n * w);
}

TEST_CASE("kept outputs: the recompute re-runs only the ops that were not kept", "[recompute]") {
  torch::manual_seed(7);
  torch::nn::Linear a(8, 8), c(8, 8);
  torch::Tensor x = torch::randn({4, 8}).requires_grad_(true);
  int core_runs = 0;
  auto core = [&](const std::vector<torch::Tensor>& in) {
    ++core_runs;
    return std::vector<torch::Tensor>{torch::tanh(in[0])};
  };
  auto region = [&](const torch::Tensor& t) {
    torch::Tensor y = KeptLinear(t, a->weight, a->bias, true);
    return KeptLinear(KeptOutputs(core, {y}, true)[0], c->weight, c->bias, false);
  };
  torch::Tensor out = Recompute(region, x);
  CHECK(core_runs == 1);
  out.sum().backward();
  // The recompute takes the core's output as kept; its backward runs the core once more.
  CHECK(core_runs == 2);
  CHECK(a->weight.grad().defined());
  CHECK(c->weight.grad().defined());
}

TEST_CASE("kept outputs: a second backward through the region is refused", "[recompute]") {
  torch::manual_seed(8);
  torch::nn::Linear a(4, 4);
  torch::Tensor x = torch::randn({3, 4}).requires_grad_(true);
  torch::Tensor out =
      Recompute([&](const torch::Tensor& t) { return torch::relu(KeptLinear(t, a->weight, a->bias, true)); }, x);
  torch::Tensor loss = out.sum();
  loss.backward({}, /*retain_graph=*/true);
  CHECK_THROWS_WITH(loss.backward(), Contains("kept outputs were used by an earlier backward"));
}

TEST_CASE("kept outputs: a recompute that runs other kept ops than its forward is refused", "[recompute]") {
  torch::manual_seed(9);
  torch::nn::Linear a(4, 4);
  torch::Tensor x = torch::randn({3, 4}).requires_grad_(true);
  bool first = true;
  torch::Tensor out = Recompute(
      [&](const torch::Tensor& t) {
        torch::Tensor y = KeptLinear(t, a->weight, a->bias, true);
        if (first) y = KeptLinear(y, a->weight, a->bias, true);
        first = false;
        return y;
      },
      x);
  CHECK_THROWS_WITH(out.sum().backward(), Contains("the recompute used 1 of the 2 outputs its forward kept"));
}

}  // namespace
}  // namespace accel::exec
