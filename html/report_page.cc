#include "html/report_page.h"

#include <cmath>

#include "html/embedded_assets.h"
#include "html/html_page.h"

namespace accel::html {
namespace {

nlohmann::json Doubles(const std::vector<double>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (double x : v) out.push_back(std::isfinite(x) ? nlohmann::json(x) : nlohmann::json());
  return out;
}

nlohmann::json Bytes(const std::vector<int64_t>& v) {
  nlohmann::json out = nlohmann::json::array();
  for (int64_t x : v) out.push_back(x < 0 ? nlohmann::json() : nlohmann::json(x));
  return out;
}

nlohmann::json StepsJson(const StepSeries& s) {
  return {{"step", s.step},
          {"loss", Doubles(s.loss)},
          {"lr", Doubles(s.lr)},
          {"grad_norm", Doubles(s.grad_norm)},
          {"tokens_per_second", Doubles(s.tokens_per_second)},
          {"step_seconds", Doubles(s.step_seconds)},
          {"peak_memory_bytes", Bytes(s.peak_memory_bytes)},
          {"peak_tensor_bytes", Bytes(s.peak_tensor_bytes)},
          {"peak_reserved_bytes", Bytes(s.peak_reserved_bytes)},
          {"skipped", s.skipped}};
}

// What the report compares the run with: the plan's estimates.
nlohmann::json PlanReference(const ir::Plan& plan) {
  nlohmann::json stages = nlohmann::json::array();
  int64_t limit = 0;
  std::vector<int64_t> ranks_per_stage(plan.memory_size(), 0);
  nlohmann::json rank_stage = nlohmann::json::array();
  for (const ir::RankPlacement& r : plan.ranks()) {
    rank_stage.push_back(r.stage());
    if (r.stage() >= 0 && r.stage() < plan.memory_size()) ++ranks_per_stage[r.stage()];
  }
  for (int i = 0; i < plan.memory_size(); ++i) {
    const ir::MemoryEstimate& m = plan.memory(i);
    limit = std::max(limit, m.device_limit_bytes());
    stages.push_back({{"stage", m.stage()},
                      {"device_total_bytes", m.device_total_bytes()},
                      {"ranks", ranks_per_stage[i]}});
  }
  return {{"job", plan.job().name()},
          {"world_size", plan.topology().world_size()},
          {"step_seconds", plan.step_time().step_seconds()},
          {"tokens_per_second", plan.step_time().tokens_per_second()},
          {"bubble_fraction", plan.pipeline().bubble_fraction()},
          {"device_limit_bytes", limit},
          {"stages", std::move(stages)},
          {"rank_stage", std::move(rank_stage)}};
}

constexpr const char* kReportBody = R"(<header><h1 id="title">accel report</h1>
<div id="facts" class="facts"></div><p id="plan-link"></p></header>
<div id="page-errors" class="errors" hidden></div>
<section><h2>Loss</h2><div id="loss-chart" class="chart"></div></section>
<section><h2>Learning rate and gradient norm</h2><div id="lr-chart" class="chart"></div></section>
<section><h2>Throughput and step time</h2><p class="hint">Dashed: the plan's estimate.</p>
<div id="speed-chart" class="chart"></div></section>
<section><h2>Memory per step (rank 0)</h2><p class="hint">Dashed: the plan's estimates for
rank 0's stage.</p><div id="memory-chart" class="chart"></div></section>
<section id="ranks-section" hidden><h2>Peak memory per rank</h2><p class="hint">From
summary.json: each rank's measured peak next to the estimate for its stage.</p>
<div id="ranks-chart" class="chart"></div><div id="ranks-table"></div></section>)";

}  // namespace

std::string RunReportJson(const RunData& run, const std::string& plan_href) {
  return nlohmann::json{{"dir", run.dir},
                        {"steps", StepsJson(run.steps)},
                        {"summary", run.summary.value_or(nlohmann::json())},
                        {"plan", run.plan ? PlanReference(*run.plan) : nlohmann::json()},
                        {"plan_href", plan_href}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<std::string> RunReportToHtml(const RunData& run, const std::string& plan_href) {
  const std::string name = run.plan ? run.plan->job().name() : run.dir;
  return HtmlPage("accel report: " + name, kReportBody,
                  {{"report-data", RunReportJson(run, plan_href)}}, ReportPageScript());
}

}  // namespace accel::html
