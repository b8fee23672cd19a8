// The planner's mixture-of-experts activation formula (planner/moe_activations.h) against what
// the executor's MoE blocks keep for backward, measured with the counting CPU allocator.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/memory/counting_allocator.h"
#include "executor/models/causal_lm.h"
#include "executor/train/autocast.h"
#include "executor/train/trainer.h"
#include "planner/executor_activations.h"
#include "planner/moe_activations.h"

namespace accel::exec {
namespace {

struct MoeCase {
  const char* name;
  bool bf16 = false;           // bf16 autocast over fp32 parameters
  int64_t shared_ffn = 0;      // one shared expert of this width, 0: none
  bool shared_gate = false;
  int64_t experts = 8;
  int64_t top_k = 2;
};

constexpr int64_t kSeq = 32, kBatch = 4, kHidden = 64, kHeads = 4, kKvHeads = 2, kExpertFfn = 48;

ModelConfig MoeConfigOf(const MoeCase& c, int64_t layers) {
  ModelConfig m;
  m.arch = ModelArch::kLlama;
  m.hidden_size = kHidden;
  m.num_layers = layers;
  m.num_heads = kHeads;
  m.num_kv_heads = kKvHeads;
  m.ffn_size = 172;
  m.vocab_size = 256;
  m.max_seq_len = kSeq;
  m.tie_embeddings = false;
  m.moe.num_experts = c.experts;
  m.moe.top_k = c.top_k;
  m.moe.expert_ffn_size = kExpertFfn;
  m.moe.shared_expert_ffn_size = c.shared_ffn;
  m.moe.shared_expert_gate = c.shared_gate;
  m.moe.aux_loss_coef = 0.01;
  return m;
}

// Live tensor bytes one forward (with the loss) leaves for backward, second of two rounds.
int64_t MoeBytesKept(const MoeCase& c, int64_t layers) {
  std::shared_ptr<CausalLm> model = *BuildCausalLm(MoeConfigOf(c, layers), 7);
  torch::Tensor batch = torch::randint(0, 256, {kBatch, kSeq + 1}, torch::kLong);
  LossFn loss_fn = CausalLmLoss();
  int64_t kept = 0;
  for (int round = 0; round < 2; ++round) {
    const int64_t before = LiveTensorBytes();
    torch::Tensor loss;
    {
      AutocastScope autocast(c10::kCPU, c.bf16 ? ComputePrecision::kBf16 : ComputePrecision::kFp32);
      loss = loss_fn(*model, batch);
    }
    kept = LiveTensorBytes() - before;
    loss.backward();
  }
  return kept;
}

// The planner's count for one MoE block of this shape on one rank: the block with its shared
// experts as a dense MLP (ExecutorKeptBytesPerLayer), plus the routed part.
int64_t Estimated(const MoeCase& c) {
  planner::ExecutorActivationShape s;
  s.gpt2 = false;
  s.seq_len = kSeq;
  s.micro_batch = kBatch;
  s.hidden = kHidden;
  s.heads = kHeads;
  s.kv_heads = kKvHeads;
  s.ffn = c.shared_ffn;
  s.vocab = 256;
  s.bf16_compute = c.bf16;
  planner::MoeActivationShape m;
  m.tokens = kSeq * kBatch;
  m.hidden = kHidden;
  m.experts = c.experts;
  m.top_k = c.top_k;
  m.expert_ffn = kExpertFfn;
  m.activation_bytes = c.bf16 ? 2 : 4;
  m.shared_expert_gate = c.shared_gate;
  m.margin = 1.0;  // one rank holds every expert: exactly T·k rows
  return planner::ExecutorKeptBytesPerLayer(s, planner::RecomputeMode::kNone) +
         planner::MoeLayerActivationBytes(m).kept;
}

TEST_CASE("MoE activation formula: one MoE block keeps what the planner estimates", "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  const std::vector<MoeCase> cases = {
      {"fp32, routed only", false, 0, false},
      {"bf16, routed only", true, 0, false},
      {"fp32, shared expert", false, 40, false},
      {"bf16, gated shared expert", true, 40, true},
      {"bf16, 16 experts top-4", true, 0, false, 16, 4},
  };
  for (const MoeCase& c : cases) {
    INFO(c.name);
    const int64_t measured = MoeBytesKept(c, 2) - MoeBytesKept(c, 1);
    const int64_t estimated = Estimated(c);
    INFO("measured " << measured << " B, estimated " << estimated << " B");
    // The dense part's tolerance (activation_estimate_test: RoPE tables, 1%) plus the router's
    // small tensors ([E] counts and fractions).
    CHECK(std::abs(measured - estimated) <= estimated / 100);
  }
}

}  // namespace
}  // namespace accel::exec
