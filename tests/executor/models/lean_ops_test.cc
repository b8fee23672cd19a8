// The lean ops of executor/models/ops/: each one's values and gradients against the eager formula
// it replaces, in fp64 (gradients to 1e-10), and exactly which bytes each keeps for backward,
// counted by the counting CPU allocator.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <vector>

#include "executor/memory/counting_allocator.h"
#include "executor/models/causal_lm.h"
#include "executor/models/ops/chunked_cross_entropy.h"
#include "executor/models/ops/float_blocks.h"
#include "executor/models/ops/geglu.h"
#include "executor/models/ops/gelu.h"
#include "executor/models/ops/layer_norm.h"
#include "executor/models/ops/rms_norm.h"
#include "executor/models/ops/rotary.h"
#include "executor/models/ops/swiglu.h"
#include "executor/models/tensor_parallel.h"
#include "executor/train/autocast.h"
#include "../multi_rank.h"

namespace accel::exec {
namespace {

using Fn = std::function<torch::Tensor(const std::vector<torch::Tensor>&)>;

// Values and the gradients of Σ out·w (w a fixed random weight) of `lean` and `eager` on the same
// fp64 inputs agree within `tolerance`.
void CheckAgainstEager(const Fn& lean, const Fn& eager, const std::vector<torch::Tensor>& inputs,
                       double tolerance = 1e-10) {
  auto run = [&](const Fn& f) {
    std::vector<torch::Tensor> in;
    for (const torch::Tensor& t : inputs) in.push_back(t.detach().clone().requires_grad_(t.is_floating_point()));
    torch::Tensor out = f(in);
    torch::manual_seed(11);
    const torch::Tensor w = torch::randn(out.sizes(), out.options());
    (out * w).sum().backward();
    std::vector<torch::Tensor> results = {out.detach()};
    for (const torch::Tensor& t : in) {
      if (t.is_floating_point()) results.push_back(t.grad().defined() ? t.grad() : torch::zeros_like(t));
    }
    return results;
  };
  const std::vector<torch::Tensor> a = run(lean), b = run(eager);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("result " << i << " (0: values, then each input's gradient)");
    CHECK((a[i] - b[i]).abs().max().item<double>() <= tolerance);
  }
}

// Bytes that `f` keeps alive for backward after a forward whose inputs already exist: everything
// its forward left allocated but its output.
int64_t KeptBytes(const Fn& f, const std::vector<torch::Tensor>& inputs) {
  InstallCountingCpuAllocator();
  std::vector<torch::Tensor> in;
  for (const torch::Tensor& t : inputs) in.push_back(t.detach().clone().requires_grad_(t.is_floating_point()));
  const int64_t before = LiveTensorBytes();
  torch::Tensor out = f(in);
  const int64_t with_output = LiveTensorBytes() - before;
  return with_output - static_cast<int64_t>(out.numel() * out.element_size());
}

const torch::TensorOptions kF64 = torch::TensorOptions().dtype(torch::kDouble);

TEST_CASE("lean RMSNorm: values and gradients as the composed ops, keeps x and 1/rms") {
  torch::manual_seed(1);
  const torch::Tensor x = torch::randn({3, 5, 16}, kF64);
  const torch::Tensor w = torch::randn({16}, kF64);
  const double eps = 1e-6;
  CheckAgainstEager([&](const auto& in) { return RmsNorm(in[0], in[1], eps); },
                    [&](const auto& in) {
                      return in[1] * (in[0] * torch::rsqrt(in[0].pow(2).mean(-1, true) + eps));
                    },
                    {x, w});
  // fp32 input of 15 rows: x itself is an input (kept by reference) and 15 fp32 1/rms values.
  const int64_t kept = KeptBytes([&](const auto& in) { return RmsNorm(in[0], in[1], eps); },
                                 {torch::randn({3, 5, 16}), torch::ones({16})});
  CHECK(kept == 15 * 4);
}

TEST_CASE("lean LayerNorm: values and gradients as torch::layer_norm, keeps mean and 1/std") {
  torch::manual_seed(2);
  const torch::Tensor x = torch::randn({4, 6, 8}, kF64);
  CheckAgainstEager([](const auto& in) { return LayerNorm(in[0], in[1], in[2], 1e-5); },
                    [](const auto& in) { return torch::layer_norm(in[0], {8}, in[1], in[2], 1e-5); },
                    {x, torch::randn({8}, kF64), torch::randn({8}, kF64)});
  const int64_t kept = KeptBytes([](const auto& in) { return LayerNorm(in[0], in[1], in[2], 1e-5); },
                                 {torch::randn({4, 6, 8}).to(torch::kBFloat16), torch::ones({8}).to(torch::kBFloat16),
                                  torch::zeros({8}).to(torch::kBFloat16)});
  // fp32 mean and 1/std per row (a bf16 x runs in fp32 blocks, ops/float_blocks.h); x is the caller's.
  CHECK(kept == 24 * 2 * 4);
  // Under autocast its output stays in x's dtype (torch::layer_norm's would be fp32).
  AutocastScope autocast(c10::kCPU, ComputePrecision::kBf16);
  const torch::Tensor y = LayerNorm(torch::randn({2, 8}).to(torch::kBFloat16), torch::ones({8}).to(torch::kBFloat16),
                                    torch::zeros({8}).to(torch::kBFloat16), 1e-5);
  CHECK(y.scalar_type() == torch::kBFloat16);
}

// Values and gradients of a 16-bit CPU op against the same fp32 computation on the upcast inputs:
// each result within `ulps` bf16 rounding steps (2^-8 relative) of the fp32 one, plus 1e-6 of the
// largest fp32 value (results near 0). The fp32-block path rounds once, so one step is the bound
// for a value; two for sums accumulated block by block before rounding.
void CheckBf16AgainstFloat(const Fn& f, std::vector<torch::Tensor> inputs, double ulps) {
  // Both runs start from bf16-representable inputs and output gradient.
  for (torch::Tensor& t : inputs) t = t.to(torch::kBFloat16).to(torch::kFloat);
  auto run = [&](c10::ScalarType dtype) {
    std::vector<torch::Tensor> in;
    for (const torch::Tensor& t : inputs) in.push_back(t.to(dtype).detach().requires_grad_(true));
    torch::Tensor out = f(in);
    torch::manual_seed(12);
    out.backward(torch::randn(out.sizes()).to(torch::kBFloat16).to(dtype));
    std::vector<torch::Tensor> results = {out.detach().to(torch::kFloat)};
    for (const torch::Tensor& t : in) results.push_back(t.grad().to(torch::kFloat));
    return results;
  };
  const std::vector<torch::Tensor> bf16 = run(torch::kBFloat16), fp32 = run(torch::kFloat);
  for (size_t i = 0; i < fp32.size(); ++i) {
    INFO("result " << i << " (0: values, then each input's gradient)");
    const torch::Tensor bound = fp32[i].abs() * (ulps / 256) + 1e-6 * fp32[i].abs().max();
    CHECK(((bf16[i] - fp32[i]).abs() <= bound).all().item<bool>());
  }
}

TEST_CASE("lean GELU: values and gradients as torch::gelu(tanh), keeps x only") {
  torch::manual_seed(6);
  CheckAgainstEager([](const auto& in) { return Gelu(in[0]); },
                    [](const auto& in) {
                      return 0.5 * in[0] * (1 + torch::tanh(std::sqrt(2 / M_PI) * (in[0] + 0.044715 * in[0].pow(3))));
                    },
                    {torch::randn({3, 4, 10}, kF64)});
  // fp32 runs LibTorch's kernels unchanged.
  CheckAgainstEager([](const auto& in) { return Gelu(in[0]); }, [](const auto& in) { return torch::gelu(in[0], "tanh"); },
                    {torch::randn({3, 4, 10})}, 0.0);
  CHECK(KeptBytes([](const auto& in) { return Gelu(in[0]); }, {torch::randn({3, 4, 10})}) == 0);
  CHECK(KeptBytes([](const auto& in) { return Gelu(in[0]); }, {torch::randn({3, 4, 10}).to(torch::kBFloat16)}) == 0);
}

TEST_CASE("16-bit GELU and LayerNorm on the CPU run in fp32 blocks and round once") {
  torch::manual_seed(7);
  // 3 blocks and a partial one for GELU's rows of 100, several for LayerNorm's rows of 64; a
  // transposed (non-contiguous) input.
  const int64_t rows = 3 * kFloatBlockElements / 100 + 7;
  CheckBf16AgainstFloat([](const auto& in) { return Gelu(in[0]); }, {torch::randn({100, rows}).t()}, 1);
  CheckBf16AgainstFloat([](const auto& in) { return LayerNorm(in[0], in[1], in[2], 1e-5); },
                        {torch::randn({rows, 64}) * 3 + 1, torch::randn({64}), torch::randn({64})}, 2);
  const torch::Tensor x = torch::randn({rows, 64}).to(torch::kBFloat16);
  CHECK(UsesFloatBlocks(x));
  CHECK_FALSE(UsesFloatBlocks(x.to(torch::kFloat)));
  CHECK(Gelu(x).scalar_type() == torch::kBFloat16);
  CHECK(Gelu(torch::empty({0, 5}).to(torch::kBFloat16)).numel() == 0);
  int64_t covered = 0, calls = 0;
  ForEachRowBlock(rows, 64, [&](int64_t begin, int64_t count) {
    CHECK(begin == covered);
    covered += count, ++calls;
  });
  CHECK(covered == rows);
  CHECK(calls == (rows + kFloatBlockElements / 64 - 1) / (kFloatBlockElements / 64));
}

torch::Tensor RotateHalfEager(const torch::Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

TEST_CASE("lean rotary: values and gradients as Hugging Face's formula, keeps nothing new") {
  torch::manual_seed(3);
  const torch::Tensor freqs = torch::outer(torch::arange(7, kF64), torch::rand({4}, kF64));
  const torch::Tensor cos = torch::cat({freqs, freqs}, -1).cos(), sin = torch::cat({freqs, freqs}, -1).sin();
  // A transposed view, as LlamaBlock passes q and k.
  const torch::Tensor x = torch::randn({2, 7, 3, 8}, kF64).transpose(1, 2);
  CheckAgainstEager([&](const auto& in) { return ApplyRotary(in[0], cos.to(torch::kFloat), sin.to(torch::kFloat)).to(torch::kDouble); },
                    [&](const auto& in) { return (in[0] * cos + RotateHalfEager(in[0]) * sin).to(torch::kFloat).to(torch::kDouble); },
                    {x}, 1e-6);
  const torch::Tensor c32 = cos.to(torch::kFloat), s32 = sin.to(torch::kFloat);
  CHECK(KeptBytes([&](const auto& in) { return ApplyRotary(in[0], c32, s32); }, {torch::randn({2, 3, 7, 8})}) == 0);
  // bf16 in, bf16 out.
  CHECK(ApplyRotary(torch::randn({1, 1, 7, 8}).to(torch::kBFloat16), c32, s32).scalar_type() == torch::kBFloat16);
}

TEST_CASE("lean SwiGLU: values and gradients as silu(gate) * up, bit for bit, keeps gate and up only") {
  torch::manual_seed(4);
  const torch::Tensor gate = torch::randn({5, 12}), up = torch::randn({5, 12});
  CheckAgainstEager([](const auto& in) { return SwiGlu(in[0], in[1]); },
                    [](const auto& in) { return torch::silu(in[0]) * in[1]; }, {gate, up}, 0.0);
  CHECK(KeptBytes([](const auto& in) { return SwiGlu(in[0], in[1]); }, {gate, up}) == 0);
  CHECK(KeptBytes([](const auto& in) { return torch::silu(in[0]) * in[1]; }, {gate, up}) == 5 * 12 * 4);
}

TEST_CASE("lean GeGLU: values and gradients as gelu_tanh(gate) * up, bit for bit, keeps gate and up only") {
  torch::manual_seed(4);
  const torch::Tensor gate = torch::randn({5, 12}), up = torch::randn({5, 12});
  CheckAgainstEager([](const auto& in) { return GeGlu(in[0], in[1]); },
                    [](const auto& in) { return torch::gelu(in[0], "tanh") * in[1]; }, {gate, up}, 0.0);
  CHECK(KeptBytes([](const auto& in) { return GeGlu(in[0], in[1]); }, {gate, up}) == 0);
}

// Gemma's scores (AttentionScores): scale, cap·tanh(s/cap) before the mask, keys j with
// i − window < j ≤ i, against the formula written out; values and gradients in fp64.
TEST_CASE("attention with a score scale, soft cap and sliding window equals the written-out formula") {
  torch::manual_seed(5);
  const torch::Tensor q = torch::randn({2, 4, 9, 4}, kF64) * 3, k = torch::randn({2, 2, 9, 4}, kF64) * 3,
                      v = torch::randn({2, 2, 9, 4}, kF64);
  const AttentionScores scores{0.3, 2.0, 4};
  CheckAgainstEager([&](const auto& in) { return CausalAttention(in[0], in[1], in[2], false, scores); },
                    [](const auto& in) {
                      torch::Tensor s = torch::matmul(in[0], in[1].repeat_interleave(2, 1).transpose(-2, -1)) * 0.3;
                      s = torch::tanh(s / 2.0) * 2.0;
                      const torch::Tensor i = torch::arange(9).view({9, 1}), j = torch::arange(9).view({1, 9});
                      s = s.masked_fill((j > i).logical_or(j <= i - 4), -INFINITY);
                      return torch::matmul(torch::softmax(s, -1), in[2].repeat_interleave(2, 1));
                    },
                    {q, k, v});
  CHECK_THROWS_WITH(CausalAttention(q, k, v, /*fused=*/true, scores),
                    Catch::Contains("no score soft-capping and no sliding window"));
}

TEST_CASE("grouped-query attention without repeats equals attention over repeated k and v") {
  torch::manual_seed(5);
  const torch::Tensor q = torch::randn({2, 6, 9, 4}, kF64), k = torch::randn({2, 2, 9, 4}, kF64),
                      v = torch::randn({2, 2, 9, 4}, kF64);
  CheckAgainstEager([](const auto& in) { return CausalAttention(in[0], in[1], in[2]); },
                    [](const auto& in) {
                      return CausalAttention(in[0], in[1].repeat_interleave(3, 1), in[2].repeat_interleave(3, 1));
                    },
                    {q, k, v});
  CHECK_THROWS_WITH(CausalAttention(q, torch::randn({2, 4, 9, 4}, kF64), torch::randn({2, 4, 9, 4}, kF64)),
                    Catch::Contains("query heads 6 are not a multiple of key/value heads 4"));
}

TEST_CASE("chunked cross-entropy equals cross_entropy of the whole logits, for any chunk count") {
  torch::manual_seed(6);
  const torch::Tensor hidden = torch::randn({10, 8}, kF64), weight = torch::randn({13, 8}, kF64);
  const torch::Tensor targets = torch::randint(0, 13, {10}, torch::kLong);
  for (int64_t chunks : {1, 3, 4, 10, 50}) {
    INFO(chunks << " chunks");
    CheckAgainstEager(
        [&](const auto& in) { return ChunkedCrossEntropy(in[0], in[1], targets, chunks, TensorParallel{}); },
        [&](const auto& in) { return torch::nn::functional::cross_entropy(torch::matmul(in[0], in[1].t()), targets); },
        {hidden, weight});
  }
  CHECK_THROWS_WITH(ChunkedCrossEntropy(hidden, torch::randn({13, 7}, kF64), targets, 2, TensorParallel{}),
                    Catch::Contains("are not [n, h] and [V, h]"));
  CHECK_THROWS_WITH(ChunkedCrossEntropy(hidden, weight, targets.narrow(0, 0, 9), 2, TensorParallel{}),
                    Catch::Contains("targets [9] for 10 tokens"));
}

// Gemma 2's final soft cap inside the chunked loss: fp64 (the by-tokens backward) against
// cross_entropy(cap·tanh(z/cap)); bf16 (the by-vocabulary backward) against the fp32 formula
// within bf16's rounding (2^-8 relative per operand; 3e-2 of the largest gradient).
TEST_CASE("chunked cross-entropy with a final soft cap equals cross_entropy of the capped logits") {
  torch::manual_seed(6);
  const torch::Tensor hidden = torch::randn({10, 8}, kF64) * 2, weight = torch::randn({13, 8}, kF64);
  const torch::Tensor targets = torch::randint(0, 13, {10}, torch::kLong);
  auto capped = [&](const auto& in) {
    return torch::nn::functional::cross_entropy(torch::tanh(torch::matmul(in[0], in[1].t()) / 3.0) * 3.0, targets);
  };
  for (int64_t chunks : {1, 3, 10}) {
    INFO(chunks << " chunks");
    CheckAgainstEager(
        [&](const auto& in) { return ChunkedCrossEntropy(in[0], in[1], targets, chunks, TensorParallel{}, 3.0); },
        capped, {hidden, weight});
  }
  const torch::Tensor h16 = hidden.to(torch::kBFloat16).requires_grad_(true), w16 = weight.to(torch::kBFloat16).requires_grad_(true);
  ChunkedCrossEntropy(h16, w16, targets, 3, TensorParallel{}, 3.0).backward();
  const torch::Tensor h32 = h16.detach().to(torch::kFloat).requires_grad_(true);
  const torch::Tensor w32 = w16.detach().to(torch::kFloat).requires_grad_(true);
  capped(std::vector<torch::Tensor>{h32, w32}).backward();
  CHECK((h16.grad().to(torch::kFloat) - h32.grad()).abs().max().item<double>() < 3e-2 * h32.grad().abs().max().item<double>());
  CHECK((w16.grad().to(torch::kFloat) - w32.grad()).abs().max().item<double>() < 3e-2 * w32.grad().abs().max().item<double>());
}

TEST_CASE("chunked cross-entropy keeps 12 B per token and no logits") {
  const int64_t n = 64, h = 16, v = 512;
  const torch::Tensor targets = torch::randint(0, v, {n}, torch::kLong);
  const int64_t kept = KeptBytes(
      [&](const auto& in) { return ChunkedCrossEntropy(in[0], in[1], targets, 8, TensorParallel{}); },
      {torch::randn({n, h}), torch::randn({v, h})});
  // hidden and weight are inputs (kept by reference); the fp32 log-sum-exp per token is new (the
  // targets are the caller's here).
  CHECK(kept == n * 4);
  CHECK(DefaultLossChunks(128'256, 4'096) == 32);
  CHECK(DefaultLossChunks(256, 192) == 2);
  CHECK(DefaultLossChunks(100, 4'096) == 1);
}

// OLMo 2's q/k norms under tensor parallelism: each rank's slice normalized with the whole width's
// statistics equals RmsNorm over the whole width, forward and backward, to fp64 rounding; on 4
// ranks holding each half twice (replicated key/value heads, each replica taking half of the
// upstream gradient) the replicas' gradients are half the whole one's, so their sum over the
// replicas is. A rank normalizing its slice alone differs by O(1).
TEST_CASE("RmsNormOverGroup on each rank's slice equals RmsNorm over the whole width, gradients too") {
  torch::manual_seed(5);
  const torch::TensorOptions f64 = torch::TensorOptions().dtype(torch::kDouble);
  const torch::Tensor x = torch::randn({3, 4, 8}, f64), w = torch::randn({8}, f64), g = torch::randn({3, 4, 8}, f64);
  const torch::Tensor xr = x.clone().requires_grad_(true), wr = w.clone().requires_grad_(true);
  const torch::Tensor ref = RmsNorm(xr, wr, 1e-6);
  (ref * g).sum().backward();
  CHECK((RmsNorm(x.narrow(-1, 0, 4), w.narrow(0, 0, 4), 1e-6) - ref.narrow(-1, 0, 4)).abs().max().item<double>() > 1e-3);
  for (int world : {2, 4}) {
    INFO("world " << world);
    const int replicas = world / 2;
    const std::vector<std::string> errors = testing::RunRanks(world, [&](int rank, Rendezvous& rdzv) {
      auto comm = rdzv.CreateWorld(CommBackend::kGloo);
      testing::Ok(comm.status());
      const int64_t begin = 4 * (rank / replicas);
      const torch::Tensor xs = x.narrow(-1, begin, 4).clone().requires_grad_(true);
      const torch::Tensor ws = w.narrow(0, begin, 4).clone().requires_grad_(true);
      const torch::Tensor out = RmsNormOverGroup(xs, ws, 1e-6, comm->get());
      (out * g.narrow(-1, begin, 4) / replicas).sum().backward();
      auto differs = [](const torch::Tensor& a, const torch::Tensor& b) { return (a - b).abs().max().item<double>(); };
      testing::Expect(differs(out, ref.narrow(-1, begin, 4)) < 1e-12, "output");
      testing::Expect(differs(xs.grad() * replicas, xr.grad().narrow(-1, begin, 4)) < 1e-12, "input gradient");
      testing::Expect(differs(ws.grad() * replicas, wr.grad().narrow(0, begin, 4)) < 1e-12, "weight gradient");
    });
    for (const std::string& e : errors) CHECK(e == "");
  }
}

}  // namespace
}  // namespace accel::exec
