#include "executor/train/recompute.h"

#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <vector>

#include "executor/memory/counting_allocator.h"
#include "executor/train/autocast.h"

namespace accel::exec {
namespace {

using Catch::Matchers::Contains;

// Residual MLP block: x + fc2(gelu(fc1(x))), x [batch, width].
struct MlpBlock {
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
  MlpBlock(int64_t width, int64_t hidden) : fc1(width, hidden), fc2(hidden, width) {}
  torch::Tensor operator()(const torch::Tensor& x) { return x + fc2(torch::gelu(fc1(x))); }
  std::vector<torch::Tensor> Parameters() const {
    std::vector<torch::Tensor> params = fc1->parameters();
    for (const auto& p : fc2->parameters()) params.push_back(p);
    return params;
  }
};

// Self-attention layer without heads: h [batch, seq, width] -> h + o(softmax(q k^T / sqrt(d)) v).
struct AttentionLayer {
  torch::nn::Linear q, k, v, o;
  explicit AttentionLayer(int64_t width)
      : q(width, width), k(width, width), v(width, width), o(width, width) {}
  std::vector<torch::Tensor> Parameters() const {
    std::vector<torch::Tensor> params;
    for (const auto* m : {&q, &k, &v, &o}) {
      for (const auto& p : (*m)->parameters()) params.push_back(p);
    }
    return params;
  }
};

// The attention core that selective recompute checkpoints: {q, k, v} -> {context}.
std::vector<torch::Tensor> AttentionCore(const std::vector<torch::Tensor>& qkv) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(qkv[0].size(-1)));
  torch::Tensor scores = torch::matmul(qkv[0], qkv[1].transpose(-2, -1)) * scale;
  return {torch::matmul(torch::softmax(scores, -1), qkv[2])};
}

enum class Mode { kPlain, kSelective, kFull };

torch::Tensor AttentionForward(AttentionLayer& layer, const torch::Tensor& h, Mode mode) {
  auto body = [&layer, mode](const torch::Tensor& x) {
    std::vector<torch::Tensor> qkv = {layer.q(x), layer.k(x), layer.v(x)};
    torch::Tensor context =
        mode == Mode::kSelective ? RecomputeMany(AttentionCore, qkv)[0] : AttentionCore(qkv)[0];
    return x + layer.o(context);
  };
  return mode == Mode::kFull ? Recompute(body, h) : body(h);
}

void ZeroGrads(const std::vector<torch::Tensor>& tensors) {
  for (auto t : tensors) {
    if (t.grad().defined()) t.mutable_grad() = torch::Tensor();
  }
}

// Gradients of `tensors` after running `loss_fn` and backward; clears them first and after.
std::vector<torch::Tensor> GradsOf(const std::vector<torch::Tensor>& tensors,
                                   const std::function<torch::Tensor()>& loss_fn) {
  ZeroGrads(tensors);
  loss_fn().backward();
  std::vector<torch::Tensor> grads;
  for (const auto& t : tensors) grads.push_back(t.grad().clone());
  ZeroGrads(tensors);
  return grads;
}

void CheckBitwiseEqual(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("gradient " << i);
    REQUIRE(a[i].defined());
    CHECK(torch::equal(a[i], b[i]));
  }
}

TEST_CASE("recompute: MLP block gradients are bitwise equal to no recompute", "[recompute]") {
  torch::manual_seed(1);
  MlpBlock b1(16, 64), b2(16, 64);
  torch::Tensor x = torch::randn({8, 16}).requires_grad_(true);
  std::vector<torch::Tensor> watched = b1.Parameters();
  for (const auto& p : b2.Parameters()) watched.push_back(p);
  watched.push_back(x);
  auto plain = GradsOf(watched, [&] { return b2(b1(x)).pow(2).sum(); });
  auto recomputed = GradsOf(watched, [&] {
    torch::Tensor h = Recompute([&](const torch::Tensor& t) { return b1(t); }, x);
    CHECK(torch::equal(h, b1(x)));
    return Recompute([&](const torch::Tensor& t) { return b2(t); }, h).pow(2).sum();
  });
  CheckBitwiseEqual(plain, recomputed);
}

TEST_CASE("recompute: 2-layer attention (selective and full) gives bitwise equal gradients",
          "[recompute]") {
  torch::manual_seed(2);
  AttentionLayer l1(12), l2(12);
  torch::Tensor h = torch::randn({2, 5, 12}).requires_grad_(true);
  std::vector<torch::Tensor> watched = l1.Parameters();
  for (const auto& p : l2.Parameters()) watched.push_back(p);
  watched.push_back(h);
  auto run = [&](Mode mode) {
    return GradsOf(watched, [&] {
      return AttentionForward(l2, AttentionForward(l1, h, mode), mode).pow(2).sum();
    });
  };
  auto plain = run(Mode::kPlain);
  SECTION("selective: only softmax(qk^T)v") { CheckBitwiseEqual(plain, run(Mode::kSelective)); }
  SECTION("full: whole layer") { CheckBitwiseEqual(plain, run(Mode::kFull)); }
}

TEST_CASE("recompute: unused and non-differentiable outputs of RecomputeMany", "[recompute]") {
  torch::manual_seed(3);
  torch::nn::Linear fc(6, 6);
  torch::Tensor x = torch::randn({4, 6}).requires_grad_(true);
  auto fn = [&](const std::vector<torch::Tensor>& in) {
    torch::Tensor y = fc(in[0]);
    return std::vector<torch::Tensor>{y.tanh(), y.sigmoid(), y.argmax(-1)};
  };
  std::vector<torch::Tensor> watched = fc->parameters();
  watched.push_back(x);
  auto plain = GradsOf(watched, [&] { return fn({x})[0].sum(); });
  auto recomputed = GradsOf(watched, [&] {
    auto outs = RecomputeMany(fn, {x});
    CHECK_FALSE(outs[2].requires_grad());
    return outs[0].sum();
  });
  CheckBitwiseEqual(plain, recomputed);
}

TEST_CASE("recompute: saves less memory than plain forward in a deep MLP", "[recompute]") {
  InstallCountingCpuAllocator();
  REQUIRE(CountingCpuAllocatorInstalled());
  torch::manual_seed(4);
  constexpr int kBlocks = 8;
  constexpr int64_t kBatch = 128, kWidth = 64, kHidden = 256;
  std::vector<MlpBlock> blocks;
  for (int i = 0; i < kBlocks; ++i) blocks.emplace_back(kWidth, kHidden);
  torch::Tensor x = torch::randn({kBatch, kWidth}).requires_grad_(true);
  // Live bytes held after forward (the graph's saved tensors and the output), before backward.
  auto held_after_forward = [&](bool recompute) {
    const int64_t before = LiveTensorBytes();
    torch::Tensor h = x;
    for (auto& block : blocks) {
      auto fn = [&block](const torch::Tensor& t) { return block(t); };
      h = recompute ? Recompute(fn, h) : fn(h);
    }
    const int64_t held = LiveTensorBytes() - before;
    h.sum().backward();
    return held;
  };
  const int64_t plain = held_after_forward(false);
  const int64_t recomputed = held_after_forward(true);
  // Per block the plain graph keeps fc1's output (gelu's input) and gelu's output (fc2's input),
  // each [batch, hidden] fp32; both runs keep each block's output [batch, width].
  const int64_t intermediates = kBlocks * 2 * kBatch * kHidden * 4;
  std::printf(
      "[recompute] %d MLP blocks, batch %lld, width %lld, hidden %lld: held after "
      "forward plain %lld bytes, recompute %lld bytes, saved %lld; intermediate "
      "activations %lld\n",
      kBlocks, static_cast<long long>(kBatch), static_cast<long long>(kWidth),
      static_cast<long long>(kHidden), static_cast<long long>(plain),
      static_cast<long long>(recomputed), static_cast<long long>(plain - recomputed),
      static_cast<long long>(intermediates));
  CHECK(recomputed < plain);
  CHECK(plain - recomputed > intermediates / 2);
}

TEST_CASE("recompute: dropout draws the same mask and the outer RNG stream is unchanged",
          "[recompute]") {
  torch::manual_seed(5);
  torch::nn::Linear fc(10, 10);
  torch::Tensor x = torch::randn({16, 10}).requires_grad_(true);
  auto fn = [&](const torch::Tensor& t) { return torch::dropout(fc(t), 0.5, /*train=*/true); };
  std::vector<torch::Tensor> watched = fc->parameters();
  watched.push_back(x);
  auto run = [&](bool recompute, torch::Tensor* out, torch::Tensor* after) {
    torch::manual_seed(42);
    auto grads = GradsOf(watched, [&] {
      *out = recompute ? Recompute(fn, x) : fn(x);
      return (*out * *out).sum();
    });
    *after = torch::rand({8});  // The first draw after backward.
    return grads;
  };
  torch::Tensor y_plain, y_recomputed, next_plain, next_recomputed;
  auto plain = run(false, &y_plain, &next_plain);
  auto recomputed = run(true, &y_recomputed, &next_recomputed);
  CHECK(torch::equal(y_plain, y_recomputed));
  CheckBitwiseEqual(plain, recomputed);
  CHECK(torch::equal(next_plain, next_recomputed));
}

TEST_CASE("recompute: bf16 autocast is re-entered for the recompute", "[recompute]") {
  torch::manual_seed(6);
  MlpBlock block(32, 64);
  torch::Tensor x = torch::randn({8, 32}).requires_grad_(true);
  std::vector<bool> autocast_seen;
  auto fn = [&](const torch::Tensor& t) {
    autocast_seen.push_back(CurrentAutocastState().cpu_enabled);
    return block.fc2(torch::gelu(block.fc1(t)));
  };
  std::vector<torch::Tensor> watched = block.Parameters();
  watched.push_back(x);
  // Backward runs outside the autocast region, as in a training step.
  auto run = [&](bool recompute) {
    return GradsOf(watched, [&] {
      AutocastScope autocast(c10::DeviceType::CPU, ComputePrecision::kBf16);
      torch::Tensor y = recompute ? Recompute(fn, x) : fn(x);
      CHECK(y.scalar_type() == torch::kBFloat16);
      return y.to(torch::kFloat32).pow(2).sum();
    });
  };
  auto plain = run(false);
  autocast_seen.clear();
  auto recomputed = run(true);
  CHECK(autocast_seen == std::vector<bool>{true, true});  // Forward, then recompute.
  CHECK_FALSE(CurrentAutocastState().cpu_enabled);
  CheckBitwiseEqual(plain, recomputed);
}

TEST_CASE("recompute: nested regions give the same gradients", "[recompute]") {
  torch::manual_seed(7);
  MlpBlock inner(8, 16), outer(8, 16);
  torch::Tensor x = torch::randn({4, 8}).requires_grad_(true);
  int inner_calls = 0;
  auto inner_fn = [&](const torch::Tensor& t) {
    ++inner_calls;
    return inner(t);
  };
  auto outer_fn = [&](const torch::Tensor& t) { return outer(Recompute(inner_fn, t)); };
  std::vector<torch::Tensor> watched = inner.Parameters();
  for (const auto& p : outer.Parameters()) watched.push_back(p);
  watched.push_back(x);
  auto plain = GradsOf(watched, [&] { return outer(inner(x)).pow(2).sum(); });
  auto recomputed = GradsOf(watched, [&] { return Recompute(outer_fn, x).pow(2).sum(); });
  CheckBitwiseEqual(plain, recomputed);
  // Outer forward (inner runs plainly), outer recompute (inner checkpointed), inner recompute.
  CHECK(inner_calls == 3);
}

TEST_CASE("recompute: input without requires_grad still gives parameter gradients", "[recompute]") {
  torch::manual_seed(8);
  MlpBlock block(8, 16);
  torch::Tensor x = torch::randn({4, 8});
  auto plain = GradsOf(block.Parameters(), [&] { return block(x).pow(2).sum(); });
  auto recomputed = GradsOf(block.Parameters(), [&] {
    return Recompute([&](const torch::Tensor& t) { return block(t); }, x).pow(2).sum();
  });
  CheckBitwiseEqual(plain, recomputed);
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("recompute: a retained graph recomputes on each backward", "[recompute]") {
  torch::manual_seed(9);
  MlpBlock block(8, 16);
  torch::Tensor x = torch::randn({4, 8}).requires_grad_(true);
  std::vector<torch::Tensor> watched = block.Parameters();
  watched.push_back(x);
  auto twice = [&](bool recompute) {
    return GradsOf(watched, [&] {
      torch::Tensor loss =
          (recompute ? Recompute([&](const torch::Tensor& t) { return block(t); }, x) : block(x))
              .pow(2)
              .sum();
      loss.backward({}, /*retain_graph=*/true);
      return loss;
    });
  };
  CheckBitwiseEqual(twice(false), twice(true));
}

TEST_CASE("recompute: with grad mode off it just calls fn", "[recompute]") {
  MlpBlock block(8, 16);
  torch::Tensor x = torch::randn({4, 8}).requires_grad_(true);
  int calls = 0;
  torch::NoGradGuard no_grad;
  torch::Tensor y = Recompute(
      [&](const torch::Tensor& t) {
        ++calls;
        return block(t);
      },
      x);
  CHECK(calls == 1);
  CHECK_FALSE(y.requires_grad());
  CHECK(torch::equal(y, block(x)));
}

TEST_CASE("recompute: torch::autograd::grad through a region is refused", "[recompute]") {
  MlpBlock block(8, 16);
  torch::Tensor x = torch::randn({4, 8}).requires_grad_(true);
  torch::Tensor y = Recompute([&](const torch::Tensor& t) { return block(t); }, x);
  CHECK_THROWS_WITH(torch::autograd::grad({y.sum()}, {x}),
                    Contains("Recompute: gradients through a recomputed region need backward()"));
}

TEST_CASE("recompute: an undefined input is refused", "[recompute]") {
  CHECK_THROWS_WITH(Recompute([](const torch::Tensor& t) { return t; }, torch::Tensor()),
                    Contains("Recompute: input 0 is undefined"));
}

}  // namespace
}  // namespace accel::exec
