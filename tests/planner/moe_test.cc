// Mixture of experts in the planner (docs/planner-facts.md §9): model.moe's rules, the expert
// degree carved out of dp_shard × cp (torchtitan), the "ep" and "ep_dp" groups and each rank's
// experts, expert states sharded over ep_dp, the MoE activation and dispatch terms, the
// all-to-all in the step time, and the plan's text.
#include <catch2/catch.hpp>

#include "ir/plan_access.h"
#include "ir/plan_writer.h"
#include "planner/moe_activations.h"
#include "planner/moe_layers.h"
#include "planner/step_flops.h"
#include "planner_test_util.h"

namespace accel::planner {
namespace {

using testing::PlanYaml;

// 16 ranks, 4 blocks of 8 routed experts (top-2) of width 256; every rank a dp_shard rank.
constexpr const char* kMoeSpec = R"(version: 1
name: moe
model:
  arch: llama
  hidden_size: 512
  num_layers: 4
  num_heads: 8
  num_kv_heads: 4
  ffn_hidden_size: 1376
  vocab_size: 32000
  max_seq_len: 1024
  moe:
    num_experts: 8
    experts_per_token: 2
    expert_ffn_size: 256
data:
  train: {path: data.bin, format: tokens, tokenizer: bytes}
  seq_len: 512
  micro_batch_size: 2
training:
  steps: 10
precision: {params: bf16, compute: bf16, reduce: fp32}
parallel:
  data_replicate: 1
  data_shard: auto
  expert: 4
sharding:
  stage: 3
cluster:
  nodes: 2
  devices_per_node: 8
  device: cuda
  device_memory: 80GiB
)";

std::vector<std::vector<int>> Groups(const ir::Plan& plan, const std::string& name) {
  const ir::ProcessGroupSet* set = ir::FindGroupSet(plan, name);
  std::vector<std::vector<int>> out;
  if (set == nullptr) return out;
  for (const ir::RankGroup& g : set->groups()) out.emplace_back(g.ranks().begin(), g.ranks().end());
  return out;
}

const ir::ResolvedValue* FindResolved(const ir::Plan& plan, const std::string& field) {
  for (const ir::ResolvedValue& r : plan.resolved()) {
    if (r.field() == field) return &r;
  }
  return nullptr;
}

int64_t TermBytes(const ir::MemoryEstimate& e, const std::string& category,
                  const std::string& formula_part) {
  int64_t bytes = 0;
  for (const ir::MemoryTerm& t : e.device()) {
    if (t.category() == category && t.formula().find(formula_part) != std::string::npos) {
      bytes += t.bytes();
    }
  }
  return bytes;
}

TEST_CASE("moe: the plan carries the experts, dense blocks and expert-parallel split") {
  auto planned = PlanYaml(kMoeSpec, {"model.moe.first_dense_layers=1"});
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  CHECK(planned.result.verifier_violations.empty());
  const ir::Plan& plan = planned.result.plan;
  const ir::MixtureOfExperts& moe = plan.model().moe();
  CHECK(moe.num_experts() == 8);
  CHECK(moe.experts_per_token() == 2);
  CHECK(moe.expert_ffn_size() == 256);
  CHECK(moe.router_scoring() == ir::ROUTER_SCORING_SOFTMAX);
  CHECK(std::vector<int64_t>(moe.dense_layers().begin(), moe.dense_layers().end()) ==
        std::vector<int64_t>{0});
  CHECK(moe.capacity_factor() == 0);
  CHECK(moe.routing_margin() == Approx(kDroplessRoutingMargin));
  CHECK(moe.expert_parallel() == 4);
  CHECK(moe.expert_data_parallel() == 4);
  CHECK(plan.sharding().expert_shard_degree() == 4);
  const ir::ResolvedValue* r = FindResolved(plan, "model.moe.expert_data_parallel");
  REQUIRE(r != nullptr);
  CHECK(r->reason() == "data_shard(16) * context(1) / expert(4) = 4 ranks hold the same experts "
                       "and shard their state (torchtitan's dp_shard_mod_ep)");
  // Stage parameters: the embedding + 1 dense block + 3 MoE blocks + norm + head.
  const ir::ParameterCount& c = plan.model().parameters();
  CHECK(plan.pipeline().stages(0).parameter_count() ==
        c.embedding_count() + c.dense_per_layer_count() + 3 * c.per_layer_count() +
            c.final_norm_count() + c.lm_head_count());
  CHECK(c.total_count() == plan.pipeline().stages(0).parameter_count());
}

TEST_CASE("moe: ep groups are consecutive dp_shard ranks, ep_dp the ranks holding the same experts") {
  auto planned = PlanYaml(kMoeSpec);
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  CHECK(Groups(plan, "ep") == std::vector<std::vector<int>>{
                                  {0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}});
  CHECK(Groups(plan, "ep_dp") == std::vector<std::vector<int>>{
                                     {0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  CHECK(plan.ranks(0).expert_begin() == 0);
  CHECK(plan.ranks(0).expert_end() == 2);
  CHECK(plan.ranks(7).expert_begin() == 6);
  CHECK(plan.ranks(7).expert_end() == 8);
  CHECK(plan.ranks(9).expert_begin() == 2);
  // Tensor parallel is innermost: an ep group takes one tp rank of each of ep dp_shard ranks.
  auto tp = PlanYaml(kMoeSpec, {"parallel.tensor=2"});
  INFO(tp.diagnostics);
  REQUIRE(tp.result.ok);
  CHECK(tp.result.verifier_violations.empty());
  CHECK(Groups(tp.result.plan, "ep").front() == std::vector<int>{0, 2, 4, 6});
  CHECK(Groups(tp.result.plan, "ep_dp").front() == std::vector<int>{0, 8});
  // Context parallel: ep takes every cp rank first (torchtitan's dp_shard_in_ep × cp).
  auto cp = PlanYaml(kMoeSpec, {"parallel.context=2", "data.seq_len=512"});
  INFO(cp.diagnostics);
  REQUIRE(cp.result.ok);
  CHECK(cp.result.verifier_violations.empty());
  CHECK(Groups(cp.result.plan, "ep").front() == std::vector<int>{0, 1, 2, 3});
  CHECK(Groups(cp.result.plan, "ep_dp").front() == std::vector<int>{0, 4, 8, 12});
}

TEST_CASE("moe: the plan text lists each rank's experts compactly") {
  auto planned = PlanYaml(kMoeSpec);
  REQUIRE(planned.result.ok);
  const std::string text = ir::PlanSummary(planned.result.plan);
  INFO(text);
  CHECK(text.find("moe        8 routed experts, top-2 by softmax, expert ffn 256; 4 of 4 blocks "
                  "MoE, dropless (planned at 1.25x the even share); expert parallel 4 (2 experts "
                  "per rank), expert states sharded over ep_dp 4\n") != std::string::npos);
  CHECK(text.find("experts    experts 0\u20131 on ranks [0,4,8,12]\n") != std::string::npos);
  CHECK(text.find("           experts 6\u20137 on ranks [3,7,11,15]\n") != std::string::npos);
  CHECK(text.find(" active per token) = embedding ") != std::string::npos);
  // JSON carries the same message (the .proto field names).
  const std::string json = ir::PlanToJson(planned.result.plan);
  CHECK(json.find("\"moe\": {") != std::string::npos);
  CHECK(json.find("\"expert_parallel\": \"4\"") != std::string::npos);
  CHECK(json.find("\"active_count\": \"") != std::string::npos);
  CHECK(ir::ExpertRangeText(3, 4) == "expert 3");
  CHECK(ir::ExpertRangeText(0, 4) == "experts 0\u20133");
}

TEST_CASE("moe: expert states are divided by ep, then sharded over ep_dp") {
  auto one = PlanYaml(kMoeSpec, {"parallel.expert=1"});
  auto four = PlanYaml(kMoeSpec);
  REQUIRE(one.result.ok);
  REQUIRE(four.result.ok);
  const ir::MemoryEstimate& e1 = one.result.plan.memory(0);
  const ir::MemoryEstimate& e4 = four.result.plan.memory(0);
  // 4 blocks x 3 x 8 experts x 256 x 512 routed elements; ep 1 shards them over 16 ranks, ep 4
  // holds a quarter and shards it over 4: the same bytes per rank (stage 3 shards everything).
  const int64_t routed = 4 * 3 * 8 * 256 * 512;
  CHECK(TermBytes(e1, "optimizer_states", "routed experts, 8 of 8 per rank (ep 1)") ==
        routed / 16 * 8);
  CHECK(TermBytes(e4, "optimizer_states", "routed experts, 2 of 8 per rank (ep 4)") ==
        routed / 4 / 4 * 8);
  // Stage 1 keeps parameters whole: ep divides the experts' parameters by 4.
  auto s1 = PlanYaml(kMoeSpec, {"sharding.stage=1"});
  REQUIRE(s1.result.ok);
  CHECK(TermBytes(s1.result.plan.memory(0), "parameters", "routed experts") == routed / 4 * 2);
  CHECK(TermBytes(s1.result.plan.memory(0), "master_weights", "ceil(3,145,728 / ep_dp 4)") ==
        routed / 16 * 4);
}

TEST_CASE("moe: routed activations with the dropless margin or the capacity factor") {
  MoeActivationShape s;
  s.tokens = 1024;
  s.hidden = 512;
  s.experts = 8;
  s.top_k = 2;
  s.expert_ffn = 256;
  s.activation_bytes = 2;
  s.margin = 1.25;
  const MoeActivationBytes b = MoeLayerActivationBytes(s);
  // One rank holds every expert: exactly T·k rows, the margin unused.
  CHECK(b.routed_rows == 2048);
  // router 4TE + 4E + 4T + T·k·(28 + a), rows R·(h·a + 2·fe·a), combined outputs T·k·h·a
  const int64_t router = 4 * 1024 * 8 + 4 * 8 + 4 * 1024 + 2048 * 30;
  CHECK(b.kept == router + 2048 * (512 * 2 + 2 * 256 * 2) + 2048 * 512 * 2);
  // the logits in bf16 and their fp32 copy
  CHECK(b.transient == 1024 * 8 * 2 + 1024 * 8 * 4);
  s.ep = 4;
  s.tp = 2;
  const MoeActivationBytes ep = MoeLayerActivationBytes(s);
  CHECK(ep.routed_rows == 2560);
  // + the regroup indices 16R
  CHECK(ep.kept == router + 2560 * (512 * 2 + 2 * 128 * 2) + 16 * 2560 + 2048 * 512 * 2);
  CHECK(ep.transient == 1024 * 8 * 2 + 1024 * 8 * 4 + 2 * 2560 * 512 * 2 + 16 * 8);
  s.shared_expert_gate = true;
  CHECK(MoeLayerActivationBytes(s).kept == ep.kept + 1024 * 513 * 2);

  // Full recompute keeps no routed rows per block, only the one block rebuilt in backward.
  auto full = PlanYaml(kMoeSpec, {"training.recompute=full"});
  REQUIRE(full.result.ok);
  CHECK(TermBytes(full.result.plan.memory(0), "activations",
                  "the MoE block rebuilt for its backward") ==
        router + 2560 * (512 * 2 + 2 * 256 * 2) + 16 * 2560 + 2048 * 512 * 2);
  auto dropless = PlanYaml(kMoeSpec);
  auto capped = PlanYaml(kMoeSpec, {"model.moe.capacity_factor=2"});
  REQUIRE(dropless.result.ok);
  REQUIRE(capped.result.ok);
  CHECK(TermBytes(capped.result.plan.memory(0), "activations", "R=ceil(T*k*2)=4096") >
        TermBytes(dropless.result.plan.memory(0), "activations", "R=ceil(T*k*1.25)=2560"));
  // ep 4 in the job: the logits (and their fp32 copy) and one direction's all-to-all buffers.
  CHECK(TermBytes(dropless.result.plan.memory(0), "communication_buffers",
                  "router and dispatch buffers of one MoE layer") ==
        1024 * 8 * 2 + 1024 * 8 * 4 + 2 * 2560 * 512 * 2 + 16 * 8);
  CHECK(dropless.diagnostics.find("note: dropless routing: the memory and step-time estimates size "
                                  "each rank's routed rows at 1.25 x tokens x experts_per_token") !=
        std::string::npos);
}

TEST_CASE("moe: dispatch and combine are all-to-alls over ep in the step time") {
  auto planned = PlanYaml(kMoeSpec);
  REQUIRE(planned.result.ok);
  const ir::StepTimeEstimate& st = planned.result.plan.step_time();
  const ir::CommunicationTime* a2a = nullptr;
  const ir::CommunicationTime* counts = nullptr;
  for (const ir::CommunicationTime& c : st.communication()) {
    if (c.group() == "ep" && c.what().find("dispatch and combine") != std::string::npos) a2a = &c;
    if (c.group() == "ep" && c.what().find("token counts") != std::string::npos) counts = &c;
  }
  REQUIRE(counts != nullptr);
  CHECK(counts->calls() == 4);          // one forward per MoE block and micro-step
  CHECK(counts->bytes() == 4 * 8 * 8);  // E int64 counts
  REQUIRE(a2a != nullptr);
  CHECK(a2a->collective() == ir::COLLECTIVE_ALL_TO_ALL);
  CHECK(a2a->group_size() == 4);
  // 4 MoE blocks x 1 micro-step x (forward, backward twice) x (dispatch, combine).
  CHECK(a2a->calls() == 4 * 3 * 2);
  CHECK(a2a->bytes() == 24 * 2560 * 512 * 2);
  CHECK(a2a->link() == ir::LINK_CLASS_INTRA_NODE);
  // The routed experts' gradients reduce over ep_dp (4 ranks), not dp_shard (16): stage 3
  // reduce-scatters one collective per MoE block, 4 blocks x 3 tensors x 2 of 8 experts x 256 x
  // 512 in fp32 (reduce dtype), left out of the dp_shard buckets.
  const ir::CommunicationTime* experts = nullptr;
  double dp_shard_bytes = 0;
  for (const ir::CommunicationTime& c : st.communication()) {
    if (c.group() == "ep_dp" && c.collective() == ir::COLLECTIVE_REDUCE_SCATTER) experts = &c;
    if (c.group() == "dp_shard" && c.collective() == ir::COLLECTIVE_REDUCE_SCATTER) {
      dp_shard_bytes = static_cast<double>(c.bytes());
    }
  }
  REQUIRE(experts != nullptr);
  CHECK(experts->group_size() == 4);
  CHECK(experts->calls() == 4);
  CHECK(experts->bytes() == 4LL * 3 * 2 * 256 * 512 * 4);
  const ir::Model& model = planned.result.plan.model();
  CHECK(dp_shard_bytes == static_cast<double>((model.parameters().total_count() -
                                               model.parameters().routed_expert_count()) * 4));
  auto none = PlanYaml(kMoeSpec, {"parallel.expert=1"});
  REQUIRE(none.result.ok);
  for (const ir::CommunicationTime& c : none.result.plan.step_time().communication()) {
    CHECK(c.group() != "ep");
  }
  // Across nodes: 16 consecutive ranks span both nodes.
  auto wide = PlanYaml(kMoeSpec, {"parallel.expert=8", "model.moe.num_experts=16"});
  REQUIRE(wide.result.ok);
  auto ep16 = PlanYaml(kMoeSpec, {"parallel.expert=16", "model.moe.num_experts=16"});
  REQUIRE(ep16.result.ok);
  for (const ir::CommunicationTime& c : ep16.result.plan.step_time().communication()) {
    if (c.group() == "ep") CHECK(c.link() == ir::LINK_CLASS_INTER_NODE);
  }
}

TEST_CASE("moe: active parameters set the FLOPs") {
  auto moe = PlanYaml(kMoeSpec);
  REQUIRE(moe.result.ok);
  const ir::Model& m = moe.result.plan.model();
  const LayerFlops f = LayerForwardFlops(m, 512, 2, 1, 1);
  // router 2·T·h·E + routed experts 3 × 2·(T·k)·h·fe.
  CHECK(f.mlp == Approx(2.0 * 1024 * 512 * 8 + 3 * 2.0 * 2048 * 512 * 256));
}

TEST_CASE("moe: a model mixing dense and MoE blocks counts each block's own MLP") {
  auto mixed = PlanYaml(kMoeSpec, {"model.moe.first_dense_layers=1"});
  auto all = PlanYaml(kMoeSpec);
  REQUIRE(mixed.result.ok);
  REQUIRE(all.result.ok);
  const ir::Model& m = mixed.result.plan.model();
  const LayerFlops moe = LayerForwardFlops(m, 512, 2, 1, 1);
  const LayerFlops dense = LayerForwardFlops(m, 512, 2, 1, 1, /*moe_block=*/false);
  // The dense block's SwiGLU of ffn_hidden_size 1376: 3 × 2·T·h·ffn.
  CHECK(dense.mlp == Approx(3 * 2.0 * 1024 * 512 * 1376));
  CHECK(dense.attention == moe.attention);
  // One block of the stage trades its MoE MLP for the dense one, in every micro-step.
  const double m_steps = static_cast<double>(mixed.result.plan.batch().grad_accum_steps());
  const double all_flops = all.result.plan.step_time().stages(0).forward_flops();
  CHECK(mixed.result.plan.step_time().stages(0).forward_flops() ==
        Approx(all_flops - m_steps * (moe.Total() - dense.Total())));
}

TEST_CASE("moe: parallel.expert auto is 1, with the reason") {
  auto planned = PlanYaml(kMoeSpec, {"parallel.expert=auto"});
  REQUIRE(planned.result.ok);
  const ir::ResolvedValue* r = FindResolved(planned.result.plan, "parallel.expert");
  REQUIRE(r != nullptr);
  CHECK(r->value() == "1");
  CHECK(r->reason() == "auto is 1: every rank holds all 8 experts and no token crosses ranks; "
                       "expert parallelism trades expert memory for two all-to-alls per MoE block "
                       "each way, which accel plan --search weighs");
  CHECK(planned.result.plan.model().moe().expert_parallel() == 1);
  CHECK(Groups(planned.result.plan, "ep").empty());
  CHECK(Groups(planned.result.plan, "ep_dp").size() == 1);
}

TEST_CASE("moe: E0424 when the expert degree does not divide") {
  auto ranks = PlanYaml(kMoeSpec, {"parallel.data_shard=4", "parallel.data_replicate=4",
                                   "parallel.expert=8", "model.moe.num_experts=16"});
  CHECK(ranks.diagnostics.find(
            "error[E0424]: expert degree 8 does not divide data_shard(4) * context(1) = 4: "
            "expert-parallel groups are carved out of the data_shard x context ranks, which hold "
            "the same blocks [resolve-auto]") != std::string::npos);
  CHECK(ranks.diagnostics.find("note: torchtitan: ep = dp_shard_in_ep x cp; the remaining "
                               "dp_shard * cp / ep ranks shard each expert's state") !=
        std::string::npos);
  auto experts = PlanYaml(kMoeSpec, {"parallel.expert=16"});
  CHECK(experts.diagnostics.find("error[E0424]: expert degree 16 does not divide num_experts 8: "
                                 "every expert-parallel rank holds an equal share of the routed "
                                 "experts [resolve-auto]") != std::string::npos);
  CHECK(experts.diagnostics.find("job.yaml:13:18: note: num_experts set here") != std::string::npos);
  auto cp = PlanYaml(kMoeSpec, {"parallel.context=4", "parallel.expert=2"});
  CHECK(cp.diagnostics.find("error[E0424]: expert degree 2 is not a multiple of context degree 4: "
                            "an expert-parallel group takes every context rank of its data_shard "
                            "ranks [resolve-auto]") != std::string::npos);
  auto dense = PlanYaml(testing::kBaseSpec, {"parallel.expert=2"});
  CHECK(dense.diagnostics.find("error[E0424]: expert degree 2 needs a mixture-of-experts model "
                               "(model.moe.num_experts), but the model is dense [resolve-auto]") !=
        std::string::npos);
  auto ffn = PlanYaml(kMoeSpec, {"parallel.tensor=3", "cluster.devices_per_node=3",
                                 "cluster.nodes=4", "model.moe.expert_ffn_size=250",
                                 "parallel.expert=1", "model.num_heads=3", "model.num_kv_heads=3",
                                 "model.hidden_size=510", "model.ffn_hidden_size=1377"});
  CHECK(ffn.diagnostics.find("error[E0421]: tensor degree 3 does not divide "
                             "model.moe.expert_ffn_size 250 [resolve-auto]") != std::string::npos);
}

TEST_CASE("moe: E0423 for model.moe fields that do not fit together") {
  auto topk = PlanYaml(kMoeSpec, {"model.moe.experts_per_token=9"});
  CHECK(topk.diagnostics.find("error[E0423]: experts_per_token 9 exceeds num_experts 8: a token "
                              "cannot be routed to more experts than there are [validate-spec]") !=
        std::string::npos);
  CHECK(topk.diagnostics.find("job.yaml:13:18: note: num_experts set here") != std::string::npos);
  const std::string no_topk = R"(version: 1
name: moe
model:
  arch: llama
  hidden_size: 512
  num_layers: 4
  num_heads: 8
  ffn_hidden_size: 1376
  vocab_size: 32000
  max_seq_len: 1024
  moe:
    num_experts: 8
data:
  train: {path: data.bin, format: tokens, tokenizer: bytes}
  seq_len: 512
  micro_batch_size: 2
training:
  steps: 10
cluster: {nodes: 1, devices_per_node: 8, device: cuda, device_memory: 80GiB}
)";
  auto missing = PlanYaml(no_topk);
  CHECK(missing.diagnostics.find(
            "job.yaml:12:18: error[E0423]: model.moe.num_experts 8 needs "
            "model.moe.experts_per_token (top-k, at least 1) [validate-spec]") != std::string::npos);
  CHECK(missing.diagnostics.find(
            "job.yaml:12:18: error[E0423]: model.moe.num_experts 8 needs "
            "model.moe.expert_ffn_size (the inner width of one expert) [validate-spec]") !=
        std::string::npos);
  auto shared = PlanYaml(kMoeSpec, {"model.moe.num_shared_experts=1"});
  CHECK(shared.diagnostics.find("error[E0423]: model.moe.num_shared_experts 1 needs "
                                "model.moe.shared_expert_ffn_size (the inner width of one shared "
                                "expert) [validate-spec]") != std::string::npos);
  auto capacity = PlanYaml(kMoeSpec, {"model.moe.capacity_factor=0.5"});
  CHECK(capacity.diagnostics.find("error[E0423]: capacity_factor 0.5 is below 1: even a perfectly "
                                  "balanced router would drop tokens [validate-spec]") !=
        std::string::npos);
  auto all_dense = PlanYaml(kMoeSpec, {"model.moe.first_dense_layers=4"});
  CHECK(all_dense.diagnostics.find("error[E0423]: every one of the 4 blocks is dense "
                                   "(first_dense_layers 4, sparse_step 1), so no block uses the "
                                   "experts [validate-spec]") != std::string::npos);
  auto gpt2 = PlanYaml(kMoeSpec, {"model.arch=gpt2"});
  CHECK(gpt2.diagnostics.find("error[E0423]: mixture-of-experts blocks need model.arch llama; "
                              "gpt2 has none [validate-spec]") != std::string::npos);
  auto no_experts = PlanYaml(std::string(kMoeSpec).replace(
      std::string(kMoeSpec).find("    num_experts: 8\n"), 18, ""));
  CHECK(no_experts.diagnostics.find("error[E0423]: model.moe has no num_experts, so it describes "
                                    "no experts [validate-spec]") != std::string::npos);
  auto zero = PlanYaml(kMoeSpec, {"model.moe.num_experts=0"});
  CHECK_FALSE(zero.loaded);
  CHECK(zero.diagnostics.find("error[E0104]") != std::string::npos);
}

}  // namespace
}  // namespace accel::planner
