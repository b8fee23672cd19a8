#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "common/diagnostics.h"
#include "common/units.h"
#include "planner/executor_activations.h"
#include "planner/memory_estimator.h"
#include "planner/model_params.h"
#include "planner/pass.h"
#include "planner/plan_context.h"

namespace accel::planner {
namespace {

ir::Model Llama7B() {
  ir::Model m;
  m.set_arch(ir::ARCHITECTURE_LLAMA);
  m.set_hidden_size(4096);
  m.set_num_layers(32);
  m.set_num_heads(32);
  m.set_num_kv_heads(32);
  m.set_head_dim(128);
  m.set_ffn_hidden_size(11008);
  m.set_vocab_size(32000);
  m.set_padded_vocab_size(32000);
  m.set_max_seq_len(4096);
  m.set_tie_word_embeddings(false);
  *m.mutable_parameters() = CountParameters(m);
  return m;
}

ir::Model Gpt2Small() {
  ir::Model m;
  m.set_arch(ir::ARCHITECTURE_GPT2);
  m.set_hidden_size(768);
  m.set_num_layers(12);
  m.set_num_heads(12);
  m.set_num_kv_heads(12);
  m.set_head_dim(64);
  m.set_ffn_hidden_size(3072);
  m.set_vocab_size(50257);
  m.set_padded_vocab_size(50304);
  m.set_max_seq_len(1024);
  m.set_tie_word_embeddings(true);
  *m.mutable_parameters() = CountParameters(m);
  return m;
}

struct Layout {
  int64_t pp = 1, dp_replicate = 1, dp_shard = 1, tp = 1;
  int64_t devices_per_node = 8;
  int64_t microbatches = 1;
};

// A plan as the passes before estimate-memory leave it, written by hand.
ir::Plan MakePlan(const ir::Model& model, const Layout& l, int64_t seq, int64_t micro_batch,
                  ir::Dtype param_dtype, int64_t sharding_stage,
                  ir::Recompute recompute, ir::DeviceType device_type,
                  int64_t device_memory) {
  ir::Plan plan;
  *plan.mutable_model() = model;
  plan.mutable_batch()->set_seq_len(seq);
  plan.mutable_batch()->set_micro_batch_size(micro_batch);
  plan.mutable_precision()->set_param_dtype(param_dtype);
  plan.mutable_precision()->set_compute_dtype(param_dtype);
  plan.mutable_precision()->set_reduce_dtype(ir::DTYPE_FP32);
  plan.mutable_training()->set_recompute(recompute);
  plan.mutable_training()->mutable_optimizer()->set_kind(ir::OPTIMIZER_KIND_ADAMW);
  const std::pair<const char*, int64_t> axes[] = {{"pp", l.pp},
                                                  {"dp_replicate", l.dp_replicate},
                                                  {"dp_shard", l.dp_shard},
                                                  {"cp", 1},
                                                  {"tp", l.tp}};
  for (const auto& [name, size] : axes) {
    ir::MeshAxis* axis = plan.mutable_mesh()->add_axes();
    axis->set_name(name);
    axis->set_size(size);
  }
  plan.mutable_pipeline()->set_schedule(ir::PIPELINE_SCHEDULE_1F1B);
  plan.mutable_pipeline()->set_microbatches(l.microbatches);
  for (const StageLayout& s : EvenStageLayouts(model.num_layers(), l.pp, ir::PIPELINE_SCHEDULE_1F1B, l.microbatches)) {
    ir::PipelineStage* st = plan.mutable_pipeline()->add_stages();
    st->set_index(s.index);
    st->set_layer_begin(s.layer_begin);
    st->set_layer_end(s.layer_end);
    st->set_has_embedding(s.has_embedding);
    st->set_has_lm_head(s.has_lm_head);
    st->set_max_inflight_microbatches(static_cast<int32_t>(s.inflight_microbatches));
  }
  ir::Sharding* sh = plan.mutable_sharding();
  sh->set_stage(sharding_stage);
  sh->set_degree(l.dp_shard);
  sh->set_offload(ir::OFFLOAD_NONE);
  sh->set_bucket_elements(model.hidden_size() * model.hidden_size());
  sh->set_prefetch_bucket_elements(model.hidden_size() * model.hidden_size() * 9 / 10);
  ir::Topology* t = plan.mutable_topology();
  t->set_nodes(1);
  t->set_devices_per_node(l.devices_per_node);
  t->set_world_size(l.pp * l.dp_replicate * l.dp_shard * l.tp);
  t->set_device_type(device_type);
  t->set_device_memory_bytes(device_memory);
  t->set_runtime_overhead_bytes(DefaultRuntimeOverheadBytes(device_type));
  return plan;
}

struct Ran {
  ir::Plan plan;
  std::vector<Diagnostic> diagnostics;
};

Ran RunPass(const ir::Plan& input, bool allow_not_fitting = false, bool sequence_parallel = false) {
  spec::JobSpec spec;
  spec.file = "job.yaml";
  spec.parallel.sequence_parallel = sequence_parallel;
  DiagnosticSink sink;
  PlanContext context(spec, sink);
  context.set_allow_not_fitting(allow_not_fitting);
  context.plan() = input;
  // The pass reads sequence parallelism from the plan's mesh (resolve-auto sets it from the spec).
  context.plan().mutable_mesh()->set_sequence_parallel(sequence_parallel);
  std::unique_ptr<Pass> pass = MakeEstimateMemoryPass();
  context.set_current_pass(pass->name());
  pass->Run(context);
  return {context.plan(), sink.diagnostics()};
}

int64_t SumTerms(const google::protobuf::RepeatedPtrField<ir::MemoryTerm>& terms) {
  int64_t sum = 0;
  for (const ir::MemoryTerm& t : terms) sum += t.bytes();
  return sum;
}

const ir::MemoryTerm* Find(const ir::MemoryEstimate& e, const std::string& category) {
  for (const ir::MemoryTerm& t : e.device()) {
    if (t.category() == category) return &t;
  }
  return nullptr;
}

// accel's executor-activation shape of a plan with bf16 parameters and compute, kv heads = heads.
ExecutorActivationShape Bf16Shape(const ir::Plan& plan, bool gpt2, int64_t seq, int64_t micro,
                                  int64_t hidden, int64_t heads, int64_t ffn) {
  ExecutorActivationShape s;
  s.gpt2 = gpt2;
  s.seq_len = seq;
  s.micro_batch = micro;
  s.hidden = hidden;
  s.heads = heads;
  s.kv_heads = heads;
  s.ffn = ffn;
  s.vocab = plan.model().padded_vocab_size();
  s.bf16_compute = true;
  s.bf16_params = true;
  return s;
}

TEST_CASE("a small gpt2 job fits on cpu: one estimate with every term, formula and source") {
  ir::Plan plan = MakePlan(Gpt2Small(), {}, 128, 4, ir::DTYPE_FP32, 0, ir::RECOMPUTE_NONE, ir::DEVICE_TYPE_CPU, 8 * kGiB);
  Ran r = RunPass(plan);
  CHECK(r.diagnostics.empty());
  REQUIRE(r.plan.memory_size() == 1);
  const ir::MemoryEstimate& e = r.plan.memory(0);
  CHECK(e.stage() == 0);
  CHECK(e.fits());
  CHECK(e.device_limit_bytes() == 8 * kGiB);
  CHECK(e.device_total_bytes() == SumTerms(e.device()));
  CHECK(e.host_total_bytes() == 0);
  // Parameters per rank: the exact count plus the padded vocabulary rows (50304 - 50257).
  const int64_t local = 124'439'808 + (50304 - 50257) * 768;
  REQUIRE(Find(e, "parameters") != nullptr);
  CHECK(Find(e, "parameters")->bytes() == local * 4);
  CHECK(Find(e, "gradients")->bytes() == local * 4);
  CHECK(Find(e, "optimizer_states")->bytes() == local * 8);
  CHECK(Find(e, "master_weights") == nullptr);  // fp32 params need no master copy
  // 12 layers x 1 microbatch x accel's executor, GPT-2 fp32 (planner/executor_activations.h):
  // 32x + 8f + 4S + 16n + s^2 with s 128, b 4, h 768, ffn 3072, a 12.
  const int64_t x = 128LL * 4 * 768, n = 128LL * 4;
  const int64_t per_layer = 32 * x + 8 * n * 3072 + 4 * 4LL * 12 * 128 * 128 + 16 * n + 128 * 128;
  CHECK(Find(e, "activations")->bytes() == 12 * per_layer);
  CHECK_THAT(Find(e, "activations")->source(), Catch::StartsWith("accel executor"));
  // Kept: final LayerNorm input 4x + statistics 8n, the head's input 4x, targets and log-sum-exp
  // 12n. The chunked loss backward (ceil(50304 / 768) = 66 chunks of 8 rows): input gradient 4x,
  // fp32 weight-gradient accumulator 4Vh, one chunk's fp32 logits 4 x 8 x V, 13n.
  CHECK(Find(e, "logits")->bytes() == 12 * x + 33 * n + 4 * 50304LL * 768 + 4 * 8 * 50304);
  CHECK(Find(e, "communication_buffers") == nullptr);  // no data parallelism
  CHECK(Find(e, "runtime_overhead")->bytes() == 256 * kMiB);
  for (const ir::MemoryTerm& t : e.device()) {
    INFO(t.category());
    CHECK_FALSE(t.formula().empty());
    CHECK_FALSE(t.source().empty());
  }
}

TEST_CASE("pipeline stages: embedding first, logits and the tied copy last, 1F1B in flight") {
  Layout l;
  l.pp = 4;
  l.dp_replicate = 2;
  l.microbatches = 8;
  ir::Plan plan = MakePlan(Gpt2Small(), l, 1024, 2, ir::DTYPE_BF16, 0, ir::RECOMPUTE_SELECTIVE, ir::DEVICE_TYPE_CUDA,
                           *DeviceMemoryBytes("a100-40gb"));
  Ran r = RunPass(plan);
  CHECK(r.diagnostics.empty());
  REQUIRE(r.plan.memory_size() == 4);
  const ModelParams p = BuildModelParams(Gpt2Small(), 1);
  const int64_t block = LocalCount(p.layers[0]);
  // Stage 0: embeddings + 3 blocks; stage 3: 3 blocks + ln_f + a copy of wte for the tied head.
  CHECK(Find(r.plan.memory(0), "parameters")->bytes() == (LocalCount(p.embedding) + 3 * block) * 2);
  CHECK(Find(r.plan.memory(3), "parameters")->bytes() ==
        (3 * block + LocalCount(p.head) + p.embedding[0].local_count) * 2);
  CHECK(Find(r.plan.memory(0), "logits") == nullptr);
  CHECK(Find(r.plan.memory(3), "logits") != nullptr);
  // tp = 1: accel's own executor formulas (planner/executor_activations.h), bf16 parameters.
  const ExecutorActivationShape s = Bf16Shape(r.plan, true, 1024, 2, 768, 12, 3072);
  const int64_t per_layer = ExecutorKeptBytesPerLayer(s, RecomputeMode::kSelective);
  for (int i = 0; i < 4; ++i) {
    INFO("stage " << i);
    CHECK(Find(r.plan.memory(i), "activations")->bytes() == 3 * (4 - i) * per_layer);
    CHECK(r.plan.memory(i).fits());
  }
  // Data parallel over 2 replicas: double-buffered fp32 buckets of h*h elements.
  CHECK(Find(r.plan.memory(1), "communication_buffers")->bytes() == 2 * 768 * 768 * 4);
}

TEST_CASE("Llama-2-7B on 80 GB: E0501 with breakdown and only suggestions that fit") {
  Layout l;
  l.dp_shard = 8;
  ir::Plan plan = MakePlan(Llama7B(), l, 4096, 4, ir::DTYPE_BF16, 1, ir::RECOMPUTE_NONE, ir::DEVICE_TYPE_CUDA,
                           *DeviceMemoryBytes("h100-80gb"));
  Ran r = RunPass(plan);
  SourceManager sources;
  INFO(RenderText(r.diagnostics, sources));
  REQUIRE(r.diagnostics.size() == 1);
  const Diagnostic& d = r.diagnostics[0];
  CHECK(d.code == "E0501");
  CHECK(d.field == "cluster.device_memory");
  CHECK(d.origin == "estimate-memory");
  const ir::MemoryEstimate& e = r.plan.memory(0);
  CHECK_FALSE(e.fits());
  CHECK(d.message == "stage 0 needs " + FormatBytes(e.device_total_bytes()) +
                         " per device but cluster.device_memory is 79.65 GiB");
  // One note per device term first, in order.
  REQUIRE(d.notes.size() > static_cast<size_t>(e.device_size()));
  for (int i = 0; i < e.device_size(); ++i) {
    CHECK(d.notes[i].message.rfind(e.device(i).category() + ": " + FormatBytes(e.device(i).bytes()), 0) == 0);
  }

  // Every suggestion re-estimated on a modified input really fits, and each note is one.
  absl::StatusOr<MemoryInputs> in = MemoryInputsFromPlan(plan, false);
  REQUIRE(in.ok());
  const std::vector<FitSuggestion> suggestions = SuggestChangesThatFit(*in);
  REQUIRE_FALSE(suggestions.empty());
  CHECK(d.notes.size() == static_cast<size_t>(e.device_size()) + suggestions.size());
  for (const FitSuggestion& s : suggestions) {
    INFO(s.field << " = " << s.value);
    MemoryInputs m = *in;
    if (s.field == "sharding.stage") m.sharding_stage = std::stoi(s.value);
    else if (s.field == "training.recompute") {
      m.recompute = s.value == "full" ? RecomputeMode::kFull : s.value == "op" ? RecomputeMode::kOp : RecomputeMode::kSelective;
    }
    else if (s.field == "data.micro_batch_size") m.micro_batch_size = std::stoi(s.value);
    else if (s.field == "parallel.tensor" || s.field == "parallel.pipeline") continue;  // below
    else if (s.field == "sharding.offload") m.offload = s.value == "all" ? spec::Offload::kAll : spec::Offload::kOptimizer;
    absl::StatusOr<std::vector<ir::MemoryEstimate>> again = EstimateMemory(m);
    REQUIRE(again.ok());
    int64_t peak = 0;
    for (const ir::MemoryEstimate& x : *again) {
      CHECK(x.fits());
      peak = std::max(peak, x.device_total_bytes());
    }
    CHECK(peak == s.peak_bytes);
    CHECK(s.peak_bytes <= in->device_memory_bytes);
  }
  // Sharding alone cannot absorb ~86 GB of attention activations at b = 4 without recompute;
  // recompute can.
  for (const FitSuggestion& s : suggestions) CHECK(s.field != "sharding.stage");
  const bool has_recompute =
      std::any_of(suggestions.begin(), suggestions.end(),
                  [](const FitSuggestion& s) { return s.field == "training.recompute"; });
  CHECK(has_recompute);
}

TEST_CASE("a suggestion is offered only when its re-estimate fits") {
  Layout l;
  l.dp_shard = 8;
  // Stage 0 with small activations: sharding to stage 1 (model states 20 → 6 B/param) fits.
  ir::Plan plan = MakePlan(Llama7B(), l, 1024, 1, ir::DTYPE_BF16, 0, ir::RECOMPUTE_SELECTIVE, ir::DEVICE_TYPE_CUDA,
                           *DeviceMemoryBytes("h100-80gb"));
  absl::StatusOr<MemoryInputs> in = MemoryInputsFromPlan(plan, false);
  REQUIRE(in.ok());
  std::vector<FitSuggestion> s = SuggestChangesThatFit(*in);
  auto has = [&s](const std::string& field) {
    return std::find_if(s.begin(), s.end(), [&](const FitSuggestion& x) { return x.field == field; }) != s.end();
  };
  REQUIRE(has("sharding.stage"));
  CHECK(std::find_if(s.begin(), s.end(), [](const FitSuggestion& x) {
          return x.field == "sharding.stage";
        })->value == "1");  // the smallest stage that fits
  // Recompute cannot remove 125 GiB of model states, and micro batch is already 1.
  CHECK_FALSE(has("training.recompute"));
  CHECK_FALSE(has("data.micro_batch_size"));
  // tp needs data parallel ranks to take: 8-way tp from dp_shard 8 leaves stage 0 replicated.
  for (const FitSuggestion& x : s) CHECK(x.peak_bytes <= in->device_memory_bytes);

  // With a tiny device nothing fits and the diagnostic says so.
  plan.mutable_topology()->set_device_memory_bytes(kGiB);
  Ran r = RunPass(plan);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].notes.back().message.rfind("no single change", 0) == 0);
}

TEST_CASE("allow_not_fitting records the estimate without an error") {
  Layout l;
  l.dp_shard = 8;
  ir::Plan plan = MakePlan(Llama7B(), l, 4096, 4, ir::DTYPE_BF16, 0, ir::RECOMPUTE_NONE, ir::DEVICE_TYPE_CUDA,
                           *DeviceMemoryBytes("h100-80gb"));
  Ran r = RunPass(plan, /*allow_not_fitting=*/true);
  CHECK(r.diagnostics.empty());
  REQUIRE(r.plan.memory_size() == 1);
  CHECK_FALSE(r.plan.memory(0).fits());
}

TEST_CASE("stage 3 with offload: host terms, gathered working set, sequence parallel") {
  Layout l;
  l.dp_shard = 4;
  l.tp = 2;
  ir::Plan plan = MakePlan(Llama7B(), l, 4096, 1, ir::DTYPE_BF16, 3, ir::RECOMPUTE_SELECTIVE, ir::DEVICE_TYPE_CUDA,
                           *DeviceMemoryBytes("a100-40gb"));
  plan.mutable_sharding()->set_offload(ir::OFFLOAD_OPTIMIZER);
  Ran r = RunPass(plan, false, /*sequence_parallel=*/true);
  REQUIRE(r.plan.memory_size() == 1);
  const ir::MemoryEstimate& e = r.plan.memory(0);
  CHECK(e.host_total_bytes() == SumTerms(e.host()));
  CHECK(e.host_size() == 3);  // master weights, fp32 gradient copy, optimizer states
  CHECK(Find(e, "optimizer_states") == nullptr);
  const ModelParams p = BuildModelParams(Llama7B(), 2);
  int64_t local = LocalCount(p.embedding) + LocalCount(p.head);
  for (const auto& b : p.layers) local += LocalCount(b);
  // No bf16 shard on the device: stage-3 gathers copy the host fp32 copy the optimizer steps.
  CHECK(Find(e, "parameters")->bytes() == 0);
  CHECK_THAT(Find(e, "parameters")->formula(), Catch::Contains("gathers copy the host fp32 copy"));
  int64_t host_optimizer = 0;
  for (const ir::MemoryTerm& t : e.host()) {
    if (t.category() == "optimizer_states") host_optimizer = t.bytes();
  }
  CHECK(host_optimizer == ShardedCount(local, 4) * 8);
  // accel's own tensors per tp rank (planner/executor_activations.h), with sequence parallel.
  ExecutorActivationShape s = Bf16Shape(r.plan, false, 4096, 1, 4096, 32, 11008);
  s.fused_attention = r.plan.model().attention_kernel() == ir::ATTENTION_KERNEL_SDPA;
  s.tp = 2;
  s.sequence_parallel = true;
  CHECK(Find(e, "activations")->bytes() == 32 * ExecutorKeptBytesPerLayer(s, RecomputeMode::kSelective));
  // Gathered largest unit (the 16,384,000-row vocab shard; its grad belongs to the block
  // backward phase), the prefetch of at least one whole unit and its shard-sized gather input,
  // then buckets.
  int64_t comm = 0;
  for (const ir::MemoryTerm& t : e.device()) {
    if (t.category() == "communication_buffers") comm += t.bytes();
  }
  const int64_t largest = std::max(LocalCount(p.layers[0]), LocalCount(p.embedding));
  CHECK(comm == GatheredParameterBytes(largest, std::max<int64_t>(4096LL * 4096 * 9 / 10, largest), 2, 0) +
                    ShardedCount(largest, 4) * 2 + ReduceBucketBytes(4096LL * 4096, 4));
  CHECK(e.fits());
  CHECK(r.diagnostics.empty());
}

// The memory benchmark's GPT-2 (bench/memory_bench: examples/specs/gpt2-mini_cpu4_zero2.yaml).
ir::Model Gpt2Mini() {
  ir::Model m;
  m.set_arch(ir::ARCHITECTURE_GPT2);
  m.set_hidden_size(128);
  m.set_num_layers(4);
  m.set_num_heads(4);
  m.set_num_kv_heads(4);
  m.set_head_dim(32);
  m.set_ffn_hidden_size(512);
  m.set_vocab_size(256);
  m.set_padded_vocab_size(256);
  m.set_max_seq_len(128);
  m.set_tie_word_embeddings(true);
  *m.mutable_parameters() = CountParameters(m);
  return m;
}

const ir::MemoryTerm* FindFormula(const ir::MemoryEstimate& e, const std::string& category,
                                  const std::string& text) {
  for (const ir::MemoryTerm& t : e.device()) {
    if (t.category() == category && t.formula().find(text) != std::string::npos) return &t;
  }
  return nullptr;
}

// The benchmark's GPT-2 over 4 CPU ranks (data_shard 4) at `stage`, fp32 parameters, bf16
// compute, s 64, b 8: its one stage's estimate.
ir::MemoryEstimate EstimateGpt2Mini(int64_t stage, ir::Recompute recompute) {
  Layout l;
  l.dp_shard = 4;
  l.devices_per_node = 4;
  ir::Plan plan = MakePlan(Gpt2Mini(), l, 64, 8, ir::DTYPE_FP32, stage, recompute, ir::DEVICE_TYPE_CPU, 4 * kGiB);
  plan.mutable_precision()->set_compute_dtype(ir::DTYPE_BF16);
  Ran r = RunPass(plan);
  REQUIRE(r.plan.memory_size() == 1);
  return r.plan.memory(0);
}

// accel's executor-activation shape of EstimateGpt2Mini's plans.
ExecutorActivationShape Gpt2MiniShape() {
  ExecutorActivationShape s;
  s.seq_len = 64;
  s.micro_batch = 8;
  s.hidden = 128;
  s.heads = 4;
  s.kv_heads = 4;
  s.ffn = 512;
  s.vocab = 256;
  s.bf16_compute = true;
  return s;
}

TEST_CASE("stage 3: the gathered unit's gradient is a backward-phase tensor") {
  // ZeRO-3: the benchmark's layout whose peak the executor reaches in the last block's
  // backward, with the head's tensors freed.
  const ir::MemoryEstimate none = EstimateGpt2Mini(3, ir::RECOMPUTE_NONE);
  const ir::MemoryEstimate full = EstimateGpt2Mini(3, ir::RECOMPUTE_FULL);
  const int64_t unit = LocalCount(BuildModelParams(Gpt2Mini(), 1).layers[0]);
  REQUIRE(unit == 198'272);  // 12h² + 13h: the largest unit is a block
  // The working set: the unit gathered, the next one prefetched, the gather input; the unit's
  // gradient only with full recompute, whose working term is a backward phase.
  const ir::MemoryTerm* gather = FindFormula(none, "communication_buffers", "largest unit");
  REQUIRE(gather != nullptr);
  CHECK(gather->bytes() == unit * 4 + unit * 4 + unit / 4 * 4);
  CHECK_THAT(gather->formula(), Catch::Contains("its grad: the block phase"));
  const ir::MemoryTerm* gather_full = FindFormula(full, "communication_buffers", "largest unit");
  REQUIRE(gather_full != nullptr);
  CHECK(gather_full->bytes() == gather->bytes() + unit * 4);
  // The block phase: the larger of the last block's forward transients and one block's backward
  // working memory + its output gradient + the unit's gradient + the tied embeddings' gradient
  // (wte 256 x 128 and wpe 128 x 128, whole from the head's backward to the embedding's), beyond
  // the whole head term.
  const ExecutorActivationShape s = Gpt2MiniShape();
  const int64_t tied = (256 + 128) * 128;
  const int64_t backward = ExecutorBlockBackwardBytes(s) + 64 * 8 * 128 * 4 + unit * 4 + tied * 4;
  const int64_t expected = std::max(ExecutorBlockForwardBytes(s), backward) - ExecutorHeadBytes(s);
  REQUIRE(expected > 0);
  const ir::MemoryTerm* phase = FindFormula(none, "activations", "the gathered unit's gradient");
  REQUIRE(phase != nullptr);
  CHECK(phase->bytes() == expected);
  CHECK_THAT(phase->formula(), Catch::Contains("the tied embeddings' gradient 196,608 B"));
  CHECK(FindFormula(full, "activations", "the gathered unit's gradient") == nullptr);
}

TEST_CASE("reduce buckets: the two the executor keeps live, in every recompute mode") {
  // The executor finishes every launched bucket but the newest before it allocates another
  // (executor/train/bucketed_sync.cc), so backward holds at most two h*h fp32 buckets whatever
  // it has reduced, with full recompute too, where nothing else would hide more.
  for (int64_t stage : {0, 2}) {
    for (ir::Recompute recompute : {ir::RECOMPUTE_NONE, ir::RECOMPUTE_SELECTIVE, ir::RECOMPUTE_FULL}) {
      CAPTURE(stage, ir::Recompute_Name(recompute));
      const ir::MemoryEstimate e = EstimateGpt2Mini(stage, recompute);
      int64_t bucket_terms = 0;
      for (const ir::MemoryTerm& t : e.device()) {
        if (t.category() == "communication_buffers") {
          CHECK_THAT(t.formula(), Catch::Contains("2 buckets x 16,384 elements x 4 B"));
          CHECK(t.bytes() == 2 * 128 * 128 * 4);
          ++bucket_terms;
        }
      }
      CHECK(bucket_terms == 1);
    }
  }
}

TEST_CASE("even stage layouts") {
  std::vector<StageLayout> s = EvenStageLayouts(10, 4, ir::PIPELINE_SCHEDULE_1F1B, 8);
  REQUIRE(s.size() == 4);
  CHECK(s[0].layer_end - s[0].layer_begin == 3);
  CHECK(s[1].layer_end - s[1].layer_begin == 3);
  CHECK(s[2].layer_end - s[2].layer_begin == 2);
  CHECK(s[3].layer_end == 10);
  CHECK(s[0].inflight_microbatches == 4);
  CHECK(s[3].inflight_microbatches == 1);
  CHECK(EvenStageLayouts(10, 4, ir::PIPELINE_SCHEDULE_GPIPE, 8)[3].inflight_microbatches == 8);
  CHECK(EvenStageLayouts(10, 1, ir::PIPELINE_SCHEDULE_1F1B, 8)[0].inflight_microbatches == 1);
}

TEST_CASE("malformed plans are internal errors, not crashes") {
  ir::Plan plan = MakePlan(Gpt2Small(), {}, 128, 4, ir::DTYPE_UNSPECIFIED, 0, ir::RECOMPUTE_NONE, ir::DEVICE_TYPE_CPU, 8 * kGiB);
  CHECK_FALSE(MemoryInputsFromPlan(plan, false).ok());
  Ran r = RunPass(plan);
  REQUIRE(r.diagnostics.size() == 1);
  CHECK(r.diagnostics[0].message.rfind("internal error", 0) == 0);
}

}  // namespace
}  // namespace accel::planner
