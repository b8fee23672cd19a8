// The measured-against-estimated memory report (executor/memory/memory_report.h): which terms a
// counting CPU allocator can see, and how the run summary lists them.
#include "executor/memory/memory_report.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace accel::exec {
namespace {

ir::Plan PlanWithEstimate() {
  ir::Plan plan;
  ir::MemoryEstimate* e = plan.add_memory();
  e->set_stage(0);
  auto term = [](ir::MemoryTerm* t, const char* category, int64_t bytes) {
    t->set_category(category);
    t->set_bytes(bytes);
  };
  term(e->add_device(), "parameters", 1000);
  term(e->add_device(), "activations", 300);   // kept by every layer
  term(e->add_device(), "activations", 200);   // the block recomputed in backward
  term(e->add_device(), "runtime_overhead", 5000);
  term(e->add_host(), "optimizer_states", 400);
  return plan;
}

TEST_CASE("the estimate compared with measured tensor bytes: device and host terms, no overhead") {
  const ir::Plan plan = PlanWithEstimate();
  CHECK(EstimatedTensorBytes(plan.memory(0)) == 1000 + 300 + 200 + 400);
  RankMemory rank;
  rank.rank = 1;
  rank.peak_tensor_bytes = 2100;
  const nlohmann::json report = nlohmann::json::parse(MemoryReportJson(plan, {rank}));
  CHECK(report["estimate"][0]["terms"] ==
        nlohmann::json{{"parameters", 1000}, {"activations", 500}, {"host_optimizer_states", 400}});
  CHECK(report["ranks"][0]["estimate_tensor_bytes"] == 1900);
  CHECK(report["ranks"][0]["measured_over_estimate"].get<double>() == Approx(2100.0 / 1900.0));
}

TEST_CASE("on CUDA the estimate leaves host terms out and the report adds the allocator's reserve") {
  const ir::Plan plan = PlanWithEstimate();
  CHECK(EstimatedTensorBytes(plan.memory(0), /*count_host=*/false) == 1000 + 300 + 200);
  RankMemory rank;
  rank.peak_tensor_bytes = 1200;
  rank.peak_reserved_bytes = 1800;
  rank.cuda = true;
  const nlohmann::json row = nlohmann::json::parse(MemoryReportJson(plan, {rank}))["ranks"][0];
  CHECK(row["estimate_tensor_bytes"] == 1500);
  CHECK(row["measured_over_estimate"].get<double>() == Approx(1200.0 / 1500.0));
  CHECK(row["peak_reserved_bytes"] == 1800);
  CHECK(row["reserved_over_estimate"].get<double>() == Approx(1800.0 / 1500.0));
  CHECK(MemorySummaryLine(plan, {rank}) ==
        "memory: peak tensor bytes 0.00 MiB (rank 0; max over 1 ranks) vs estimate 0.00 MiB for "
        "stage 0 without runtime overhead: measured/estimate 0.800; CUDA reserved 0.00 MiB "
        "(reserved/estimate 1.200)");
  // A CPU rank's row has no reserve.
  rank.cuda = false;
  CHECK_FALSE(nlohmann::json::parse(MemoryReportJson(plan, {rank}))["ranks"][0].contains("peak_reserved_bytes"));
}

}  // namespace
}  // namespace accel::exec
