// Resource limits (spec/limits.h): a spec over a limit fails at once with a located error, and
// a spec at every limit plans. These used to run until killed, so this binary has a CTest
// timeout instead of timed assertions (bench/plan_bench measures the times).
#include <catch2/catch.hpp>

#include "ir/graph_export.h"
#include "ir/plan_writer.h"
#include "planner_test_util.h"
#include "spec/limits.h"

namespace accel::planner {
namespace {

using testing::kBaseSpec;
using testing::PlanYaml;

// kBaseSpec (a small llama on 2 x 8 devices) with `from` replaced by `to`, so the changed
// value has a location in the file.
std::string With(std::string yaml, const std::string& from, const std::string& to) {
  const size_t at = yaml.find(from);
  REQUIRE(at != std::string::npos);
  return yaml.replace(at, from.size(), to);
}

int64_t OpCount(const ir::Plan& plan) {
  int64_t ops = 0;
  for (const ir::PipelineStage& stage : plan.pipeline().stages()) ops += stage.ops_size();
  return ops;
}

TEST_CASE("a million nodes of 100,000 devices fail in the loader, located", "[limits]") {
  const std::string yaml = With(With(kBaseSpec, "nodes: 2", "nodes: 1000000"),
                                "devices_per_node: 8", "devices_per_node: 100000");
  auto planned = PlanYaml(yaml);
  CHECK_FALSE(planned.loaded);
  CHECK(planned.diagnostics ==
        "job.yaml:22:10: error[E0104]: cluster.nodes must be at most 65536 (accel's limit), got "
        "1000000\n"
        "   nodes: 1000000\n"
        "          ^\n"
        "job.yaml:23:21: error[E0104]: cluster.devices_per_node must be at most 1024 (accel's "
        "limit), got 100000\n"
        "   devices_per_node: 100000\n"
        "                     ^\n");
}

TEST_CASE("nodes x devices_per_node over the world-size limit is refused before planning",
          "[limits]") {
  auto planned = PlanYaml(With(kBaseSpec, "nodes: 2", "nodes: 8193"));
  REQUIRE(planned.loaded);
  CHECK_FALSE(planned.result.ok);
  CHECK(planned.result.last_pass == "validate-spec");
  CHECK(planned.result.plan.ranks_size() == 0);
  CHECK(planned.diagnostics ==
        "job.yaml:22:10: error[E0419]: world size 65544 = cluster.nodes(8193) * "
        "cluster.devices_per_node(8) exceeds accel's limit of 65536 ranks [validate-spec]\n"
        "   nodes: 8193\n"
        "          ^\n"
        "job.yaml:23:21: note: devices_per_node set here\n"
        "note: the plan lists every rank and process group; larger worlds are not planned\n");
}

TEST_CASE("the largest admitted world plans, and every writer runs on it", "[limits]") {
  auto planned = PlanYaml(With(kBaseSpec, "nodes: 2", "nodes: 8192"));
  INFO(planned.diagnostics);
  REQUIRE(planned.result.ok);
  CHECK(planned.result.verifier_violations.empty());
  const ir::Plan& plan = planned.result.plan;
  CHECK(plan.ranks_size() == spec::kMaxWorldSize);
  CHECK(plan.topology().world_size() == spec::kMaxWorldSize);
  CHECK(ir::PlanSummary(plan).find("= 65536 ranks") != std::string::npos);
  CHECK(ir::PlanToDot(plan).rfind("digraph", 0) == 0);
  CHECK(ir::PlanToBinary(plan).size() > static_cast<size_t>(spec::kMaxWorldSize));
}

TEST_CASE("pipeline stages x microbatches over the schedule limit is refused", "[limits]") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.pipeline=8", "data.grad_accum_steps=8193"});
  REQUIRE(planned.loaded);
  CHECK_FALSE(planned.result.ok);
  CHECK(planned.result.last_pass == "resolve-auto");
  CHECK(planned.diagnostics ==
        "--set data.grad_accum_steps=8193: error[E0419]: the pipeline schedule has pp(8) * 8193 "
        "microbatches = 65544 slots, more than accel's limit of 65536 [resolve-auto]\n"
        "--set parallel.pipeline=8: note: pipeline set here\n"
        "note: every slot is a forward and a backward in the plan; use fewer microbatches\n");
}

TEST_CASE("microbatches derived from the global batch count against the limit", "[limits]") {
  // 2 sequences x dp 8 per micro-step: 2,097,152 sequences need 131,072 micro-steps.
  auto planned = PlanYaml(With(kBaseSpec, "  micro_batch_size: 2\n",
                               "  micro_batch_size: 2\n  global_batch_size: 2097152\n"));
  REQUIRE(planned.loaded);
  CHECK(planned.diagnostics ==
        "job.yaml:16:22: error[E0419]: the pipeline schedule has pp(1) * 131072 microbatches = "
        "131072 slots, more than accel's limit of 65536 [resolve-auto]\n"
        "   global_batch_size: 2097152\n"
        "                      ^\n"
        "note: every slot is a forward and a backward in the plan; use fewer microbatches\n");
}

TEST_CASE("tokens per step over the limit are refused", "[limits]") {
  // 65,536 sequences per micro-step on 8 data-parallel ranks, 16 micro-steps, 1,024 tokens each.
  auto planned = PlanYaml(kBaseSpec, {"data.micro_batch_size=65536", "data.seq_len=1024",
                                      "data.global_batch_size=8388608"});
  REQUIRE(planned.loaded);
  CHECK(planned.diagnostics ==
        "--set data.global_batch_size=8388608: error[E0419]: one step takes "
        "global_batch_size(8388608) * seq_len(1024) = 8589934592 tokens, more than accel's limit "
        "of 4294967296 [resolve-auto]\n"
        "--set data.seq_len=1024: note: seq_len set here\n");
}

TEST_CASE("degrees whose product needs more than 64 bits show it exactly", "[limits]") {
  auto planned = PlanYaml(kBaseSpec, {"parallel.data_replicate=65536", "parallel.data_shard=65536",
                                      "parallel.context=65536", "parallel.tensor=65536",
                                      "parallel.pipeline=65536"});
  REQUIRE(planned.loaded);
  CHECK(planned.diagnostics.find(
            "error[E0401]: parallel degrees do not multiply to the world size: "
            "dp_replicate(65536) * dp_shard(65536) * cp(65536) * tp(65536) * pp(65536) = "
            "1208925819614629174706176 != 16") != std::string::npos);
}

// Every loop of the planner at its limit at once: 65,536 ranks, 2,048 layers over 64 stages,
// 1,024 microbatches (65,536 schedule slots). Small devices make estimate-memory search its
// suggestions too, which re-estimates every stage several times.
TEST_CASE("a job at every planning limit at once still plans", "[limits]") {
  const std::string yaml = With(With(With(kBaseSpec, "num_layers: 8", "num_layers: 2048"),
                                     "nodes: 2", "nodes: 8192"),
                                "  tensor: 2\n", "  tensor: 2\n  pipeline: 64\n"
                                "  pipeline_microbatches: 1024\n");
  auto fits = PlanYaml(yaml, {"cluster.device_memory=8TiB"});
  INFO(fits.diagnostics);
  REQUIRE(fits.result.ok);
  const ir::Plan& plan = fits.result.plan;
  CHECK(plan.pipeline().stages_size() == 64);
  CHECK(plan.pipeline().microbatches() == 1024);
  // 1F1B: every stage runs 1,024 forwards and backwards with their sends and receives.
  CHECK(OpCount(plan) == 64 * 1024 * 2 + 63 * 1024 * 4);
  CHECK(plan.sharding().units_size() == 2048 + 2);
  CHECK(ir::PlanToDot(plan).rfind("digraph", 0) == 0);

  auto small = PlanYaml(yaml, {"cluster.device_memory=1GiB"});
  CHECK(small.result.last_pass == "estimate-memory");
  CHECK(small.diagnostics.find("error[E0501]") != std::string::npos);
}

}  // namespace
}  // namespace accel::planner
