#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ir/plan_verifier.h"
#include "planner_test_util.h"

namespace accel::ir {
namespace {

using planner::testing::kBaseSpec;
using planner::testing::PlanYaml;

Plan ValidPlan() {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=2", "data.grad_accum_steps=4"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  return planned.result.plan;
}

bool Mentions(const std::vector<std::string>& violations, const std::string& text) {
  for (const std::string& v : violations) {
    if (v.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST_CASE("a planned job verifies clean after every pass, for many layouts") {
  const std::vector<std::vector<std::string>> layouts = {
      {},
      {"parallel.pipeline=2", "parallel.pipeline_schedule=gpipe"},
      {"parallel.pipeline=4", "parallel.tensor=4", "data.grad_accum_steps=4"},
      {"parallel.data_shard=4", "sharding.stage=3"},
      {"parallel.data_shard=2", "parallel.context=2", "sharding.stage=2"},
      {"parallel.tensor=1", "parallel.pipeline=8", "data.grad_accum_steps=16"},
  };
  for (const auto& overrides : layouts) {
    auto planned = PlanYaml(kBaseSpec, overrides);
    INFO(planned.diagnostics);
    REQUIRE(planned.result.ok);
    CHECK(planned.result.verifier_violations.empty());
    CHECK(VerifyPlan(planned.result.plan).empty());
  }
}

TEST_CASE("the verifier checks tensor-parallel splits and sequence parallelism") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.sequence_parallel=true"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  Plan plan = planned.result.plan;
  CHECK(plan.mesh().sequence_parallel());
  CHECK(VerifyPlan(plan).empty());
  Plan odd = plan;
  odd.mutable_batch()->set_seq_len(511);
  CHECK(Mentions(VerifyPlan(odd), "sequence_parallel: seq_len 511 does not divide by tp 2"));
  auto untensored = PlanYaml(kBaseSpec, {"parallel.tensor=1"});
  REQUIRE(untensored.result.ok);
  Plan single = untensored.result.plan;
  single.mutable_mesh()->set_sequence_parallel(true);
  CHECK(Mentions(VerifyPlan(single), "sequence_parallel is set but tp is 1"));
  Plan parts = plan;
  // model.layers.0.self_attn.q_proj.weight [512, 512] split on dim 0: in 3 parts it cannot divide.
  Parameter* q = parts.mutable_sharding()->mutable_units(1)->mutable_parameters(0);
  REQUIRE(q->name() == "model.layers.0.self_attn.q_proj.weight");
  q->set_tp_parts(3);
  CHECK(Mentions(VerifyPlan(parts), "parameter model.layers.0.self_attn.q_proj.weight: dim 0 of 512 in 3 "
                                    "part(s) does not divide by tp 2"));
  q->set_tp_dim(-1);
  CHECK(Mentions(VerifyPlan(parts), "parameter model.layers.0.self_attn.q_proj.weight has tp_parts but no tp_dim"));
}

TEST_CASE("the verifier checks replicated key/value heads and their tp_kv groups") {
  // tp 8 over 4 key/value heads: each head on 2 tp ranks.
  auto planned = PlanYaml(kBaseSpec, {"parallel.tensor=8"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  const Plan plan = planned.result.plan;
  REQUIRE(plan.model().kv_head_replicas() == 2);
  CHECK(VerifyPlan(plan).empty());
  Plan wrong = plan;
  Parameter* k = wrong.mutable_sharding()->mutable_units(1)->mutable_parameters(1);
  REQUIRE(k->name() == "model.layers.0.self_attn.k_proj.weight");
  k->set_tp_replicas(4);
  CHECK(Mentions(VerifyPlan(wrong), "parameter model.layers.0.self_attn.k_proj.weight tp_replicas 4 is not "
                                    "kv_head_replicas 2 dividing tp 8"));
  Plan shifted = plan;
  for (ProcessGroupSet& set : *shifted.mutable_process_groups()) {
    if (set.name() != "tp_kv") continue;
    // {0, 1}, {2, 3} … become {1, 2}, {3, 4} … on the ranks of tp group 0 (still one tp group each).
    set.mutable_groups(0)->set_ranks(0, 2);
    set.mutable_groups(1)->set_ranks(0, 0);
    set.mutable_groups(0)->mutable_ranks()->SwapElements(0, 1);
  }
  CHECK(Mentions(VerifyPlan(shifted), "a tp_kv group is not 2 consecutive tp ranks starting at a multiple of 2"));
  Plan missing = plan;
  missing.mutable_process_groups()->RemoveLast();
  CHECK(Mentions(VerifyPlan(missing), "kv_head_replicas 2 without a tp_kv group"));
}

TEST_CASE("the verifier requires known enum values where the executor reads them") {
  const Plan valid = ValidPlan();  // pp 2: the schedule and the activation dtype are required
  CHECK(VerifyPlan(valid).empty());
  Plan unset = valid;
  unset.mutable_precision()->set_param_dtype(DTYPE_UNSPECIFIED);
  unset.mutable_pipeline()->set_schedule(PIPELINE_SCHEDULE_UNSPECIFIED);
  unset.mutable_topology()->set_device_type(DEVICE_TYPE_UNSPECIFIED);
  const std::vector<std::string> violations = VerifyPlan(unset);
  CHECK(violations == std::vector<std::string>{"precision.param_dtype is unspecified",
                                               "topology.device_type is unspecified",
                                               "pipeline.schedule is unspecified"});
  // A newer writer's value: named by its number.
  Plan unknown = valid;
  unknown.mutable_sharding()->set_offload(static_cast<Offload>(7));
  unknown.mutable_training()->mutable_optimizer()->set_kind(static_cast<OptimizerKind>(12));
  CHECK(VerifyPlan(unknown) == std::vector<std::string>{"training.optimizer.kind has unknown value 12",
                                                        "sharding.offload has unknown value 7"});
  // Where plan.proto allows UNSPECIFIED: no master copy of fp32 parameters, no tokenizer for
  // token files, no schedule on one stage.
  Plan allowed = valid;
  allowed.mutable_precision()->set_master_dtype(DTYPE_UNSPECIFIED);
  allowed.mutable_data()->set_tokenizer(TOKENIZER_KIND_UNSPECIFIED);
  CHECK(VerifyPlan(allowed).empty());
  allowed.mutable_data()->set_format(DATA_FORMAT_TEXT);
  allowed.mutable_data()->set_token_dtype(TOKEN_DTYPE_UNSPECIFIED);
  CHECK(VerifyPlan(allowed).empty());
  allowed.mutable_data()->set_format(DATA_FORMAT_TOKENS);
  CHECK(VerifyPlan(allowed) == std::vector<std::string>{"data.token_dtype is unspecified"});
}

TEST_CASE("the verifier catches a rank missing from a group") {
  Plan plan = ValidPlan();
  plan.mutable_process_groups(0)->mutable_groups(0)->set_ranks(0, 1);
  CHECK(Mentions(VerifyPlan(plan), "groups of set tp"));
}

TEST_CASE("the verifier catches a group mixing ranks across other axes") {
  Plan plan = ValidPlan();
  // tp groups are [0,1],[2,3],...: swapping 1 and 2 keeps coverage but breaks the axis rule.
  plan.mutable_process_groups(0)->mutable_groups(0)->set_ranks(1, 2);
  plan.mutable_process_groups(0)->mutable_groups(1)->set_ranks(0, 1);
  CHECK(Mentions(VerifyPlan(plan), "differ on axis"));
}

TEST_CASE("the verifier catches a mesh that does not match the world") {
  Plan plan = ValidPlan();
  plan.mutable_mesh()->mutable_axes(4)->set_size(4);
  CHECK(Mentions(VerifyPlan(plan), "mesh product 32 != world size 16"));
}

TEST_CASE("the verifier catches a gap between stages") {
  Plan plan = ValidPlan();
  plan.mutable_pipeline()->mutable_stages(1)->set_layer_begin(5);
  CHECK(Mentions(VerifyPlan(plan), "stage 1 starts at layer 5, expected 4"));
}

TEST_CASE("the verifier catches a parameter left out of the buckets") {
  Plan plan = ValidPlan();
  Bucket* bucket = plan.mutable_sharding()->mutable_buckets(0);
  bucket->mutable_parameters()->RemoveLast();
  CHECK(!VerifyPlan(plan).empty());
}

TEST_CASE("the verifier catches a deadlocking schedule") {
  Plan plan = ValidPlan();
  // Stage 1 waits for microbatch 0's gradient before anything was sent: move its first op
  // (RECV_ACTIVATION 0) after a RECV_GRAD that can never be satisfied first.
  PipelineStage* stage0 = plan.mutable_pipeline()->mutable_stages(0);
  // Make stage 0 wait for a gradient before its first forward: nobody can produce it.
  PipelineOp recv;
  recv.set_kind(RECV_GRAD);
  recv.set_microbatch(0);
  recv.set_peer_stage(1);
  auto* ops = stage0->mutable_ops();
  ops->Add()->CopyFrom(recv);
  for (int i = ops->size() - 1; i > 0; --i) ops->SwapElements(i, i - 1);
  CHECK(Mentions(VerifyPlan(plan), "deadlock"));
}

TEST_CASE("the verifier catches receives in a different order than sends") {
  Plan plan = ValidPlan();
  PipelineStage* stage1 = plan.mutable_pipeline()->mutable_stages(1);
  // Swap the microbatch numbers of stage 1's first two activation receives.
  std::vector<int> recv_index;
  for (int i = 0; i < stage1->ops_size(); ++i) {
    if (stage1->ops(i).kind() == RECV_ACTIVATION) recv_index.push_back(i);
  }
  REQUIRE(recv_index.size() >= 2);
  stage1->mutable_ops(recv_index[0])->set_microbatch(1);
  stage1->mutable_ops(recv_index[1])->set_microbatch(0);
  CHECK(!VerifyPlan(plan).empty());
}

// Found with fuzz/worker_plan_fuzzer (fuzz/regressions/worker_plan_fuzzer): `accel worker` verifies
// the plan file it is given, which may hold anything. The group check read coordinates a rank did
// not have (a protobuf CHECK abort), and counts overflowed or sized allocations unchecked.
TEST_CASE("the verifier skips the group check when the rank placements are broken") {
  Plan plan = ValidPlan();
  plan.mutable_ranks(0)->mutable_coords()->Truncate(1);
  CHECK(VerifyPlan(plan) == std::vector<std::string>{
                                "rank 0 has 1 coordinates",
                                "process groups not checked: the mesh or the rank placements are invalid"});
  plan = ValidPlan();
  plan.clear_mesh();
  CHECK(VerifyPlan(plan) == std::vector<std::string>{
                                "plan has rank placements but no mesh",
                                "process groups not checked: the mesh or the rank placements are invalid"});
  plan = ValidPlan();
  plan.mutable_process_groups(0)->add_axes(plan.process_groups(0).axes(0));
  CHECK(VerifyPlan(plan) == std::vector<std::string>{"group set tp names axis tp twice"});
}

TEST_CASE("the verifier reports counts that overflow 64 bits") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Plan plan = ValidPlan();
  for (int i = 0; i < 5; ++i) plan.mutable_mesh()->mutable_axes(i)->set_size(int64_t{1} << 40);
  CHECK(VerifyPlan(plan) == std::vector<std::string>{
                                "mesh product overflows 64 bits",
                                "process groups not checked: the mesh or the rank placements are invalid",
                                "2 stages for pp 1099511627776"});
  plan = ValidPlan();
  plan.mutable_mesh()->mutable_axes(4)->set_stride(kMax);
  plan.mutable_ranks(1)->set_coords(4, 2);
  CHECK(VerifyPlan(plan) == std::vector<std::string>{
                                "rank 1 coordinates overflow 64 bits",
                                "process groups not checked: the mesh or the rank placements are invalid"});
  plan = ValidPlan();
  plan.mutable_pipeline()->mutable_stages(0)->set_parameter_count(kMax);
  CHECK(VerifyPlan(plan) == std::vector<std::string>{"stage parameter counts overflow 64 bits"});
  plan = ValidPlan();
  ShardUnit* unit = plan.mutable_sharding()->mutable_units(1);
  REQUIRE(unit->parameters_size() >= 2);
  unit->mutable_parameters(0)->set_count(kMax);
  unit->mutable_parameters(1)->set_count(kMax);
  CHECK(VerifyPlan(plan) == std::vector<std::string>{"parameter counts overflow 64 bits"});
  plan = ValidPlan();
  Parameter* parameter = plan.mutable_sharding()->mutable_units(1)->mutable_parameters(0);
  parameter->set_local_count(-5);
  CHECK(VerifyPlan(plan) == std::vector<std::string>{"parameter " + parameter->name() + " has a negative count"});
}

TEST_CASE("the verifier sizes nothing by an unchecked microbatch count") {
  Plan plan = ValidPlan();
  plan.mutable_pipeline()->set_microbatches(int64_t{1} << 40);
  CHECK(VerifyPlan(plan) == std::vector<std::string>{"stage 0 has " + std::to_string(plan.pipeline().stages(0).ops_size()) +
                                                     " ops for 1099511627776 microbatches"});
  plan.mutable_pipeline()->set_microbatches(-1);
  CHECK(VerifyPlan(plan) == std::vector<std::string>{"pipeline has -1 microbatches"});
}

}  // namespace
}  // namespace accel::ir

namespace accel::ir {
namespace {

TEST_CASE("the verifier checks the plan's bubble against the shared pipeline simulation") {
  Plan plan = ValidPlan();
  REQUIRE(VerifyPlan(plan).empty());
  plan.mutable_pipeline()->set_bubble_fraction(0.5);
  CHECK(Mentions(VerifyPlan(plan), "pipeline bubble_fraction 0.500000 is not the simulated 0.200000"));
}

TEST_CASE("a tied embedding on a pipeline gets a copy on the last stage and an embedding group") {
  auto planned = planner::testing::PlanYaml(planner::testing::kBaseSpec,
                                            {"parallel.pipeline=2", "data.grad_accum_steps=4",
                                             "model.tie_word_embeddings=true"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  Plan plan = planned.result.plan;
  CHECK(VerifyPlan(plan).empty());
  const ShardUnit& head = plan.sharding().units(plan.sharding().units_size() - 1);
  const Parameter& copy = head.parameters(head.parameters_size() - 1);
  CHECK(copy.name() == "lm_head.weight");
  CHECK(copy.tied_to() == "model.embed_tokens.weight");
  const ProcessGroupSet& embedding = plan.process_groups(plan.process_groups_size() - 1);
  CHECK(embedding.name() == "embedding");
  CHECK(embedding.partial());
  const int world = plan.ranks_size();
  REQUIRE(embedding.groups_size() == world / 2);
  // With pp = 2 the embedding group is the whole pipeline: first and last stage.
  for (const RankGroup& g : embedding.groups()) {
    REQUIRE(g.ranks_size() == 2);
    CHECK(plan.ranks(g.ranks(0)).stage() == 0);
    CHECK(plan.ranks(g.ranks(1)).stage() == 1);
  }
  Plan stray = plan;
  stray.mutable_sharding()->mutable_units(stray.sharding().units_size() - 1)
      ->mutable_parameters(head.parameters_size() - 1)->set_tied_to("model.norm.weight");
  CHECK(Mentions(VerifyPlan(stray), "tied copy lm_head.weight does not match a first-stage parameter model.norm.weight"));
  Plan ungrouped = plan;
  ungrouped.mutable_process_groups()->RemoveLast();
  CHECK(Mentions(VerifyPlan(ungrouped), "tied copy lm_head.weight without an embedding group"));
  // The activation between stages: micro batch x sequence (sharded over tp with sequence
  // parallelism) x hidden, in the parameter dtype.
  REQUIRE(plan.pipeline().activation_shape_size() == 3);
  CHECK(plan.pipeline().activation_shape(2) == plan.model().hidden_size());
  CHECK(plan.pipeline().activation_dtype() == plan.precision().param_dtype());
}

}  // namespace
}  // namespace accel::ir

namespace accel::ir {
namespace {

// A mixture-of-experts plan: 8 experts, ep 4 over dp_shard 8 (tp 2), stage 3.
Plan MoePlan() {
  auto planned = PlanYaml(kBaseSpec, {"model.moe.num_experts=8", "model.moe.experts_per_token=2",
                                      "model.moe.expert_ffn_size=256", "parallel.data_replicate=1",
                                      "parallel.data_shard=8", "parallel.expert=4",
                                      "sharding.stage=3"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  CHECK(planned.result.verifier_violations.empty());
  return planned.result.plan;
}

TEST_CASE("the verifier checks the mixture-of-experts fields, expert ranges and shards") {
  CHECK(VerifyPlan(MoePlan()).empty());
  Plan topk = MoePlan();
  topk.mutable_model()->mutable_moe()->set_experts_per_token(9);
  CHECK(Mentions(VerifyPlan(topk), "model.moe.experts_per_token 9 outside [1, 8]"));
  Plan carve = MoePlan();
  carve.mutable_model()->mutable_moe()->set_expert_data_parallel(3);
  CHECK(Mentions(VerifyPlan(carve), "expert_parallel x expert_data_parallel != dp_shard x cp = 8"));
  Plan range = MoePlan();
  range.mutable_ranks(5)->set_expert_end(range.ranks(5).expert_end() + 1);
  CHECK(Mentions(VerifyPlan(range), "rank 5 holds experts ["));
  Plan shard = MoePlan();
  for (ShardUnit& unit : *shard.mutable_sharding()->mutable_units()) {
    for (Parameter& p : *unit.mutable_parameters()) {
      if (p.routed_expert()) p.set_shard_count(p.local_count() / 8);  // dp_shard, not ep_dp 2
    }
  }
  CHECK(Mentions(VerifyPlan(shard), "mlp.experts.gate_proj shard_count"));
  Plan dense = ValidPlan();
  dense.mutable_model()->mutable_moe()->set_experts_per_token(2);
  CHECK(Mentions(VerifyPlan(dense), "model.moe has expert fields but num_experts 0"));
  Plan scoring = MoePlan();
  scoring.mutable_model()->mutable_moe()->set_router_scoring(ROUTER_SCORING_UNSPECIFIED);
  CHECK(Mentions(VerifyPlan(scoring), "model.moe.router_scoring is unspecified"));
}

}  // namespace
}  // namespace accel::ir
