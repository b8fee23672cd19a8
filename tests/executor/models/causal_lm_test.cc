#include "executor/models/causal_lm.h"

#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "executor/memory/counting_allocator.h"
#include "executor/train/autocast.h"
#include "planner/recompute_policy.h"

namespace accel::exec {
namespace {

ModelConfig TinyGpt2() {
  ModelConfig c;
  c.arch = ModelArch::kGpt2;
  c.hidden_size = 16;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 4;
  c.ffn_size = 64;
  c.vocab_size = 37;
  c.max_seq_len = 12;
  return c;
}

ModelConfig TinyLlama() {
  ModelConfig c;
  c.arch = ModelArch::kLlama;
  c.hidden_size = 24;
  c.num_layers = 3;
  c.num_heads = 6;
  c.num_kv_heads = 2;
  c.ffn_size = 40;
  c.vocab_size = 41;
  c.max_seq_len = 16;
  c.tie_embeddings = false;
  c.norm_eps = 1e-6;
  return c;
}

int64_t CountParameters(CausalLm& model) {
  int64_t n = 0;
  for (const auto& p : model.parameters()) n += p.numel();
  return n;
}

std::set<std::string> Names(CausalLm& model) {
  std::set<std::string> names;
  for (const auto& item : model.named_parameters()) names.insert(item.key());
  return names;
}

TEST_CASE("gpt2 parameter count matches 12h^2+13h per block") {
  ModelConfig c = TinyGpt2();
  auto model = BuildCausalLm(c, 1);
  REQUIRE(model.ok());
  const int64_t h = c.hidden_size;
  CHECK(CountParameters(**model) == c.vocab_size * h + c.max_seq_len * h + c.num_layers * (12 * h * h + 13 * h) + 2 * h);
}

TEST_CASE("llama parameter count matches the closed formula") {
  for (bool tied : {false, true}) {
    ModelConfig c = TinyLlama();
    c.tie_embeddings = tied;
    auto model = BuildCausalLm(c, 1);
    REQUIRE(model.ok());
    const int64_t h = c.hidden_size;
    const int64_t kv = c.num_kv_heads * h / c.num_heads;
    const int64_t block = 2 * h * h + 2 * h * kv + 3 * h * c.ffn_size + 2 * h;
    const int64_t total = (tied ? 1 : 2) * c.vocab_size * h + c.num_layers * block + h;
    CHECK(CountParameters(**model) == total);
  }
}

TEST_CASE("gpt2 parameters carry Hugging Face names and shapes") {
  ModelConfig c = TinyGpt2();
  auto model = BuildCausalLm(c, 1);
  REQUIRE(model.ok());
  std::set<std::string> expected = {"transformer.wte.weight", "transformer.wpe.weight",
                                    "transformer.ln_f.weight", "transformer.ln_f.bias"};
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = "transformer.h." + std::to_string(i) + ".";
    for (const char* s : {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias",
                          "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
                          "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"}) {
      expected.insert(p + s);
    }
  }
  CHECK(Names(**model) == expected);
  auto params = (*model)->named_parameters();
  // Conv1D stores [in, out].
  CHECK(params["transformer.h.0.attn.c_attn.weight"].sizes() == torch::IntArrayRef({16, 48}));
  CHECK(params["transformer.h.1.mlp.c_fc.weight"].sizes() == torch::IntArrayRef({16, 64}));
  CHECK(params["transformer.h.1.mlp.c_proj.weight"].sizes() == torch::IntArrayRef({64, 16}));
}

TEST_CASE("llama parameters carry Hugging Face names and shapes") {
  ModelConfig c = TinyLlama();
  auto model = BuildCausalLm(c, 1);
  REQUIRE(model.ok());
  std::set<std::string> expected = {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"};
  for (int i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    for (const char* s : {"self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
                          "self_attn.o_proj.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
                          "mlp.down_proj.weight", "input_layernorm.weight",
                          "post_attention_layernorm.weight"}) {
      expected.insert(p + s);
    }
  }
  CHECK(Names(**model) == expected);
  auto params = (*model)->named_parameters();
  CHECK(params["model.layers.0.self_attn.k_proj.weight"].sizes() == torch::IntArrayRef({8, 24}));
  CHECK(params["model.layers.2.mlp.down_proj.weight"].sizes() == torch::IntArrayRef({24, 40}));
}

TEST_CASE("initialization is deterministic in the seed and follows the documented scheme") {
  ModelConfig c = TinyGpt2();
  c.hidden_size = 64;
  c.ffn_size = 256;
  auto a = BuildCausalLm(c, 7);
  auto b = BuildCausalLm(c, 7);
  auto other = BuildCausalLm(c, 8);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(other.ok());
  auto pa = (*a)->named_parameters();
  auto pb = (*b)->named_parameters();
  auto po = (*other)->named_parameters();
  for (const auto& item : pa) CHECK(torch::equal(item.value(), pb[item.key()]));
  CHECK_FALSE(torch::equal(pa["transformer.wte.weight"], po["transformer.wte.weight"]));
  CHECK(pa["transformer.h.0.ln_1.weight"].eq(1).all().item<bool>());
  CHECK(pa["transformer.h.0.attn.c_attn.bias"].eq(0).all().item<bool>());
  const double fc_std = pa["transformer.h.0.mlp.c_fc.weight"].std().item<double>();
  const double proj_std = pa["transformer.h.0.mlp.c_proj.weight"].std().item<double>();
  CHECK(fc_std == Approx(0.02).epsilon(0.1));
  CHECK(proj_std == Approx(0.02 / std::sqrt(2.0 * c.num_layers)).epsilon(0.1));
}

TEST_CASE("future tokens do not change earlier logits") {
  for (ModelConfig c : {TinyGpt2(), TinyLlama()}) {
    auto model = BuildCausalLm(c, 3);
    REQUIRE(model.ok());
    torch::NoGradGuard no_grad;
    torch::Tensor tokens = torch::randint(c.vocab_size, {2, 10}, torch::kLong);
    torch::Tensor changed = tokens.clone();
    changed.index_put_({torch::indexing::Slice(), torch::indexing::Slice(6)},
                       (tokens.index({torch::indexing::Slice(), torch::indexing::Slice(6)}) + 1) % c.vocab_size);
    torch::Tensor a = (*model)->Forward(tokens);
    torch::Tensor b = (*model)->Forward(changed);
    CHECK(a.sizes() == torch::IntArrayRef({2, 10, c.vocab_size}));
    using torch::indexing::Slice;
    CHECK(torch::allclose(a.index({Slice(), Slice(0, 6)}), b.index({Slice(), Slice(0, 6)}), 0, 0));
    CHECK_FALSE(torch::allclose(a.index({Slice(), Slice(6)}), b.index({Slice(), Slice(6)})));
  }
}

TEST_CASE("invalid configurations are rejected with the field named") {
  ModelConfig c = TinyGpt2();
  c.num_heads = 5;
  auto model = BuildCausalLm(c, 1);
  REQUIRE_FALSE(model.ok());
  CHECK(model.status().message() == "model.num_heads 5 does not divide hidden_size 16");
  ModelConfig l = TinyLlama();
  l.num_kv_heads = 4;
  CHECK(BuildCausalLm(l, 1).status().message() == "model.num_kv_heads 4 does not divide num_heads 6");
}

TEST_CASE("forward returns finite fp32 logits") {
  ModelConfig c = TinyLlama();
  auto model = BuildCausalLm(c, 5);
  REQUIRE(model.ok());
  torch::NoGradGuard no_grad;
  torch::Tensor tokens = torch::randint(c.vocab_size, {2, 8}, torch::kLong);
  torch::Tensor ref = (*model)->Forward(tokens);
  CHECK(ref.scalar_type() == torch::kFloat);
  CHECK(torch::isfinite(ref).all().item<bool>());
}

// Loss and every parameter's gradient after one forward/backward of a fresh model (seed 3) with the
// given recompute modules; dropout-free models, so recompute must change nothing, bitwise.
// kept: the per-op outputs recomputed blocks keep (ir::Training.recompute_kept_outputs); the
// forward runs under `precision`'s autocast.
std::vector<torch::Tensor> LossAndGrads(const ModelConfig& c, const std::vector<std::string>& recompute,
                                        const std::vector<std::string>& kept = {},
                                        ComputePrecision precision = ComputePrecision::kFp32) {
  std::shared_ptr<CausalLm> model = *BuildCausalLm(c, 3);
  REQUIRE(model->SetRecomputeModules(recompute, kept).ok());
  torch::manual_seed(11);
  torch::Tensor tokens = torch::randint(c.vocab_size, {2, c.max_seq_len}, torch::kLong);
  torch::Tensor logits;
  {
    AutocastScope autocast(c10::kCPU, precision);
    logits = model->Forward(tokens).to(torch::kFloat);
  }
  torch::Tensor loss = torch::nn::functional::cross_entropy(logits.reshape({-1, c.vocab_size}),
                                                            tokens.roll(-1, 1).reshape({-1}));
  loss.backward();
  std::vector<torch::Tensor> out{loss.detach()};
  for (const torch::Tensor& p : model->parameters()) out.push_back(p.grad().clone());
  return out;
}

void CheckBitwiseEqual(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("tensor " << i);
    CHECK(torch::equal(a[i], b[i]));
  }
}

TEST_CASE("recompute of the modules the plan names leaves loss and gradients bitwise unchanged") {
  const ModelConfig gpt2 = TinyGpt2();
  const std::vector<torch::Tensor> gpt2_ref = LossAndGrads(gpt2, {});
  CheckBitwiseEqual(gpt2_ref, LossAndGrads(gpt2, {"transformer.h.0", "transformer.h.1"}));
  CheckBitwiseEqual(gpt2_ref, LossAndGrads(gpt2, {"transformer.h.0.attn.core", "transformer.h.1.attn.core"}));
  const ModelConfig llama = TinyLlama();
  const std::vector<torch::Tensor> llama_ref = LossAndGrads(llama, {});
  CheckBitwiseEqual(llama_ref, LossAndGrads(llama, {"model.layers.0", "model.layers.1", "model.layers.2"}));
  CheckBitwiseEqual(llama_ref, LossAndGrads(llama, {"model.layers.0.self_attn.core",
                                                    "model.layers.2.self_attn.core"}));
}

TEST_CASE("per-op recompute keeping any of a block's op outputs leaves loss and gradients bitwise unchanged") {
  ModelConfig qwen = TinyLlama();  // q/k/v biases (Qwen2)
  qwen.qkv_bias = true;
  for (const ModelConfig& c : {TinyGpt2(), TinyLlama(), qwen}) {
   for (ComputePrecision precision : {ComputePrecision::kFp32, ComputePrecision::kBf16}) {
    std::shared_ptr<CausalLm> model = *BuildCausalLm(c, 3);
    const std::vector<std::string> ops = model->BlockOps();
    std::vector<std::string> blocks;
    for (int64_t l = 0; l < c.num_layers; ++l) {
      blocks.push_back((c.arch == ModelArch::kGpt2 ? "transformer.h." : "model.layers.") + std::to_string(l));
    }
    const std::vector<torch::Tensor> ref = LossAndGrads(c, {}, {}, precision);
    // torchtitan's rule (odd matmuls and the core), every op, and each op alone.
    std::vector<std::vector<std::string>> keeps = {planner::OpPolicyKeptOutputs(c.arch == ModelArch::kGpt2), ops};
    for (const std::string& op : ops) keeps.push_back({op});
    for (const auto& kept : keeps) {
      INFO(ModelArchName(c.arch) << (c.qkv_bias ? " with q/k/v biases" : "")
                                 << (precision == ComputePrecision::kBf16 ? ", bf16 autocast" : "") << ", keeping "
                                 << kept.size() << " ops, first " << kept.front());
      CheckBitwiseEqual(ref, LossAndGrads(c, blocks, kept, precision));
    }
   }
  }
}

TEST_CASE("the executor's block ops are the planner's, in forward order") {
  for (const ModelConfig& c : {TinyGpt2(), TinyLlama()}) {
    std::vector<std::string> planner_ops;
    for (const planner::BlockOp& op : planner::BlockOpsOf(c.arch == ModelArch::kGpt2)) planner_ops.push_back(op.name);
    CHECK((*BuildCausalLm(c, 3))->BlockOps() == planner_ops);
  }
}

TEST_CASE("a kept output the block does not have is refused, naming the block's ops") {
  std::shared_ptr<CausalLm> model = *BuildCausalLm(TinyGpt2(), 3);
  CHECK(model->SetRecomputeModules({"transformer.h.0"}, {"mlp.c_fc", "mlp.gate_proj"}).message() ==
        "recompute kept output mlp.gate_proj is not an op of a gpt2 block (attn.c_attn, attn.core, attn.c_proj, "
        "mlp.c_fc, mlp.c_proj)");
}

TEST_CASE("recompute saves memory: full keeps block inputs, selective drops the attention scores") {
  InstallCountingCpuAllocator();
  ModelConfig c = TinyGpt2();
  c.num_layers = 4;
  c.max_seq_len = 64;
  auto kept = [&](const std::vector<std::string>& modules) {
    std::shared_ptr<CausalLm> model = *BuildCausalLm(c, 3);
    REQUIRE(model->SetRecomputeModules(modules).ok());
    torch::Tensor tokens = torch::randint(c.vocab_size, {2, c.max_seq_len}, torch::kLong);
    const int64_t before = LiveTensorBytes();
    torch::Tensor logits = model->Forward(tokens);
    return LiveTensorBytes() - before;
  };
  std::vector<std::string> full, selective;
  for (int l = 0; l < 4; ++l) {
    full.push_back("transformer.h." + std::to_string(l));
    selective.push_back(full.back() + ".attn.core");
  }
  const int64_t none = kept({});
  const int64_t sel = kept(selective);
  const int64_t all = kept(full);
  INFO("none " << none << " B, selective " << sel << " B, full " << all << " B");
  // Per layer selective drops the fp32 softmax output (4 B x 2x4x64x64) and the causal mask (64x64)
  // and keeps the CPU generator's state for the recompute (5056 B).
  CHECK(none - sel == 4 * (4 * 2 * 4 * 64 * 64 + 64 * 64 - 5056));
  CHECK(all < sel);
}

TEST_CASE("a recompute module the model does not have is refused, naming it") {
  std::shared_ptr<CausalLm> model = *BuildCausalLm(TinyGpt2(), 3);
  absl::Status s = model->SetRecomputeModules({"transformer.h.0", "model.layers.1"});
  CHECK(s.message() ==
        "recompute module model.layers.1 is not a block or attention core of this gpt2 model "
        "(blocks transformer.h.0 … transformer.h.1)");
  std::shared_ptr<CausalLm> llama = *BuildCausalLm(TinyLlama(), 3);
  CHECK(llama->SetRecomputeModules({"model.layers.3"}).message() ==
        "recompute module model.layers.3 is not a block or attention core of this llama model "
        "(blocks model.layers.0 … model.layers.2)");
}

}  // namespace
}  // namespace accel::exec
