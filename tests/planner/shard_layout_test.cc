// The shard units and buckets decided over the parameter table (planner/shard_layout.h): the
// per-stage totals the summary mode computes without writing units or buckets equal the totals
// of the units and buckets the full planner writes.
#include "planner/shard_layout.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "ir/enum_names.h"
#include "ir/plan_access.h"
#include "planner/memory_model.h"
#include "planner_test_util.h"

namespace accel::planner {
namespace {

// A gpt2 job (tied embeddings) on 8 cpu workers with small buckets, so it has several.
constexpr const char* kTiedSpec = R"(version: 1
name: unit
model: {arch: gpt2, hidden_size: 128, num_layers: 6, num_heads: 4, vocab_size: 256, max_seq_len: 128}
data:
  train: {path: corpus.txt, format: text}
  seq_len: 128
  micro_batch_size: 2
  global_batch_size: 32
training: {steps: 10}
parallel: {data_replicate: auto}
sharding: {bucket_size: 40000, param_persistence_threshold: 1000}
cluster: {nodes: 1, devices_per_node: 8, device: cpu, device_memory: 8GiB}
)";

void CheckEqual(const ShardTotals& a, const ShardTotals& b) {
  REQUIRE(a.stages.size() == b.stages.size());
  for (size_t s = 0; s < a.stages.size(); ++s) {
    INFO("stage " << s);
    const StageShardTotals& x = a.stages[s];
    const StageShardTotals& y = b.stages[s];
    CHECK(x.units == y.units);
    CHECK(x.local_elements == y.local_elements);
    CHECK(x.shard_elements == y.shard_elements);
    CHECK(x.forward_gather_elements == y.forward_gather_elements);
    CHECK(x.forward_gather_units == y.forward_gather_units);
    CHECK(x.backward_gather_elements == y.backward_gather_elements);
    CHECK(x.backward_gather_units == y.backward_gather_units);
    CHECK(x.buckets == y.buckets);
    CHECK(x.bucket_bytes == y.bucket_bytes);
    CHECK(x.last_bucket_bytes == y.last_bucket_bytes);
    CHECK(x.tp_replicated_params == y.tp_replicated_params);
    CHECK(x.tp_replicated_elements == y.tp_replicated_elements);
    CHECK(x.expert_shard_elements == y.expert_shard_elements);
    CHECK(x.expert_gather_elements == y.expert_gather_elements);
    CHECK(x.expert_gather_units == y.expert_gather_units);
    CHECK(x.expert_units == y.expert_units);
    CHECK(x.expert_bucket_bytes == y.expert_bucket_bytes);
  }
}

// The totals of the plan's units and buckets, and the same totals from the layout over the
// table the pass used.
void CheckPlan(const std::string& yaml, const std::vector<std::string>& sets) {
  testing::Planned planned = testing::PlanYaml(yaml, sets);
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  const ModelParams table = BuildModelParams(plan.model(), ir::AxisSize(plan, ir::Axis::kTp));
  const ShardLayout layout =
      LayOutUnits(table, plan.pipeline().stages(), plan.model().tie_word_embeddings());
  const ir::Sharding& sh = plan.sharding();
  REQUIRE(static_cast<int>(layout.units.size()) == sh.units_size());
  for (int u = 0; u < sh.units_size(); ++u) {
    CHECK(layout.units[u].Name() == sh.units(u).name());
    CHECK(layout.units[u].stage == sh.units(u).stage());
    CHECK(layout.Size(layout.units[u]) == sh.units(u).parameters_size());
  }
  const ShardTotals from_layout =
      ShardTotalsFromLayout(layout, std::max<int64_t>(sh.degree(), 1), sh.stage() == 3,
                            sh.param_persistence_threshold_elements(), sh.bucket_elements(),
                            ir::DtypeBytes(plan.precision().reduce_dtype()),
                            plan.model().tie_word_embeddings(), sh.expert_shard_degree());
  CheckEqual(from_layout, ShardTotalsFromPlan(plan));
}

TEST_CASE("shard layout: totals without units equal the plan's units and buckets") {
  for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
           {},
           {"parallel.data_replicate=1", "parallel.data_shard=8", "sharding.stage=3"},
           {"parallel.data_replicate=2", "parallel.data_shard=2", "parallel.pipeline=2",
            "sharding.stage=2"},
           {"parallel.data_replicate=1", "parallel.data_shard=2", "parallel.pipeline=4",
            "sharding.stage=3", "training.recompute=full"},
           {"parallel.data_replicate=1", "parallel.pipeline=4", "parallel.tensor=2",
            "sharding.stage=1"},
           {"parallel.data_replicate=1", "parallel.data_shard=4", "parallel.pipeline=2",
            "sharding.stage=3", "sharding.bucket_size=1000000000"}}) {
    INFO("gpt2 (tied) with " << sets.size() << " overrides");
    CheckPlan(kTiedSpec, sets);
  }
  for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
           {},
           {"parallel.tensor=1", "parallel.data_shard=4", "sharding.stage=3"},
           {"parallel.tensor=2", "parallel.pipeline=4", "sharding.stage=2"}}) {
    INFO("llama (untied) with " << sets.size() << " overrides");
    CheckPlan(testing::kBaseSpec, sets);
  }
  // Mixture of experts: routed experts shard over ep_dp (ep 4 of 16 dp_shard ranks: 4).
  const std::vector<std::string> moe = {
      "model.moe.num_experts=8", "model.moe.experts_per_token=2", "model.moe.expert_ffn_size=256",
      "parallel.data_replicate=1", "parallel.data_shard=8", "parallel.expert=4"};
  for (const char* stage : {"sharding.stage=1", "sharding.stage=3"}) {
    std::vector<std::string> sets = moe;
    sets.push_back(stage);
    INFO("moe with " << stage);
    CheckPlan(testing::kBaseSpec, sets);
    testing::Planned planned = testing::PlanYaml(testing::kBaseSpec, sets);
    REQUIRE(planned.result.ok);
    const ShardTotals totals = ShardTotalsFromPlan(planned.result.plan);
    // 8 blocks x 3 grouped tensors of 8 / 4 experts x 256 / tp 2 x 512, sharded over ep_dp 2.
    CHECK(totals.Stage(0).expert_shard_elements == 8LL * 3 * 2 * 128 * 512 / 2);
    CHECK(totals.Stage(0).expert_units == 8);
    CHECK(totals.Stage(0).expert_bucket_bytes == 8LL * 3 * 2 * 128 * 512 * 4);  // fp32 reduce
  }
}

TEST_CASE("shard layout: a tied head on another stage holds the embedding's copy") {
  testing::Planned planned =
      testing::PlanYaml(kTiedSpec, {"parallel.data_replicate=4", "parallel.pipeline=2"});
  REQUIRE(planned.result.ok);
  const ir::Plan& plan = planned.result.plan;
  const ModelParams table = BuildModelParams(plan.model(), 1);
  const ShardLayout layout = LayOutUnits(table, plan.pipeline().stages(), true);
  const UnitLayout& head = layout.units.back();
  CHECK(head.kind == UnitLayout::Kind::kHead);
  CHECK(head.stage == 1);
  CHECK(head.tied_copy);
  CHECK(layout.Param(head, layout.Size(head) - 1).name == "lm_head.weight");
  CHECK(layout.Param(head, layout.Size(head) - 1).local_count ==
        table.embedding.front().local_count);
}

}  // namespace
}  // namespace accel::planner
