#include <catch2/catch.hpp>

#include "ir/plan_verifier.h"
#include "ir/plan_writer.h"
#include "planner_test_util.h"

namespace accel::planner {
namespace {

using testing::kBaseSpec;
using testing::PlanYaml;

std::vector<std::vector<int>> Groups(const ir::Plan& plan, const std::string& name) {
  for (const ir::ProcessGroupSet& set : plan.process_groups()) {
    if (set.name() != name) continue;
    std::vector<std::vector<int>> out;
    for (const ir::RankGroup& g : set.groups()) out.emplace_back(g.ranks().begin(), g.ranks().end());
    return out;
  }
  return {};
}

const ir::ResolvedValue* FindResolved(const ir::Plan& plan, const std::string& field) {
  for (const ir::ResolvedValue& r : plan.resolved()) {
    if (r.field() == field) return &r;
  }
  return nullptr;
}

TEST_CASE("Megatron rank groups for 16 ranks, tp 2, pp 4, dp 2 (docs/planner-facts.md §3)") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=4", "cluster.nodes=2",
                                      "cluster.devices_per_node=8"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  CHECK(Groups(plan, "tp") == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7},
                                                            {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(Groups(plan, "dp") == std::vector<std::vector<int>>{{0, 2}, {1, 3}, {4, 6}, {5, 7},
                                                            {8, 10}, {9, 11}, {12, 14}, {13, 15}});
  CHECK(Groups(plan, "pp") ==
        std::vector<std::vector<int>>{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  CHECK(Groups(plan, "world").size() == 1);
  CHECK(plan.ranks(13).node() == 1);
  CHECK(plan.ranks(13).local_rank() == 5);
  CHECK(plan.ranks(13).stage() == 3);
  CHECK(planned.result.verifier_violations.empty());
}

TEST_CASE("the auto degree takes the leftover ranks and says why") {
  auto planned = PlanYaml(kBaseSpec);
  REQUIRE(planned.result.ok);
  const ir::ResolvedValue* r = FindResolved(planned.result.plan, "parallel.data_replicate");
  REQUIRE(r != nullptr);
  CHECK(r->value() == "8");
  CHECK(r->reason() == "leftover ranks: world size 16 / (dp_shard(1) * tp(2) * pp(1)) = 8");
  CHECK(r->pass() == "resolve-auto");
}

TEST_CASE("degrees that do not multiply to the world size show the arithmetic") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.data_replicate=4"});
  CHECK_FALSE(planned.result.ok);
  CHECK(planned.result.last_pass == "resolve-auto");
  CHECK(planned.diagnostics ==
        "job.yaml:18:1: error[E0401]: parallel degrees do not multiply to the world size: "
        "dp_replicate(4) * dp_shard(1) * tp(2) * pp(1) = 8 != 16 [resolve-auto]\n"
        " parallel:\n"
        " ^\n"
        "job.yaml:23:21: note: world size = cluster.nodes(2) * cluster.devices_per_node(8) = 16\n"
        "note: set one degree to auto to give it the leftover ranks\n");
}

TEST_CASE("an auto degree with no integer value is an error") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.tensor=3"});
  CHECK_FALSE(planned.result.ok);
  CHECK(planned.diagnostics.find("error[E0401]: world size 16 is not divisible by dp_shard(1) * "
                                 "tp(3) * pp(1) = 3, so data_replicate: auto has no integer "
                                 "value") != std::string::npos);
}

TEST_CASE("at most one parallel degree may be auto") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.tensor=auto"});
  CHECK_FALSE(planned.result.ok);
  CHECK(planned.result.last_pass == "validate-spec");
  CHECK(planned.diagnostics.find("error[E0402]: at most one parallel degree may be auto, but 2 "
                                 "are: data_replicate, tensor") != std::string::npos);
}

TEST_CASE("tensor degree must divide the heads and kv heads") {
  auto heads = PlanYaml(kBaseSpec, {"parallel.tensor=16", "parallel.data_replicate=1"});
  CHECK(heads.diagnostics.find("error[E0403]: tensor degree 16 does not divide num_heads 8") !=
        std::string::npos);
  CHECK(heads.diagnostics.find("job.yaml:7:14: note: num_heads set here") != std::string::npos);
  // 12 heads over 4 key/value heads: tp 6 divides the heads but neither divides nor is a
  // multiple of the key/value heads.
  auto kv = PlanYaml(kBaseSpec, {"model.hidden_size=768", "model.num_heads=12", "parallel.tensor=6",
                                 "parallel.data_replicate=1", "cluster.nodes=1", "cluster.devices_per_node=6"});
  CHECK(kv.diagnostics.find("error[E0404]: tensor degree 6 neither divides num_kv_heads 4 nor is a "
                            "multiple of it") != std::string::npos);
}

TEST_CASE("context parallelism: ring needs 2 * cp chunks, Ulysses heads per tensor rank divisible by cp") {
  auto ring = PlanYaml(kBaseSpec, {"parallel.context=4", "data.seq_len=500"});
  CHECK(ring.diagnostics.find("error[E0417]: context degree 4 needs seq_len divisible by 2 * cp = 8, but "
                              "seq_len is 500") != std::string::npos);
  auto heads = PlanYaml(kBaseSpec, {"parallel.context=4", "parallel.context_method=ulysses"});
  INFO(heads.diagnostics);
  CHECK(heads.diagnostics.find("error[E0417]: context_method ulysses splits the heads of each tensor rank "
                               "over context 4, but num_kv_heads per tensor rank is 2 (num_kv_heads 4 / "
                               "tensor 2)") != std::string::npos);
  CHECK(heads.diagnostics.find("job.yaml:8:17: note: num_kv_heads set here") != std::string::npos);
  auto fits = PlanYaml(kBaseSpec, {"parallel.context=2", "parallel.context_method=ulysses"});
  INFO(fits.diagnostics);
  REQUIRE(fits.result.ok);
  const ir::ContextParallel& cp = fits.result.plan.mesh().context_parallel();
  CHECK(cp.method() == ir::CONTEXT_PARALLEL_METHOD_ULYSSES);
  CHECK(cp.chunks() == 2);
  CHECK(Groups(fits.result.plan, "cp").size() == 8);
}

TEST_CASE("a tensor degree above the key/value heads replicates each head on tp / kv ranks") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.tensor=8"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  CHECK(plan.model().kv_head_replicas() == 2);
  CHECK(Groups(plan, "tp_kv") == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7},
                                                               {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  const ir::ResolvedValue* r = FindResolved(plan, "model.kv_head_replicas");
  REQUIRE(r != nullptr);
  CHECK(r->reason() == "tensor degree 8 exceeds num_kv_heads 4: each key/value head is held by 2 "
                       "tensor-parallel ranks, its projection gradients summed over them");
  // k_proj [4 heads x 64, 512]: one head (64 rows) per rank, replicated twice.
  const ir::Parameter& k = plan.sharding().units(1).parameters(1);
  REQUIRE(k.name() == "model.layers.0.self_attn.k_proj.weight");
  CHECK(k.tp_replicas() == 2);
  CHECK(k.local_count() == 64 * 512);
  CHECK(plan.sharding().units(1).parameters(0).tp_replicas() == 0);  // q_proj: split, not replicated
  CHECK(ir::PlanSummary(plan).find("heads 8 (kv 4, each on 2 tp ranks)") != std::string::npos);
  CHECK(planned.result.verifier_violations.empty());
  // tp 4 divides the 4 key/value heads: nothing is replicated and there is no tp_kv group.
  auto split = PlanYaml(kBaseSpec, {"parallel.tensor=4"});
  REQUIRE(split.result.ok);
  CHECK(split.result.plan.model().kv_head_replicas() == 0);
  CHECK(Groups(split.result.plan, "tp_kv").empty());
}

TEST_CASE("tensor degree must divide ffn_hidden_size, and seq_len under sequence parallelism") {
  auto ffn = PlanYaml(kBaseSpec, {"model.ffn_hidden_size=1377"});
  CHECK(ffn.diagnostics.find("error[E0421]: tensor degree 2 does not divide ffn_hidden_size 1377") !=
        std::string::npos);
  CHECK(ffn.diagnostics.find("--set model.ffn_hidden_size=1377: note: ffn_hidden_size set here") !=
        std::string::npos);
  auto seq = PlanYaml(kBaseSpec, {"parallel.sequence_parallel=true", "data.seq_len=511"});
  CHECK(seq.diagnostics.find("error[E0420]: sequence parallelism shards the sequence over tp = 2, but "
                             "seq_len 511 does not divide by it") != std::string::npos);
  CHECK(seq.diagnostics.find("note: seq_len set here") != std::string::npos);
  auto fine = PlanYaml(kBaseSpec, {"parallel.sequence_parallel=true"});
  CHECK(fine.result.ok);
  CHECK(fine.result.plan.mesh().sequence_parallel());
  CHECK_FALSE(PlanYaml(kBaseSpec, {}).result.plan.mesh().sequence_parallel());
}

TEST_CASE("layers must cover the pipeline stages") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=8", "parallel.tensor=1",
                                      "model.num_layers=4"});
  CHECK(planned.diagnostics.find("error[E0405]: pipeline degree 8 exceeds num_layers 4: every "
                                 "stage needs at least one layer") != std::string::npos);
}

TEST_CASE("batch arithmetic is exact (docs/planner-facts.md §2)") {
  // 64 != 4 * 8 * 1: explicit accumulation that does not match.
  auto mismatch = PlanYaml(kBaseSpec, {"data.micro_batch_size=4", "data.global_batch_size=64",
                                       "data.grad_accum_steps=1"});
  CHECK(mismatch.diagnostics.find("error[E0406]: global_batch_size 64 != micro_batch_size(4) * "
                                  "dp(8) * grad_accum_steps(1) = 32") != std::string::npos);
  // 256 with micro 2 on 18 data-parallel ranks: 256 != 2 * 18 * 7 (= 252).
  auto indivisible = PlanYaml(kBaseSpec, {"cluster.nodes=1", "cluster.devices_per_node=36",
                                          "data.global_batch_size=256"});
  CHECK(indivisible.diagnostics.find(
            "error[E0406]: global_batch_size 256 is not a multiple of micro_batch_size(2) * "
            "dp(18) = 36: 256 != 2 * 18 * 7 (= 252)") != std::string::npos);
  // Derived accumulation.
  auto derived = PlanYaml(kBaseSpec, {"data.global_batch_size=64"});
  REQUIRE(derived.result.ok);
  CHECK(derived.result.plan.batch().grad_accum_steps() == 4);
  CHECK(FindResolved(derived.result.plan, "data.grad_accum_steps")->reason() ==
        "global_batch_size(64) / (micro_batch_size(2) * dp(8)) = 4");
  CHECK(derived.result.plan.batch().tokens_per_step() == 64 * 512);
}

TEST_CASE("1F1B needs at least as many microbatches as stages") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=4", "data.grad_accum_steps=2"});
  CHECK(planned.diagnostics.find("error[E0407]: the 1f1b schedule needs at least as many "
                                 "microbatches as pipeline stages: 2 microbatches < pp(4)") !=
        std::string::npos);
  auto gpipe = PlanYaml(kBaseSpec, {"parallel.pipeline=4", "data.grad_accum_steps=2",
                                    "parallel.pipeline_schedule=gpipe"});
  CHECK(gpipe.result.ok);
}

TEST_CASE("pipeline microbatches default to 4 per stage with the bubble as reason") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=2"});
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  CHECK(plan.pipeline().microbatches() == 8);
  CHECK(FindResolved(plan, "data.grad_accum_steps")->reason() ==
        "both batch fields are auto: 4 * pp(2) microbatches keep the pipeline bubble "
        "(p-1)/(m+p-1) at 11.1%");
  CHECK(plan.pipeline().bubble_fraction() == Approx(1.0 / 9.0));
}

TEST_CASE("cross-field precision and sharding rules") {
  auto scaling = PlanYaml(kBaseSpec, {"precision.compute=bf16", "precision.loss_scaling=dynamic"});
  CHECK(scaling.diagnostics.find("error[E0408]: loss scaling 'dynamic' is only needed with fp16; "
                                 "compute dtype is bf16") != std::string::npos);
  auto offload = PlanYaml(kBaseSpec, {"sharding.offload=optimizer"});
  CHECK(offload.diagnostics.find("error[E0409]: offload 'optimizer' needs sharding stage >= 1, "
                                 "but sharding.stage is 0") != std::string::npos);
  auto hybrid = PlanYaml(kBaseSpec, {"sharding.stage=3", "sharding.hybrid=true",
                                     "parallel.data_replicate=1", "parallel.data_shard=auto"});
  CHECK(hybrid.diagnostics.find("error[E0410]: hybrid sharding replicates shards across "
                                "data_replicate, but data_replicate is 1") != std::string::npos);
  auto seq = PlanYaml(kBaseSpec, {"data.seq_len=2048"});
  CHECK(seq.diagnostics.find("error[E0411]: seq_len 2048 exceeds the model's max_seq_len 1024") !=
        std::string::npos);
}

TEST_CASE("tensor parallelism across nodes is a warning, not an error") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.tensor=4", "cluster.devices_per_node=2",
                                      "cluster.nodes=8"});
  INFO(planned.diagnostics);
  CHECK(planned.result.ok);
  CHECK(planned.diagnostics.find("warning[W0401]: tensor-parallel groups of 4 ranks span 2 "
                                 "nodes (devices_per_node is 2)") != std::string::npos);
  REQUIRE(planned.result.plan.notes_size() >= 1);
}

TEST_CASE("vocabulary is padded to a multiple of 128 * tp, reported as a note") {
  // Megatron: GPT-2's 50257 -> 50432 at tp = 2.
  auto planned = PlanYaml(kBaseSpec, {"model.vocab_size=50257"});
  REQUIRE(planned.result.ok);
  CHECK(planned.result.plan.model().padded_vocab_size() == 50432);
  CHECK(planned.diagnostics.find("note: vocab_size 50257 is padded to 50432 (a multiple of 128 "
                                 "* tp(2) = 256) for the embedding shards") != std::string::npos);
}

TEST_CASE("bucket sizes follow DeepSpeed's auto conventions (docs/planner-facts.md §1)") {
  const std::pair<int64_t, std::array<int64_t, 3>> rows[] = {
      {768, {589824, 530841, 7680}},
      {2048, {4194304, 3774873, 20480}},
      {4096, {16777216, 15099494, 40960}},
      {8192, {67108864, 60397977, 81920}}};
  for (const auto& [h, expected] : rows) {
    auto planned = PlanYaml(kBaseSpec, {"model.hidden_size=" + std::to_string(h),
                                        "model.ffn_hidden_size=64", "model.num_layers=1",
                                        "cluster.device_memory=1000GiB"});
    INFO(planned.diagnostics);
    REQUIRE(planned.result.ok);
    const ir::Sharding& s = planned.result.plan.sharding();
    CHECK(s.bucket_elements() == expected[0]);
    CHECK(s.prefetch_bucket_elements() == expected[1]);
    CHECK(s.param_persistence_threshold_elements() == expected[2]);
  }
}

TEST_CASE("stages split layers evenly, extra layers first") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=3", "model.num_layers=8",
                                      "parallel.tensor=1", "cluster.devices_per_node=6",
                                      "cluster.nodes=1", "data.grad_accum_steps=3"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  const auto& stages = planned.result.plan.pipeline().stages();
  REQUIRE(stages.size() == 3);
  CHECK(stages[0].layer_begin() == 0);
  CHECK(stages[0].layer_end() == 3);
  CHECK(stages[1].layer_end() == 6);
  CHECK(stages[2].layer_end() == 8);
  CHECK(stages[0].has_embedding());
  CHECK(stages[2].has_lm_head());
}

TEST_CASE("1F1B keeps p - s microbatches in flight, GPipe keeps all") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=4", "data.grad_accum_steps=8"});
  REQUIRE(planned.result.ok);
  const auto& stages = planned.result.plan.pipeline().stages();
  CHECK(stages[0].max_inflight_microbatches() == 4);
  CHECK(stages[3].max_inflight_microbatches() == 1);
  // Stage 0: three warm-up forwards (each followed by its send), then F3 then B0.
  std::vector<std::pair<int, int>> first;
  for (const ir::PipelineOp& op : stages[0].ops()) {
    if (op.kind() == ir::FORWARD || op.kind() == ir::BACKWARD) first.push_back({op.kind(), op.microbatch()});
    if (first.size() == 6) break;
  }
  CHECK(first == std::vector<std::pair<int, int>>{{ir::FORWARD, 0}, {ir::FORWARD, 1},
                                                  {ir::FORWARD, 2}, {ir::FORWARD, 3},
                                                  {ir::BACKWARD, 0}, {ir::FORWARD, 4}});
  auto gpipe = PlanYaml(kBaseSpec, {"parallel.pipeline=4", "data.grad_accum_steps=8",
                                    "parallel.pipeline_schedule=gpipe"});
  REQUIRE(gpipe.result.ok);
  CHECK(gpipe.result.plan.pipeline().stages(0).max_inflight_microbatches() == 8);
  CHECK(gpipe.result.verifier_violations.empty());
}

TEST_CASE("buckets cover every parameter in backward order") {
  auto planned = PlanYaml(kBaseSpec, {"sharding.bucket_size=1000000"});
  REQUIRE(planned.result.ok);
  const ir::Sharding& s = planned.result.plan.sharding();
  REQUIRE(s.buckets_size() > 1);
  CHECK(s.buckets(0).parameters(0) == "lm_head.weight");
  const ir::Bucket& last = s.buckets(s.buckets_size() - 1);
  CHECK(last.parameters(last.parameters_size() - 1) == "model.embed_tokens.weight");
  CHECK(planned.result.verifier_violations.empty());
}

TEST_CASE("dump-after stops after the named pass") {
  PlanOptions options;
  options.dump_after = "build-mesh";
  auto planned = PlanYaml(kBaseSpec, {}, options);
  REQUIRE(planned.result.ok);
  CHECK(planned.result.last_pass == "build-mesh");
  CHECK(planned.result.plan.ranks_size() == 16);
  CHECK(planned.result.plan.pipeline().stages_size() == 0);
  CHECK(IsPassName("estimate-memory"));
  CHECK_FALSE(IsPassName("estimate_memory"));
  CHECK(PassNames().size() == 8);
  CHECK(PassNames().back() == "estimate-step-time");
}

TEST_CASE("device memory auto resolves from the device model") {
  auto planned = PlanYaml(kBaseSpec, {"cluster.device_memory=auto", "cluster.device_model=h100-80gb"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  CHECK(planned.result.plan.topology().device_memory_bytes() > 0);
  CHECK(FindResolved(planned.result.plan, "cluster.device_memory") != nullptr);
  auto unknown = PlanYaml(kBaseSpec, {"cluster.device_memory=auto"});
  CHECK(unknown.diagnostics.find("error[E0412]: cannot resolve device_memory: auto for device "
                                 "cuda without cluster.device_model") != std::string::npos);
}

TEST_CASE("recompute names the modules the executor checkpoints, one per layer") {
  testing::Planned full = PlanYaml(kBaseSpec, {"training.recompute=full"});
  REQUIRE(full.result.ok);
  const ir::Training& t = full.result.plan.training();
  REQUIRE(t.recompute_modules_size() == 8);
  CHECK(t.recompute_modules(0) == "model.layers.0");
  CHECK(t.recompute_modules(7) == "model.layers.7");
  testing::Planned selective = PlanYaml(kBaseSpec, {"training.recompute=selective"});
  REQUIRE(selective.result.ok);
  CHECK(selective.result.plan.training().recompute_modules(3) == "model.layers.3.self_attn.core");
  testing::Planned gpt2 = PlanYaml(kBaseSpec, {"training.recompute=selective", "model.arch=gpt2",
                                               "model.num_kv_heads=8"});
  INFO(gpt2.diagnostics);
  REQUIRE(gpt2.result.ok);
  CHECK(gpt2.result.plan.training().recompute_modules(1) == "transformer.h.1.attn.core");
  testing::Planned none = PlanYaml(kBaseSpec);
  CHECK(none.result.plan.training().recompute_modules_size() == 0);

  CHECK_THAT(ir::PlanSummary(full.result.plan),
             Catch::Contains("recompute full (8 modules: model.layers.0 … model.layers.7)"));
  ir::Plan broken = full.result.plan;
  broken.mutable_training()->mutable_recompute_modules()->RemoveLast();
  CHECK(ir::VerifyPlan(broken) == std::vector<std::string>{"recompute full lists 7 modules, expected 8"});
  broken.mutable_training()->add_recompute_modules("model.layers.0");
  CHECK(ir::VerifyPlan(broken) ==
        std::vector<std::string>{"recompute module model.layers.0 is listed twice"});
}

TEST_CASE("per-op recompute names every block and the outputs it keeps, torchtitan's rule") {
  testing::Planned op = PlanYaml(kBaseSpec, {"training.recompute=op"});
  INFO(op.diagnostics);
  REQUIRE(op.result.ok);
  const ir::Training& t = op.result.plan.training();
  CHECK(t.recompute() == ir::RECOMPUTE_OP);
  REQUIRE(t.recompute_modules_size() == 8);
  CHECK(t.recompute_modules(5) == "model.layers.5");
  CHECK(std::vector<std::string>(t.recompute_kept_outputs().begin(), t.recompute_kept_outputs().end()) ==
        std::vector<std::string>{"self_attn.q_proj", "self_attn.v_proj", "self_attn.core", "mlp.gate_proj",
                                 "mlp.down_proj"});
  CHECK_THAT(ir::PlanSummary(op.result.plan),
             Catch::Contains("recompute op (8 modules: model.layers.0 … model.layers.7; keeping self_attn.q_proj, "
                             "self_attn.v_proj, self_attn.core, mlp.gate_proj, mlp.down_proj)"));
  testing::Planned gpt2 = PlanYaml(kBaseSpec, {"training.recompute=op", "model.arch=gpt2", "model.num_kv_heads=8"});
  REQUIRE(gpt2.result.ok);
  const ir::Training& g = gpt2.result.plan.training();
  CHECK(std::vector<std::string>(g.recompute_kept_outputs().begin(), g.recompute_kept_outputs().end()) ==
        std::vector<std::string>{"attn.c_attn", "attn.core", "mlp.c_fc"});
  // The other modes keep no outputs; a plan that disagrees is refused.
  testing::Planned full = PlanYaml(kBaseSpec, {"training.recompute=full"});
  CHECK(full.result.plan.training().recompute_kept_outputs_size() == 0);
  ir::Plan broken = op.result.plan;
  broken.mutable_training()->clear_recompute_kept_outputs();
  CHECK(ir::VerifyPlan(broken) == std::vector<std::string>{"recompute op lists 0 kept outputs, expected some"});
  broken.mutable_training()->add_recompute_kept_outputs("mlp.gate_proj");
  broken.mutable_training()->add_recompute_kept_outputs("mlp.gate_proj");
  CHECK(ir::VerifyPlan(broken) == std::vector<std::string>{"recompute kept output mlp.gate_proj is listed twice"});
  ir::Plan stray = full.result.plan;
  stray.mutable_training()->add_recompute_kept_outputs("mlp.gate_proj");
  CHECK(ir::VerifyPlan(stray) == std::vector<std::string>{"recompute full lists 1 kept outputs, expected none"});
}

TEST_CASE("loss scaling carries GradScaler's initial scale and growth interval in the plan") {
  testing::Planned fp16 = PlanYaml(kBaseSpec, {"precision.compute=fp16", "precision.loss_scaling=dynamic"});
  INFO(fp16.diagnostics);
  REQUIRE(fp16.result.ok);
  CHECK(fp16.result.plan.precision().initial_loss_scale() == 65536.0);
  CHECK(fp16.result.plan.precision().loss_scale_growth_interval() == 2000);
  testing::Planned none = PlanYaml(kBaseSpec);
  CHECK(none.result.plan.precision().initial_loss_scale() == 0.0);
}

TEST_CASE("with one micro-step per update gradients count only beyond what backward frees") {
  auto gradient_bytes = [](const ir::Plan& plan) {
    int64_t bytes = 0;
    for (const ir::MemoryTerm& t : plan.memory(0).device()) {
      if (t.category() == "gradients") bytes += t.bytes();
    }
    return bytes;
  };
  testing::Planned one = PlanYaml(kBaseSpec, {"data.global_batch_size=16"});
  testing::Planned two = PlanYaml(kBaseSpec, {"data.global_batch_size=32"});
  REQUIRE(one.result.ok);
  REQUIRE(two.result.ok);
  REQUIRE(one.result.plan.batch().grad_accum_steps() == 1);
  REQUIRE(two.result.plan.batch().grad_accum_steps() == 2);
  // Here the activations exceed the gradients, so none add to the peak with one micro-step;
  // with two, the first micro-step's gradients are alive during the second one's backward.
  CHECK(gradient_bytes(one.result.plan) == 0);
  CHECK(gradient_bytes(two.result.plan) > 0);
  CHECK_THAT(one.result.plan.memory(0).device(1).formula(),
             Catch::Contains("with 1 micro-step per update only gradients beyond the"));
}

// kBaseSpec with the data source replaced by `train` (the flow mapping after "train: ").
std::string WithTrain(const std::string& train) {
  std::string yaml = kBaseSpec;
  const std::string old = "{path: data.bin, format: tokens, tokenizer: bytes}";
  yaml.replace(yaml.find(old), old.size(), train);
  return yaml;
}

TEST_CASE("a tokenizer file is recorded with its kind and resolved path") {
  auto bytes = PlanYaml(kBaseSpec);
  REQUIRE(bytes.result.ok);
  CHECK(bytes.result.plan.data().tokenizer() == ir::TOKENIZER_KIND_BYTES);
  CHECK(bytes.result.plan.data().tokenizer_path().empty());

  auto hf = PlanYaml(WithTrain("{path: corpus, format: text, tokenizer: tok/tokenizer.json}"));
  INFO(hf.diagnostics);
  REQUIRE(hf.result.ok);
  CHECK(hf.result.plan.data().tokenizer() == ir::TOKENIZER_KIND_HUGGINGFACE);
  CHECK(hf.result.plan.data().tokenizer_path() == "tok/tokenizer.json");
  CHECK_THAT(ir::PlanSummary(hf.result.plan),
             Catch::Contains("data       corpus (text, tokenizer huggingface tok/tokenizer.json)"));

  auto spm = PlanYaml(WithTrain("{path: corpus, format: text, tokenizer: /models/llama2/tokenizer.model}"));
  REQUIRE(spm.result.ok);
  CHECK(spm.result.plan.data().tokenizer() == ir::TOKENIZER_KIND_SENTENCEPIECE);
  CHECK(spm.result.plan.data().tokenizer_path() == "/models/llama2/tokenizer.model");

  // The executor decodes its sample with the tokenizer file: no warning (W0407 is retired).
  auto sample = PlanYaml(WithTrain("{path: corpus, format: text, tokenizer: tokenizer.json}"),
                         {"training.sample_tokens=20"});
  CHECK(sample.result.ok);
  CHECK(sample.diagnostics == "");
}

TEST_CASE("a tokenizer that is no tokenizer file, or one for token files, is a located error") {
  auto unknown = PlanYaml(WithTrain("{path: corpus, format: text, tokenizer: vocab.txt}"));
  CHECK_FALSE(unknown.result.ok);
  CHECK(unknown.diagnostics ==
        "job.yaml:13:50: error[E0113]: tokenizer 'vocab.txt' is neither `bytes` nor a tokenizer "
        "file (*.json or *.model) [validate-spec]\n"
        "   train: {path: corpus, format: text, tokenizer: vocab.txt}\n"
        "                                                  ^\n"
        "note: use bytes, the path of a Hugging Face tokenizer.json, or of a SentencePiece "
        "tokenizer.model\n");

  auto tokens = PlanYaml(WithTrain("{path: data.bin, format: tokens, tokenizer: tokenizer.json}"));
  CHECK_FALSE(tokens.result.ok);
  CHECK(tokens.diagnostics ==
        "job.yaml:13:54: error[E0111]: a tokenizer file applies to format: text, but "
        "data.train.format is tokens (already tokenized) [validate-spec]\n"
        "   train: {path: data.bin, format: tokens, tokenizer: tokenizer.json}\n"
        "                                                      ^\n"
        "job.yaml:13:35: note: format set here\n");
}

}  // namespace
}  // namespace accel::planner
