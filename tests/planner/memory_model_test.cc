#include "planner/memory_model.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "common/units.h"
#include "planner/executor_activations.h"

namespace accel::planner {
namespace {

// Decimal gigabytes with one decimal, as the ZeRO paper prints them.
std::string Gb1(int64_t bytes) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f", static_cast<double>(bytes) / 1e9);
  return buffer;
}

// Bytes per parameter of a model-state total, for the Megatron table.
double PerParam(const ModelStateBytes& b, int64_t params) {
  return static_cast<double>(b.device_total() + b.host_total()) / static_cast<double>(params);
}

TEST_CASE("ZeRO paper example: psi = 7.5B, d = 64, K = 12 (120 / 31.4 / 16.6 / 1.9 GB)") {
  const int64_t psi = 7'500'000'000;
  ModelStateDtypes zero;  // 2-byte params and grads, K = 12 (fp32 master + m + v)
  zero.param_bytes = 2;
  zero.grad_bytes = 2;
  zero.master_bytes = 4;
  zero.grad_copy_bytes = 0;
  zero.optimizer_bytes = 8;
  const auto total = [&](int stage) {
    return ModelStateBytesPerRank(psi, zero, stage, 64, spec::Offload::kNone).device_total();
  };
  CHECK(total(0) == 120'000'000'000);
  CHECK(total(1) == 31'406'250'000);
  CHECK(total(2) == 16'640'625'000);
  CHECK(total(3) == 1'875'000'000);
  CHECK(Gb1(total(0)) == "120.0");
  CHECK(Gb1(total(1)) == "31.4");
  CHECK(Gb1(total(2)) == "16.6");
  CHECK(Gb1(total(3)) == "1.9");
}

TEST_CASE("Megatron-LM distributed optimizer bytes per parameter") {
  const int64_t d = 8, params = 8'000'000;
  SECTION("bf16 params + fp32 grads: 18 plain, 6 + 12/d sharded") {
    ModelStateDtypes t{2, 4, 4, 0, 8};
    CHECK(PerParam(ModelStateBytesPerRank(params, t, 0, d, spec::Offload::kNone), params) == 18.0);
    CHECK(PerParam(ModelStateBytesPerRank(params, t, 1, d, spec::Offload::kNone), params) ==
          6.0 + 12.0 / d);
  }
  SECTION("fp16 params + fp16 grads: 20 plain, 4 + 16/d sharded (accel's 16-bit policy)") {
    absl::StatusOr<ModelStateDtypes> t = ModelStateDtypesFor(2, ir::OPTIMIZER_KIND_ADAMW, 0.0);
    REQUIRE(t.ok());
    CHECK(PerParam(ModelStateBytesPerRank(params, *t, 0, d, spec::Offload::kNone), params) == 20.0);
    CHECK(PerParam(ModelStateBytesPerRank(params, *t, 1, d, spec::Offload::kNone), params) ==
          4.0 + 16.0 / d);
  }
  SECTION("fp32 params + fp32 grads: 16 plain, 8 + 8/d sharded") {
    absl::StatusOr<ModelStateDtypes> t = ModelStateDtypesFor(4, ir::OPTIMIZER_KIND_ADAMW, 0.0);
    REQUIRE(t.ok());
    CHECK(t->master_bytes == 0);
    CHECK(PerParam(ModelStateBytesPerRank(params, *t, 0, d, spec::Offload::kNone), params) == 16.0);
    CHECK(PerParam(ModelStateBytesPerRank(params, *t, 1, d, spec::Offload::kNone), params) ==
          8.0 + 8.0 / d);
  }
}

TEST_CASE("sharding stages 2 and 3, offload to host, optimizer variants") {
  absl::StatusOr<ModelStateDtypes> t = ModelStateDtypesFor(2, ir::OPTIMIZER_KIND_ADAMW, 0.0);
  REQUIRE(t.ok());
  const int64_t p = 1000, d = 4;
  ModelStateBytes s2 = ModelStateBytesPerRank(p, *t, 2, d, spec::Offload::kNone);
  CHECK(s2.parameters == 2000);
  // The reduced 16-bit gradient goes straight into the fp32 copy: no 16-bit shard is kept.
  CHECK(s2.gradients == 0);
  CHECK(s2.gradient_copy == 250 * 4);
  CHECK(s2.master_weights == 250 * 4);
  CHECK(s2.optimizer_states == 250 * 8);
  ModelStateBytes s3 = ModelStateBytesPerRank(1001, *t, 3, d, spec::Offload::kNone);
  CHECK(s3.parameters == 251 * 2);  // ceil(1001 / 4)
  ModelStateBytes off = ModelStateBytesPerRank(p, *t, 3, d, spec::Offload::kOptimizer);
  CHECK(off.parameters == 500);
  CHECK(off.master_weights == 0);
  CHECK(off.host_master_weights == 1000);
  CHECK(off.host_gradient_copy == 1000);
  CHECK(off.host_optimizer_states == 2000);
  ModelStateBytes all = ModelStateBytesPerRank(p, *t, 3, d, spec::Offload::kAll);
  CHECK(all.parameters == 0);
  CHECK(all.host_parameters == 500);
  CHECK(all.gradients == 0);  // reduced into the host's fp32 gradient copy
  // fp32 parameters: the host optimizer still steps on its own fp32 copy with an fp32 gradient,
  // and from stage 2 the reduced gradient shard lives only there (measured by
  // bench/memory_bench: stage 2 and 3 with offload within 1.5%).
  absl::StatusOr<ModelStateDtypes> fp32 = ModelStateDtypesFor(4, ir::OPTIMIZER_KIND_ADAMW, 0.0);
  ModelStateBytes off32 = ModelStateBytesPerRank(p, *fp32, 2, d, spec::Offload::kOptimizer);
  CHECK(off32.parameters == 4000);
  CHECK(off32.gradients == 0);
  CHECK(off32.host_master_weights == 1000);
  CHECK(off32.host_gradient_copy == 1000);
  CHECK(off32.host_optimizer_states == 2000);
  CHECK(ModelStateBytesPerRank(p, *fp32, 1, d, spec::Offload::kOptimizer).gradients == 4000);
  CHECK(ModelStateDtypesFor(4, ir::OPTIMIZER_KIND_SGD, 0.9)->optimizer_bytes == 4);
  CHECK(ModelStateDtypesFor(4, ir::OPTIMIZER_KIND_SGD, 0.0)->optimizer_bytes == 0);
  CHECK_FALSE(ModelStateDtypesFor(4, ir::OPTIMIZER_KIND_UNSPECIFIED, 0.0).ok());
}

TEST_CASE("DeepSpeed ZeRO-3 estimator: t5-3b on 1 node x 8 GPUs (docs 'Memory Requirements')") {
  SECTION("cold, rounded counts 2851e6 / 32e6: GPU 6.09 GiB as published") {
    const int64_t p = 2'851'000'000, l = 32'000'000;
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, false, false).gpu_bytes) == "6.09");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, true, false).gpu_bytes) == "0.78");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, true, true).gpu_bytes) == "0.12");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, true, true).cpu_bytes) == "71.69");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, true, true, false).cpu_bytes) == "127.45");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, true, false).cpu_bytes) == "63.72");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, false, false).cpu_bytes) == "1.43");
  }
  SECTION("live, exact counts 2,851,598,336 / 32,899,072: 6.10 GiB as published for the live model") {
    const int64_t p = 2'851'598'336, l = 32'899'072;
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, false, false).gpu_bytes) == "6.10");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, true, false).gpu_bytes) == "0.79");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, true, true).cpu_bytes) == "71.71");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, true, false).cpu_bytes) == "63.74");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, false, false).cpu_bytes) == "1.47");
    CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 8, 1, false, false, false).cpu_bytes) == "127.48");
  }
}

TEST_CASE("DeepSpeed ZeRO-3 estimator: T0_3B on 1 GPU (transformers DeepSpeed docs)") {
  // The rounded 2783M / 65M give 46.90; the exact counts give the published figures.
  const int64_t p = 2'783'958'016, l = 65'798'144;
  CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 1, 1, false, false).gpu_bytes) == "46.91");
  CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 1, 1, true, false).gpu_bytes) == "5.43");
  CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 1, 1, true, true).gpu_bytes) == "0.25");
  CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 1, 1, true, true).cpu_bytes) == "70.00");
  CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 1, 1, true, false).cpu_bytes) == "62.23");
  CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 1, 1, false, false).cpu_bytes) == "0.37");
  CHECK(FormatGiB2(DeepSpeedZero3Estimate(p, l, 1, 1, false, false, false).cpu_bytes) == "15.56");
  CHECK(DeepSpeedZero3Estimate(p, l, 1, 1, false, false).gpu_bytes == 4 * l + 18 * p);
  CHECK(FormatGiB2(DeepSpeedZero3Estimate(2'783'000'000, 65'000'000, 1, 1, false, false).gpu_bytes) ==
        "46.90");
}

TEST_CASE("DeepSpeed ZeRO-2 estimator: 2P + floor(18P/G), offload 2P") {
  const int64_t p = 2'851'000'000;
  // Published (docs, t5-3b, 8 GPUs): offload 5.31 GiB GPU, 127.45 GiB CPU.
  CHECK(FormatGiB2(DeepSpeedZero2Estimate(p, 8, 1, true).gpu_bytes) == "5.31");
  CHECK(FormatGiB2(DeepSpeedZero2Estimate(p, 8, 1, true).cpu_bytes) == "127.45");
  CHECK(FormatGiB2(DeepSpeedZero2Estimate(2'851'598'336, 8, 1, true).cpu_bytes) == "127.48");
  CHECK(FormatGiB2(DeepSpeedZero2Estimate(p, 8, 1, false).cpu_bytes) == "127.45");
  // No offload: current DeepSpeed's 2P + floor(18P/G) (derived: 11.28). The docs' 15.93 was
  // printed by the older 4P + 16P/G.
  CHECK(DeepSpeedZero2Estimate(p, 8, 1, false).gpu_bytes == 2 * p + 18 * p / 8);
  CHECK(FormatGiB2(DeepSpeedZero2Estimate(p, 8, 1, false).gpu_bytes) == "11.28");
  CHECK(DeepSpeedZero2Estimate(p, 4, 2, false).gpu_bytes == 2 * p + 18 * p / 8);
}

TEST_CASE("Accelerate estimate-memory table: bert-base-cased") {
  const int64_t total = 433'249'280, largest = 90'669'056;
  CHECK(AccelerateFormatBytes(static_cast<double>(total)) == "413.18 MB");
  absl::StatusOr<std::vector<AccelerateRow>> rows =
      AccelerateEstimateTable(total, largest, {"float32", "float16", "int8", "int4"});
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 4);
  CHECK(AccelerateFormatBytes((*rows)[0].largest_layer_bytes) == "86.47 MB");
  CHECK(AccelerateFormatBytes((*rows)[0].total_bytes) == "413.18 MB");
  CHECK(AccelerateFormatBytes(*(*rows)[0].training_bytes) == "1.61 GB");
  CHECK(AccelerateFormatBytes((*rows)[1].largest_layer_bytes) == "43.23 MB");
  CHECK(AccelerateFormatBytes((*rows)[1].total_bytes) == "206.59 MB");
  CHECK(AccelerateFormatBytes(*(*rows)[1].training_bytes) == "826.36 MB");
  CHECK(AccelerateFormatBytes((*rows)[2].total_bytes) == "103.29 MB");
  CHECK_FALSE((*rows)[2].training_bytes.has_value());
  CHECK(AccelerateFormatBytes((*rows)[3].total_bytes) == "51.65 MB");
  CHECK(AccelerateFormatBytes((*rows)[3].largest_layer_bytes) == "10.81 MB");
  CHECK_FALSE(AccelerateEstimateTable(total, largest, {"bfloat8"}).ok());
}

TEST_CASE("Accelerate byte formatting matches Python's round(x, 2) repr") {
  CHECK(AccelerateFormatBytes(12) == "12.0 bytes");
  CHECK(AccelerateFormatBytes(1536) == "1.5 KB");
  CHECK(AccelerateFormatBytes(3.0 * 1024 * 1024 * 1024) == "3.0 GB");
  CHECK(AccelerateFormatBytes(1024.0 * 1024 * 1024 * 1024 * 1024 * 2) == "2.0 PB");
}

TEST_CASE("Korthikanti et al. Table 2: GPT-3 175B check numbers, all six layouts") {
  ActivationShape s;
  s.seq_len = 2048;
  s.micro_batch = 1;
  s.hidden = 12288;
  s.heads = 96;
  s.ffn = 4 * 12288;
  s.tp = 1;
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kNone) == 2'868'903'936);
  s.tp = 8;
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kNone) == 578'813'952);
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kSelective) == 327'155'712);
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kFull) == 50'331'648);
  s.sequence_parallel = true;
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kNone) == 358'612'992);
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kSelective) == 106'954'752);
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kFull) == 50'331'648 / 8);
}

TEST_CASE("activations for ffn != 4h follow Megatron's s*b*h*(18 + 4*ffn/h)") {
  ActivationShape s;
  s.seq_len = 4096;
  s.micro_batch = 2;
  s.hidden = 4096;
  s.heads = 32;
  s.ffn = 11008;
  s.tp = 8;
  s.sequence_parallel = true;
  const int64_t sbh = 4096LL * 2 * 4096;
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kSelective) ==
        (18 * sbh + 4LL * 4096 * 2 * 11008) / 8);
  s.tp = 1;
  s.sequence_parallel = false;
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kSelective) == 18 * sbh + 4LL * 4096 * 2 * 11008);
}

TEST_CASE("logits, buckets, stage-3 gather, runtime overhead") {
  // fp32 for the loss + bf16 matmul output: 6 B per logit on this rank's vocab shard.
  CHECK(LogitsBytes(2048, 1, 50432, 2, 2) == 2048LL * 25216 * 6);
  CHECK(LogitsBytes(128, 4, 256, 1, 4) == 128LL * 4 * 256 * 4);
  CHECK(ReduceBucketBytes(589'824, 4) == 2 * 589'824 * 4);
  CHECK(GatheredParameterBytes(1000, 900, 2, 2) == 1000 * 4 + 900 * 2);
  CHECK(DefaultRuntimeOverheadBytes(ir::DEVICE_TYPE_CUDA) == 3 * kGiB / 2);
  CHECK(DefaultRuntimeOverheadBytes(ir::DEVICE_TYPE_CPU) == 256 * kMiB);
  CHECK(AllocatorReserveBytes(100 * kGiB, ir::DEVICE_TYPE_CUDA) == 5 * kGiB);
  CHECK(AllocatorReserveBytes(100 * kGiB, ir::DEVICE_TYPE_CPU) == 0);
  CHECK_FALSE(RuntimeOverheadReason(ir::DEVICE_TYPE_CUDA).empty());
}

TEST_CASE("device memory table") {
  CHECK(DeviceMemoryBytes("h100-80gb") == 81559 * kMiB);
  CHECK(DeviceMemoryBytes("a100-80gb") == 81920 * kMiB);
  CHECK(DeviceMemoryBytes("a100-40gb") == 40960 * kMiB);
  CHECK(DeviceMemoryBytes("h200") == 143771 * kMiB);
  CHECK(DeviceMemoryBytes("l4") == 23034 * kMiB);
  CHECK_FALSE(DeviceMemoryBytes("h100").has_value());
  CHECK_FALSE(DeviceMemoryBytes("").has_value());
  for (const char* name : {"a100-40gb", "a100-80gb", "h100-80gb", "h100-94gb", "h200", "l4",
                           "v100-16gb", "v100-32gb", "a10g"}) {
    INFO(name);
    CHECK(DeviceMemoryBytes(name).has_value());
    CHECK(std::find(DeviceModelNames().begin(), DeviceModelNames().end(), name) !=
          DeviceModelNames().end());
  }
}

}  // namespace
}  // namespace accel::planner

namespace accel::planner {
namespace {

ExecutorActivationShape ProbeShape(bool gpt2, bool bf16_compute, bool bf16_params) {
  ExecutorActivationShape s;
  s.gpt2 = gpt2;
  s.seq_len = 64;
  s.micro_batch = 8;
  s.hidden = 128;
  s.heads = 4;
  s.kv_heads = gpt2 ? 4 : 2;
  s.ffn = gpt2 ? 512 : 344;
  s.vocab = 256;
  s.bf16_compute = bf16_compute;
  s.bf16_params = bf16_params;
  return s;
}

// x = s*b*h = 65,536, f = s*b*ffn (GPT-2 262,144, Llama 176,128), k = s*b*kv*d = 32,768,
// S = b*a*s^2 = 131,072, n = 512, s^2 = 4,096. The lean blocks' terms (executor_activations.h);
// tests/executor/memory/activation_estimate_test.cc measures them exactly at smaller shapes.
TEST_CASE("accel executor activations per block: GPT-2 and Llama, fp32, bf16, bf16 params") {
  // 32x + 8f + 16n + 4S + s^2.
  CHECK(ExecutorActivationBytesPerLayer(ProbeShape(true, false, false)) == 4'730'880);
  // 20x + 4f + 16n + 2S + s^2 (no weight copies: executor/models/ops/linear.h).
  CHECK(ExecutorActivationBytesPerLayer(ProbeShape(true, true, false)) == 2'633'728);
  // 16x + 4f + 16n + 2S + s^2 (LayerNorm's statistics are fp32 for bf16 x too: ops/float_blocks.h).
  CHECK(ExecutorActivationBytesPerLayer(ProbeShape(true, true, true)) == 2'371'584);
  // 24x + 8k + 12f + 8n + 4S + s^2.
  CHECK(ExecutorActivationBytesPerLayer(ProbeShape(false, false, false)) == 4'481'024);
  // 16x + 4k + 6f + 8n + 2S + s^2.
  CHECK(ExecutorActivationBytesPerLayer(ProbeShape(false, true, false)) == 2'506'752);
  // 12x + 4k + 6f + 8n + 2S + s^2.
  CHECK(ExecutorActivationBytesPerLayer(ProbeShape(false, true, true)) == 2'244'608);
}

TEST_CASE("accel executor bytes per s*b*h at Llama-3-8B's and GPT-2's shapes") {
  ExecutorActivationShape llama;
  llama.gpt2 = false;
  llama.seq_len = 8192;
  llama.micro_batch = 1;
  llama.hidden = 4096;
  llama.heads = 32;
  llama.kv_heads = 8;
  llama.ffn = 14336;
  llama.vocab = 128256;
  llama.bf16_compute = llama.bf16_params = true;
  // 12x + 4k + 6f with k = x/4, f = 3.5x: 12 + 1 + 21.
  CHECK(ExecutorBytesPerSbh(llama) == Approx(34.0).margin(0.01));
  ExecutorActivationShape gpt2 = llama;
  gpt2.gpt2 = true;
  gpt2.kv_heads = gpt2.heads;
  gpt2.ffn = 4 * 4096;
  CHECK(ExecutorBytesPerSbh(gpt2) == Approx(32.0).margin(0.01));
  // fp32 parameters with bf16 autocast: the residual stream and the norms' inputs stay fp32.
  llama.bf16_params = false;
  CHECK(ExecutorBytesPerSbh(llama) == Approx(38.0).margin(0.01));
}

// Fused attention (SDPA, the plan's kernel on cuda) keeps an fp32 log-sum-exp per query instead of
// the scores and the mask (its output is the attention output the block counts anyway).
TEST_CASE("accel executor activations with fused attention replace the scores") {
  for (bool gpt2 : {true, false}) {
    for (auto [bf16_compute, bf16_params] : {std::pair{false, false}, {true, false}, {true, true}}) {
      ExecutorActivationShape math = ProbeShape(gpt2, bf16_compute, bf16_params);
      ExecutorActivationShape fused = math;
      fused.fused_attention = true;
      const int64_t c = bf16_compute ? 2 : 4;
      const int64_t scores = 131'072, mask = 4'096;
      const int64_t lse = 4 * math.micro_batch * math.heads * math.seq_len;
      INFO((gpt2 ? "gpt2" : "llama") << " bf16 compute " << bf16_compute << " params " << bf16_params);
      CHECK(ExecutorActivationBytesPerLayer(fused) == ExecutorActivationBytesPerLayer(math) - (c * scores + mask) + lse);
      // Selective recompute drops the same core either way.
      CHECK(ExecutorKeptBytesPerLayer(fused, RecomputeMode::kSelective) ==
            ExecutorKeptBytesPerLayer(math, RecomputeMode::kSelective));
    }
  }
  ExecutorActivationShape llama = ProbeShape(false, true, false);
  llama.fused_attention = true;
  CHECK_THAT(ExecutorActivationFormula(llama),
             Catch::StartsWith("16x + 4k + 6f + 8n + 4 B x b*a*s sdpa log-sum-exp "
                               "(accel executor, llama, bf16 compute, sdpa attention; 34.2 B per s*b*h"));
}

TEST_CASE("Korthikanti's activations without the score term under fused attention") {
  ActivationShape s;
  s.seq_len = 2048;
  s.micro_batch = 1;
  s.hidden = 12288;
  s.heads = 96;
  s.ffn = 4 * 12288;
  s.tp = 8;
  const int64_t selective = ActivationBytesPerLayer(s, RecomputeMode::kSelective);
  s.fused_attention = true;
  CHECK(ActivationBytesPerLayer(s, RecomputeMode::kNone) == selective);
}

TEST_CASE("accel executor output side: final norm, head input, targets and the chunked loss") {
  // GPT-2 fp32, V = 256 in ceil(256 / 128) = 2 chunks of 256 rows: kept 4x + 8n + 4x + 12n; the
  // backward: input gradient 4x, the weight-gradient accumulator 4Vh (chunks add in place), one chunk's
  // fp32 logits, turned into their gradient in place, 4 x 256 x 256, and 13n of targets.
  const int64_t x = 65'536, n = 512, vh = 256 * 128;
  const int64_t gpt2_kept = 8 * x + 20 * n;
  CHECK(ExecutorHeadKeptBytes(ProbeShape(true, false, false)) == gpt2_kept);
  CHECK(ExecutorHeadBytes(ProbeShape(true, false, false)) == gpt2_kept + 4 * x + 4 * vh + 4 * 256 * 256 + 13 * n);
  // With bf16 compute the head input is kept in bf16 and the backward runs by blocks of V / 2
  // vocabulary rows over all 512 tokens: the weight cast (2Vh), its fp32 gradient (4Vh), the fp32
  // input-gradient sum (4x), a block's logits in fp32 and bf16 (6 x 128 x 512), then the block's
  // input-gradient product and its fp32 conversion (6x).
  const int64_t bf16_kept = 4 * x + 8 * n + 2 * x + 12 * n;
  CHECK(ExecutorHeadKeptBytes(ProbeShape(true, true, false)) == bf16_kept);
  CHECK(ExecutorHeadBytes(ProbeShape(true, true, false)) ==
        bf16_kept + 2 * vh + 4 * vh + 4 * x + 6 * 128 * 512 + 6 * x + 13 * n);
  // Llama with bf16 parameters: 2x + 4n norm, 2x input, no weight copy, the gradient in bf16
  // (2Vh); 3 chunks set by hand: blocks of ceil(256 / 3) = 86 vocabulary rows.
  ExecutorActivationShape llama = ProbeShape(false, true, true);
  llama.loss_chunks = 3;
  const int64_t llama_kept = 2 * x + 4 * n + 2 * x + 12 * n;
  CHECK(ExecutorHeadKeptBytes(llama) == llama_kept);
  CHECK(ExecutorHeadBytes(llama) == llama_kept + 2 * vh + 4 * x + 6 * 86 * 512 + 6 * x + 13 * n);
  llama.loss_chunks = 16;
  CHECK(ExecutorHeadBytes(llama) == llama_kept + 2 * vh + 4 * x + 6 * 16 * 512 + 6 * x + 13 * n);
  CHECK_THAT(ExecutorActivationFormula(ProbeShape(true, true, false)),
             Catch::StartsWith("20x + 4f + 16n + 2S + s^2 (accel "
                               "executor, gpt2, bf16 compute; 36.1 B per s*b*h"));
}

}  // namespace
}  // namespace accel::planner
