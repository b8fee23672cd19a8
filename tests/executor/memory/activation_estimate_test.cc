// The planner's activation formulas for accel's own executor (planner/executor_activations.h)
// against what the executor really keeps for backward, counted by the counting CPU allocator.
// One transformer block's bytes are measured as the difference between a 2-block and a 1-block
// model after the same forward (everything outside the blocks cancels); the output side as the
// 1-block model's bytes minus one block.
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/communicator.h"
#include "executor/memory/counting_allocator.h"
#include "executor/models/tensor_parallel.h"
#include "executor/models/causal_lm.h"
#include "executor/models/ops/chunked_cross_entropy.h"
#include "executor/models/ops/weight_grad_store.h"
#include "executor/train/autocast.h"
#include "executor/train/trainer.h"
#include "planner/executor_activations.h"
#include "planner/recompute_policy.h"
#include "tests/executor/cpu_flags.h"

namespace accel::exec {
namespace {

// The 16-bit transient coefficients of planner/executor_activations.h (a block's forward and
// backward working memory) were fitted on an AVX2-only AMD EPYC VM (2026-11-27). On a CPU with
// bf16 instructions (CpuHasBf16Instructions) oneDNN's kernels allocate more scratch: the fits of
// the blocks before the lean ops, made on such a CPU, measured up to 40% more there (a GPT-2
// block with bf16 parameters: forward 114,688 B against 81,920 on the EPYC). On that kind of
// CPU an estimate may fall short of the measurement by up to 45%; on the fitting kind it stays
// within its stated tolerance, and may exceed the measurement by up to that tolerance.

// measured against estimated for 16-bit shapes whose stated tolerance is `percent`, on either
// kind of CPU (CpuHasBf16Instructions).
// Intel's AMX-BF16 (measured on a Xeon with AMX, 2026-11-29) allocates more still: the Llama
// bf16 block's forward transients measured 2.0-2.4 times the estimate (oneDNN's AMX kernels'
// scratch, 50-100 KB at these shapes), so the estimate may be up to 60% under there.
bool WithinBf16Tolerance(int64_t measured, int64_t estimated, int64_t percent) {
  static const bool native = CpuHasBf16Instructions();
  static const bool amx = CpuHasFlag("amx_bf16");
  const int64_t under = amx ? std::max<int64_t>(percent, 60) : native ? std::max<int64_t>(percent, 45) : percent;
  return measured - estimated <= measured * under / 100 &&
         estimated - measured <= measured * percent / 100;
}

struct Case {
  const char* name;
  planner::ExecutorActivationShape shape;
};

ModelConfig ConfigOf(const planner::ExecutorActivationShape& s, int64_t layers) {
  ModelConfig c;
  c.arch = s.gpt2 ? ModelArch::kGpt2 : ModelArch::kLlama;
  c.hidden_size = s.hidden;
  c.num_layers = layers;
  c.num_heads = s.heads;
  c.num_kv_heads = s.kv_heads;
  c.ffn_size = s.ffn;
  c.vocab_size = s.vocab;
  c.max_seq_len = s.seq_len;
  c.tie_embeddings = s.gpt2;
  c.head_dim = s.head_dim;
  c.qk_norm = s.qk_norm;
  // OLMo 2's and Gemma's block (the shape's flags; Gemma 2's values for the rest).
  c.block_norms = !s.post_norms ? BlockNorms::kPre : s.pre_norms ? BlockNorms::kPreAndPost : BlockNorms::kPost;
  c.qk_norm_full_width = s.qk_norm_full_width;
  c.norm_unit_offset = s.norm_unit_offset;
  c.gelu_tanh_mlp = s.gelu_tanh;
  c.attn_logit_softcapping = s.attn_softcapping ? 50.0 : 0.0;
  c.final_logit_softcapping = s.final_softcapping ? 30.0 : 0.0;
  if (s.norm_unit_offset) c.embedding_scale = std::sqrt(static_cast<double>(s.hidden));
  return c;
}

// Live tensor bytes that one forward (with the loss) leaves for backward. The second of two
// forward/backward rounds is measured, so lazily made state (gradients) is already there.
// The modules recompute `mode` checkpoints in a model of `layers` blocks, named as the planner
// names them (planner/model_params.h RecomputeModules).
std::vector<std::string> RecomputeModules(bool gpt2, int64_t layers, planner::RecomputeMode mode) {
  std::vector<std::string> modules;
  for (int64_t l = 0; mode != planner::RecomputeMode::kNone && l < layers; ++l) {
    const std::string block = (gpt2 ? "transformer.h." : "model.layers.") + std::to_string(l);
    if (planner::RecomputesBlocks(mode)) modules.push_back(block);
    else modules.push_back(block + (gpt2 ? ".attn.core" : ".self_attn.core"));
  }
  return modules;
}

// Sets the recompute of `mode` on `model`: its modules and, for per-op recompute, the outputs the
// planner keeps (planner/recompute_policy.h).
void SetRecompute(CausalLm& model, bool gpt2, int64_t layers, planner::RecomputeMode mode) {
  const std::vector<std::string> kept =
      mode == planner::RecomputeMode::kOp ? planner::OpPolicyKeptOutputs(gpt2) : std::vector<std::string>{};
  REQUIRE(model.SetRecomputeModules(RecomputeModules(gpt2, layers, mode), kept).ok());
}

int64_t BytesKeptByForward(const planner::ExecutorActivationShape& s, int64_t layers,
                           planner::RecomputeMode mode = planner::RecomputeMode::kNone,
                           const TensorParallel& tp = {}) {
  std::shared_ptr<CausalLm> model = *BuildCausalLm(ConfigOf(s, layers), 7, tp);
  if (s.bf16_params) model->to(torch::kBFloat16);
  SetRecompute(*model, s.gpt2, layers, mode);
  LossFn loss_fn = CausalLmLoss();
  torch::Tensor batch = torch::randint(0, s.vocab, {s.micro_batch, s.seq_len + 1}, torch::kLong);
  int64_t kept = 0;
  for (int round = 0; round < 2; ++round) {
    const int64_t before = LiveTensorBytes();
    torch::Tensor loss;
    {
      AutocastScope autocast(c10::kCPU, s.bf16_compute ? ComputePrecision::kBf16
                                                       : ComputePrecision::kFp32);
      loss = loss_fn(*model, batch);
    }
    kept = LiveTensorBytes() - before;
    loss.backward();
  }
  return kept;
}

planner::ExecutorActivationShape Shape(bool gpt2, bool bf16_compute, bool bf16_params) {
  planner::ExecutorActivationShape s;
  s.gpt2 = gpt2;
  s.seq_len = 32;
  s.micro_batch = 4;
  s.hidden = 64;
  s.heads = 4;
  s.kv_heads = gpt2 ? 4 : 2;
  s.ffn = gpt2 ? 256 : 172;
  s.vocab = 256;
  s.bf16_compute = bf16_compute || bf16_params;
  s.bf16_params = bf16_params;
  return s;
}

// Both families in fp32, with bf16 compute, and with bf16 parameters.
std::vector<Case> AllCases() {
  return {{"gpt2 fp32", Shape(true, false, false)},   {"gpt2 bf16", Shape(true, true, false)},
          {"gpt2 bf16 params", Shape(true, true, true)}, {"llama fp32", Shape(false, false, false)},
          {"llama bf16", Shape(false, true, false)},  {"llama bf16 params", Shape(false, true, true)}};
}

// Bytes one block's backward holds above what was live when it started, measured on a pipeline
// stage holding one block and nothing else, as a stage without the head runs it. The second of
// two rounds is measured, so the parameter gradients already exist.
int64_t BlockBackwardBytes(const planner::ExecutorActivationShape& s,
                           planner::RecomputeMode mode = planner::RecomputeMode::kNone) {
  StageSpan span{0, 1, /*has_embedding=*/false, /*has_head=*/false, {}};
  std::shared_ptr<CausalLm> model = *BuildCausalLm(ConfigOf(s, 1), 7, {}, {}, span);
  if (s.bf16_params) model->to(torch::kBFloat16);
  SetRecompute(*model, s.gpt2, 1, mode);
  const auto dtype = s.bf16_params ? torch::kBFloat16 : torch::kFloat;
  int64_t working = 0;
  for (int round = 0; round < 2; ++round) {
    torch::Tensor input = torch::randn({s.micro_batch, s.seq_len, s.hidden}).to(dtype).requires_grad_(true);
    torch::Tensor out;
    {
      AutocastScope autocast(c10::kCPU, s.bf16_compute ? ComputePrecision::kBf16 : ComputePrecision::kFp32);
      out = model->ForwardStage(input);
    }
    torch::Tensor grad = torch::ones_like(out);
    const int64_t before = LiveTensorBytes();
    ResetPeakTensorBytes();
    out.backward(grad);
    working = PeakTensorBytes() - before;
  }
  return working;
}

// Bytes one block's forward holds at its peak above what was live when it started plus what it
// keeps for backward (its transients), measured on a pipeline stage holding one block, as
// BlockBackwardBytes. The second of two rounds is measured.
int64_t BlockForwardBytes(const planner::ExecutorActivationShape& s, const TensorParallel& tp = {}) {
  StageSpan span{0, 1, /*has_embedding=*/false, /*has_head=*/false, {}};
  std::shared_ptr<CausalLm> model = *BuildCausalLm(ConfigOf(s, 1), 7, tp, {}, span);
  if (s.bf16_params) model->to(torch::kBFloat16);
  const auto dtype = s.bf16_params ? torch::kBFloat16 : torch::kFloat;
  const int64_t rows = tp.sequence_parallel && tp.enabled() ? s.seq_len / tp.size() : s.seq_len;
  int64_t transient = 0;
  for (int round = 0; round < 2; ++round) {
    torch::Tensor input = torch::randn({s.micro_batch, rows, s.hidden}).to(dtype).requires_grad_(true);
    torch::Tensor out;
    ResetPeakTensorBytes();
    {
      AutocastScope autocast(c10::kCPU, s.bf16_compute ? ComputePrecision::kBf16 : ComputePrecision::kFp32);
      out = model->ForwardStage(input);
    }
    // Live bytes now = start + kept: the peak beyond them is the transients.
    transient = PeakTensorBytes() - LiveTensorBytes();
    out.backward(torch::ones_like(out));
  }
  return transient;
}

// Variant 0 is `s`; then twice the tokens, the MLP, the heads, the width (and MLP), the batch,
// and the memory benchmark's GPT-2 shape (s 64, b 8, h 128, ffn 512).
planner::ExecutorActivationShape Variant(planner::ExecutorActivationShape s, int variant) {
  if (variant == 1) s.seq_len *= 2;
  if (variant == 2) s.ffn *= 2;
  if (variant == 3) s.heads *= 2, s.kv_heads *= 2;
  if (variant == 4) s.hidden *= 2, s.ffn *= 2;
  if (variant == 5) s.micro_batch *= 2;
  if (variant == 6) s.seq_len = 64, s.micro_batch = 8, s.hidden = 128, s.ffn = 512;
  return s;
}

// A tensor-parallel group of `size` ranks simulated in one process: every rank is assumed to
// hold this rank's values, so each collective produces tensors of the shapes and dtypes a real
// group would (all-reduce in place, all-gather repeats the input, reduce-scatter keeps one
// chunk). The bytes the model keeps per rank are then counted exactly; the values are not
// those of a real group and are never checked.
class MirrorCommunicator final : public Communicator {
 public:
  explicit MirrorCommunicator(int size) : size_(size), ranks_(size) {
    for (int r = 0; r < size; ++r) ranks_[r] = r;
  }
  int Rank() const override { return 0; }
  int Size() const override { return size_; }
  const std::vector<int>& GlobalRanks() const override { return ranks_; }
  std::string BackendName() const override { return "mirror"; }
  absl::Status AllReduce(at::Tensor&, ReduceOp) override { return absl::OkStatus(); }
  absl::Status AllGather(const at::Tensor& input, at::Tensor& output) override {
    output.view({size_, -1}).copy_(input.reshape({1, -1}).expand({size_, -1}));
    return absl::OkStatus();
  }
  absl::Status ReduceScatter(const at::Tensor& input, at::Tensor& output, ReduceOp) override {
    output.view({-1}).copy_(input.reshape({size_, -1})[0]);
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> AllReduceAsync(at::Tensor, ReduceOp) override {
    return absl::UnimplementedError("mirror");
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> AllGatherAsync(at::Tensor, at::Tensor) override {
    return absl::UnimplementedError("mirror");
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> ReduceScatterAsync(at::Tensor, at::Tensor,
                                                                  ReduceOp) override {
    return absl::UnimplementedError("mirror");
  }
  absl::Status AllToAll(const at::Tensor&, at::Tensor&, const std::vector<int64_t>&,
                        const std::vector<int64_t>&) override {
    return absl::UnimplementedError("mirror");
  }
  absl::Status Broadcast(at::Tensor&, int) override { return absl::OkStatus(); }
  absl::Status Send(const at::Tensor&, int, int) override { return absl::UnimplementedError("mirror"); }
  absl::StatusOr<std::unique_ptr<PendingWork>> SendAsync(at::Tensor, int, int) override {
    return absl::UnimplementedError("mirror");
  }
  absl::Status Recv(at::Tensor&, int, int) override { return absl::UnimplementedError("mirror"); }
  absl::Status Barrier() override { return absl::OkStatus(); }

 private:
  int size_;
  std::vector<int> ranks_;
};

TensorParallel MirrorTp(int size, bool sequence_parallel) {
  TensorParallel tp;
  tp.group = std::make_shared<MirrorCommunicator>(size);
  tp.sequence_parallel = sequence_parallel;
  return tp;
}

TEST_CASE("executor activation formula under tensor parallelism, per rank of a simulated group",
          "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  for (const Case& c : AllCases()) {
    for (int variant = 0; variant < 6; ++variant) {
      for (int tp : {2, 4}) {
        if (tp == 4 && variant != 3) continue;  // 4 divides the heads of variant 3 only
        for (bool sp : {false, true}) {
          for (planner::RecomputeMode mode : {planner::RecomputeMode::kNone, planner::RecomputeMode::kSelective,
                                              planner::RecomputeMode::kOp, planner::RecomputeMode::kFull}) {
            planner::ExecutorActivationShape s = Variant(c.shape, variant);
            const TensorParallel group = MirrorTp(tp, sp);
            const int64_t measured = BytesKeptByForward(s, 2, mode, group) - BytesKeptByForward(s, 1, mode, group);
            s.tp = tp;
            s.sequence_parallel = sp;
            const int64_t estimated = planner::ExecutorKeptBytesPerLayer(s, mode);
            INFO(c.name << " variant " << variant << " tp " << tp << (sp ? " sp" : "") << " mode "
                        << static_cast<int>(mode) << ": measured " << measured << " B, estimated "
                        << estimated << " B");
            if (c.shape.gpt2) {
              CHECK(measured == estimated);
            } else {
              // Llama's rotary tables, as for tp = 1.
              CHECK(std::abs(measured - estimated) <= measured / 100);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("executor activation formula: a block's backward working memory", "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  for (const Case& c : AllCases()) {
    for (int variant = 0; variant < 4; ++variant) {
      const planner::ExecutorActivationShape s = Variant(c.shape, variant);
      const int64_t measured = BlockBackwardBytes(s);
      const int64_t estimated = planner::ExecutorBlockBackwardBytes(s);
      INFO(c.name << " variant " << variant << ": measured " << measured << " B, estimated " << estimated << " B");
      if (!c.shape.bf16_compute) {
        CHECK(measured == estimated);
      } else {
        // The tolerances planner/executor_activations.h states: the peak moves between the MLP's
        // weight gradients and its activation gradients as the shape changes.
        const int64_t percent = c.shape.gpt2 ? (c.shape.bf16_params ? 20 : 26) : 12;
        CHECK(WithinBf16Tolerance(measured, estimated, percent));
      }
    }
  }
}

TEST_CASE("executor activation formula: a block's forward transients, per rank of a simulated group",
          "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  for (const Case& c : AllCases()) {
    for (int variant = 0; variant < 7; ++variant) {
      for (int tp : {1, 2, 4}) {
        if (tp == 4 && variant != 3) continue;  // 4 divides the heads of variant 3 only
        for (bool sp : {false, true}) {
          if (tp == 1 && sp) continue;
          planner::ExecutorActivationShape s = Variant(c.shape, variant);
          const int64_t measured = tp == 1 ? BlockForwardBytes(s) : BlockForwardBytes(s, MirrorTp(tp, sp));
          s.tp = tp;
          s.sequence_parallel = sp;
          const int64_t estimated = planner::ExecutorBlockForwardBytes(s);
          INFO(c.name << " variant " << variant << " tp " << tp << (sp ? " sp" : "") << ": measured " << measured
                      << " B, estimated " << estimated << " B");
          // The tolerances planner/executor_activations.h states.
          const int64_t percent = c.shape.gpt2 ? 0 : 12;
          if (const int64_t blocks = planner::ExecutorFloatBlockBytes(s); blocks > 0) {
            // GPT-2's 16-bit GELU and LayerNorm hold up to one fp32 block's working set at the peak.
            CHECK(measured <= estimated);
            CHECK(measured >= estimated - blocks);
          } else if (c.shape.bf16_compute) {
            CHECK(WithinBf16Tolerance(measured, estimated, percent));
          } else {
            CHECK(std::abs(measured - estimated) <= measured * percent / 100);
          }
        }
      }
    }
  }
}

TEST_CASE("executor activation formula: a recomputed block's backward peak", "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  for (const Case& c : AllCases()) {
    for (int variant = 0; variant < 7; ++variant) {
      for (planner::RecomputeMode mode : {planner::RecomputeMode::kFull, planner::RecomputeMode::kOp}) {
        const planner::ExecutorActivationShape s = Variant(c.shape, variant);
        const int64_t measured = BlockBackwardBytes(s, mode);
        const int64_t estimated = planner::ExecutorRecomputeWorkingBytes(s, mode);
        INFO(c.name << " variant " << variant << " mode " << static_cast<int>(mode) << ": measured " << measured
                    << " B, estimated " << estimated << " B");
        // Per-op: exact in the MLP's backward less the attention core's tensors, which the
        // attention's backward makes later; where that phase is the peak the estimate is above the
        // measurement by at most the core's bytes (planner/executor_activations.h).
        const int64_t core = mode == planner::RecomputeMode::kOp
                                 ? planner::ExecutorActivationBytesPerLayer(s) -
                                       planner::ExecutorKeptBytesPerLayer(s, planner::RecomputeMode::kSelective) +
                                       planner::kRecomputeRngStateBytes
                                 : 0;
        // The nearest estimate in that range (the estimate itself for full recompute).
        const int64_t nearest = std::clamp(measured, estimated - core, estimated);
        // fp32: exact but for the generator state and Llama's rotary tables; elsewhere the peak
        // moves between ops as the shape changes.
        if (!c.shape.bf16_compute) {
          CHECK(std::abs(measured - nearest) <= planner::kRecomputeRngStateBytes + 256);
        } else {
          CHECK(WithinBf16Tolerance(measured, nearest, 12));
        }
      }
    }
  }
}

TEST_CASE("executor activation formula: one block keeps what the planner estimates",
          "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  const std::vector<Case> cases = AllCases();
  for (const Case& c : cases) {
    INFO(c.name);
    const int64_t one = BytesKeptByForward(c.shape, 1);
    const int64_t measured = BytesKeptByForward(c.shape, 2) - one;
    const int64_t estimated = planner::ExecutorActivationBytesPerLayer(c.shape);
    INFO("measured " << measured << " B, estimated " << estimated << " B");
    // GPT-2 is exact. Llama's RoPE tables and repeated k/v depend on the head size in a way the
    // formula leaves out (at most a few hundred bytes per head here, < 1% of a block).
    CHECK(std::abs(measured - estimated) <= estimated / 100);
    if (c.shape.gpt2) CHECK(measured == estimated);
    // The output side: final norm, the head's input, targets and log-sum-exp (no logits). The
    // 1-block model keeps besides its block and head only the input side's positions (GPT-2's
    // int64 position ids, Llama's two fp32 rotary tables [s, head_dim]) and the 0-dim loss.
    const int64_t s = c.shape.seq_len;
    const int64_t input_side = (c.shape.gpt2 ? 8 * s : 2 * 4 * s * (c.shape.hidden / c.shape.heads)) + 4;
    const int64_t measured_head = one - measured - input_side;
    const int64_t estimated_head = planner::ExecutorHeadKeptBytes(c.shape);
    INFO("head measured " << measured_head << " B, estimated " << estimated_head << " B");
    CHECK(measured_head == estimated_head);
  }
}

// Bytes one block keeps after its input-gradient backward (B) with its weight gradients deferred
// into a store, as a zero-bubble stage without the head holds them until W: measured above what
// was live before its input was made, with the input, its gradient and the block's output released
// (the output gradient stays: the last linear's output gradient is that very tensor). The second of two rounds is measured, so the parameter gradients already exist.
int64_t PendingWeightGradBytes(const planner::ExecutorActivationShape& s) {
  StageSpan span{0, 1, /*has_embedding=*/false, /*has_head=*/false, {}};
  std::shared_ptr<CausalLm> model = *BuildCausalLm(ConfigOf(s, 1), 7, {}, {}, span);
  if (s.bf16_params) model->to(torch::kBFloat16);
  const auto dtype = s.bf16_params ? torch::kBFloat16 : torch::kFloat;
  int64_t pending = 0;
  for (int round = 0; round < 2; ++round) {
    const int64_t before = LiveTensorBytes();
    WeightGradStore store;
    {
      // The stage's received input, released after B as SEND_GRAD does: the store must not keep
      // it, nor its gradient, alive (an autograd node reached from a kept tensor would).
      torch::Tensor input = torch::randn({s.micro_batch, s.seq_len, s.hidden}).to(dtype).requires_grad_(true);
      torch::Tensor out;
      {
        AutocastScope autocast(c10::kCPU, s.bf16_compute ? ComputePrecision::kBf16 : ComputePrecision::kFp32);
        out = model->ForwardStage(input);
      }
      // The received output gradient: the last linear's (down_proj's) own, kept by the store.
      torch::Tensor grad = torch::ones_like(out);
      WeightGradDeferral defer(&store);
      out.backward(grad);
    }
    pending = LiveTensorBytes() - before;
    store.Run();
  }
  return pending;
}

TEST_CASE("executor activation formula: a block's pending weight gradients under zero-bubble deferral",
          "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  for (const Case& c : AllCases()) {
    for (int variant = 0; variant < 4; ++variant) {
      const planner::ExecutorActivationShape s = Variant(c.shape, variant);
      const int64_t measured = PendingWeightGradBytes(s);
      const int64_t estimated = planner::ExecutorPendingWeightGradBytesPerBlock(s);
      INFO(c.name << " variant " << variant << ": measured " << measured << " B, estimated " << estimated << " B");
      CHECK(measured == estimated);
    }
  }
}

TEST_CASE("executor activation formula: a Qwen3 block (q/k norms, head_dim apart from h / a) keeps what the "
          "planner estimates", "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  for (bool bf16 : {false, true}) {
    for (int64_t head_dim : {16, 32}) {
      planner::ExecutorActivationShape s = Shape(/*gpt2=*/false, bf16, false);
      s.head_dim = head_dim;  // h 64, 4 heads: 16 is h / a, 32 is Qwen3-0.6B's 2·h / a
      s.qk_norm = true;
      const int64_t measured = BytesKeptByForward(s, 2) - BytesKeptByForward(s, 1);
      const int64_t estimated = planner::ExecutorActivationBytesPerLayer(s);
      INFO((bf16 ? "bf16" : "fp32") << " head_dim " << head_dim << ": measured " << measured
                                    << " B, estimated " << estimated << " B");
      // As the Llama block above: exact but for the rotary tables' per-head terms (< 1%).
      CHECK(std::abs(measured - estimated) <= estimated / 100);
    }
  }
}

// OLMo 2: norms after the sublayers only (their inputs are the sublayers' outputs, c B), full-width
// q/k norms. Gemma 2: four x̂·(1 + w) norms keeping fp32 inputs, GeGLU, soft-capped scores (tanh's
// output kept) and logits, √h embeddings.
TEST_CASE("executor activation formula: OLMo 2 and Gemma 2 blocks keep what the planner estimates",
          "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  for (bool bf16 : {false, true}) {
    planner::ExecutorActivationShape olmo2 = Shape(/*gpt2=*/false, bf16, false);
    olmo2.pre_norms = false;
    olmo2.post_norms = true;
    olmo2.qk_norm = true;
    olmo2.qk_norm_full_width = true;
    planner::ExecutorActivationShape gemma2 = Shape(/*gpt2=*/false, bf16, false);
    gemma2.post_norms = true;
    gemma2.norm_unit_offset = true;
    gemma2.gelu_tanh = true;
    gemma2.attn_softcapping = true;
    gemma2.final_softcapping = true;
    gemma2.head_dim = 32;
    for (const auto& [name, s] : {std::pair<const char*, planner::ExecutorActivationShape>{"olmo2", olmo2},
                                  {"gemma2", gemma2}}) {
      const int64_t measured = BytesKeptByForward(s, 2) - BytesKeptByForward(s, 1);
      const int64_t estimated = planner::ExecutorActivationBytesPerLayer(s);
      INFO(name << (bf16 ? " bf16" : " fp32") << ": measured " << measured << " B, estimated " << estimated << " B");
      // As the Llama block above: exact but for the rotary tables' per-head terms (< 1%).
      CHECK(std::abs(measured - estimated) <= estimated / 100);
    }
  }
}

TEST_CASE("executor activation formula under selective, per-op and full recompute", "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  const std::vector<Case> cases = AllCases();
  for (const Case& c : cases) {
    for (planner::RecomputeMode mode :
         {planner::RecomputeMode::kSelective, planner::RecomputeMode::kOp, planner::RecomputeMode::kFull}) {
      INFO(c.name << ", mode " << static_cast<int>(mode));
      const int64_t measured = BytesKeptByForward(c.shape, 2, mode) - BytesKeptByForward(c.shape, 1, mode);
      const int64_t estimated = planner::ExecutorKeptBytesPerLayer(c.shape, mode);
      INFO("measured " << measured << " B, estimated " << estimated << " B");
      // Exact but for Llama's rotary tables (64 B per block here), as above.
      CHECK(std::abs(measured - estimated) <= (c.shape.gpt2 ? 0 : 256));
    }
  }
}

// The chunked loss's backward transients (ExecutorHeadBytes less ExecutorHeadKeptBytes), measured
// on ChunkedCrossEntropy alone as the head calls it: hidden [n, h] in the parameters' dtype,
// weight [V, h] a parameter whose gradient already exists (the second round is measured).
TEST_CASE("executor activation formula: the chunked loss's backward peak", "[memory][estimate]") {
  InstallCountingCpuAllocator();
  at::set_num_threads(1);
  for (const Case& c : AllCases()) {
    for (int64_t chunks : {1, 3, 0, -1}) {
      // -1: the default chunks with Gemma 2's final soft cap.
      planner::ExecutorActivationShape s = c.shape;
      s.vocab = 1024;
      s.final_softcapping = chunks < 0;
      s.loss_chunks = std::max<int64_t>(chunks, 0);
      const int64_t n = s.seq_len * s.micro_batch;
      const auto dtype = s.bf16_params ? torch::kBFloat16 : torch::kFloat;
      torch::Tensor weight = (torch::randn({s.vocab, s.hidden}) * 0.02).to(dtype).requires_grad_(true);
      const torch::Tensor targets = torch::randint(0, s.vocab, {n}, torch::kLong);
      const int64_t resolved = s.loss_chunks > 0 ? s.loss_chunks : DefaultLossChunks(s.vocab, s.hidden);
      int64_t measured = 0;
      for (int round = 0; round < 2; ++round) {
        torch::Tensor hidden = torch::randn({n, s.hidden}).to(dtype).requires_grad_(true);
        torch::Tensor loss;
        {
          AutocastScope autocast(c10::kCPU, s.bf16_compute ? ComputePrecision::kBf16 : ComputePrecision::kFp32);
          loss = ChunkedCrossEntropy(hidden, weight, targets, resolved, TensorParallel{}, s.final_softcapping ? 30.0 : 0.0);
        }
        const int64_t before = LiveTensorBytes();
        ResetPeakTensorBytes();
        loss.backward();
        measured = PeakTensorBytes() - before;
      }
      const int64_t estimated = planner::ExecutorHeadBytes(s) - planner::ExecutorHeadKeptBytes(s);
      INFO(c.name << " chunks " << resolved << (s.final_softcapping ? " capped" : "") << ": measured " << measured << " B, estimated " << estimated << " B");
      if (c.shape.bf16_compute) {
        CHECK(WithinBf16Tolerance(measured, estimated, 5));
      } else {
        CHECK(std::abs(measured - estimated) <= measured / 20);
      }
    }
  }
}

}  // namespace
}  // namespace accel::exec
