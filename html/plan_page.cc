#include "html/plan_page.h"

#include <vector>

#include "html/embedded_assets.h"
#include "html/html_page.h"
#include "ir/pipeline_simulation.h"
#include "ir/plan_writer.h"
#include "nlohmann/json.hpp"
#include "planner/step_time_diff.h"
#include "spec/job_spec.h"

namespace accel::html {
namespace {

const char* OpLetter(ir::OpKind kind) {
  switch (kind) {
    case ir::FORWARD: return "F";
    case ir::BACKWARD: return "B";
    case ir::BACKWARD_INPUT: return "I";
    case ir::BACKWARD_WEIGHT: return "W";
    default: return "?";
  }
}

nlohmann::json SearchRow(int64_t rank, const planner::RankedLayout& r,
                         const planner::RankedLayout& winner) {
  const planner::Layout& l = r.layout;
  const ir::StepTimeEstimate& t = r.step_time;
  return {{"rank", rank}, {"dp_replicate", l.data_replicate}, {"dp_shard", l.data_shard},
          {"tp", l.tensor}, {"pp", l.pipeline}, {"cp", l.context}, {"ep", l.expert},
          {"sharding_stage", l.sharding_stage}, {"micro_batch", l.micro_batch_size},
          {"accum", r.grad_accum_steps}, {"recompute", spec::Name(l.recompute)},
          {"offload", spec::Name(l.offload)},
          {"schedule", l.pipeline > 1 ? spec::Name(l.schedule) : "-"},
          {"step_seconds", t.step_seconds()}, {"tokens_per_second", t.tokens_per_second()},
          {"mfu", t.mfu()}, {"peak_bytes", r.peak_device_bytes},
          {"limit_bytes", r.device_limit_bytes},
          {"lost", rank == 1 ? std::string("-")
                             : planner::DifferenceText(planner::LargestDifference(
                                   t, winner.step_time))}};
}

// The page's fixed skeleton; plan_page.js fills every section.
constexpr const char* kPlanBody = R"(<header><h1 id="title">accel plan</h1>
<div id="facts" class="facts"></div></header>
<div id="page-errors" class="errors" hidden></div>
<section id="search-section" hidden><h2>Layout search</h2><p id="search-counts"></p>
<div id="search-table"></div></section>
<section><h2>Device mesh</h2><p class="hint">Each cell is a rank (row: node, column: local
device), coloured by pipeline stage. Hover for its coordinates and groups; click a process-group
kind to colour the ranks by their group of that kind.</p><div id="group-kinds" class="buttons"></div>
<div id="mesh-chart" class="chart"></div></section>
<section><h2>Pipeline schedule</h2><p class="hint" id="timeline-note"></p>
<div id="timeline-chart" class="chart tall"></div></section>
<section><h2>Memory per stage</h2><p class="hint">Device memory of one rank of each stage, by
term, against the device limit; hover a term for its formula.</p>
<div id="memory-chart" class="chart"></div><div id="memory-table"></div></section>
<section><h2>Step time</h2><div id="step-facts" class="facts"></div>
<div id="step-chart" class="chart"></div><div id="comm-table"></div></section>
<section><h2>Resolved values</h2><div id="resolved-table"></div></section>
<section id="notes-section" hidden><h2>Notes</h2><div id="notes-table"></div></section>)";

}  // namespace

std::string TimelineJson(const ir::Plan& plan) {
  const ir::PipelineTimeline timeline = ir::SimulatePipeline(plan.pipeline());
  nlohmann::json stages = nlohmann::json::array();
  for (const std::vector<ir::TimelineOp>& ops : timeline.stages) {
    nlohmann::json row = nlohmann::json::array();
    for (const ir::TimelineOp& op : ops) {
      row.push_back({op.slot, OpLetter(op.kind), op.microbatch, op.chunk});
    }
    stages.push_back(std::move(row));
  }
  return nlohmann::json{{"makespan", timeline.makespan_slots},
                        {"bubble_fraction", timeline.bubble_fraction},
                        {"stall", timeline.stall},
                        {"stages", std::move(stages)}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string SearchJson(const planner::SearchResult& result, int64_t top) {
  nlohmann::json rows = nlohmann::json::array();
  const int64_t n = std::min<int64_t>(top, static_cast<int64_t>(result.ranked.size()));
  for (int64_t i = 0; i < n; ++i) {
    rows.push_back(SearchRow(i + 1, result.ranked[i], result.ranked.front()));
  }
  return nlohmann::json{{"global_batch", result.global_batch},
                        {"enumerated", result.enumerated},
                        {"valid", result.valid},
                        {"fitting", result.fitting},
                        {"dominated", result.dominated},
                        {"refused", result.refused},
                        {"seconds", result.seconds},
                        {"rows", std::move(rows)}}
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

absl::StatusOr<std::string> PlanToHtml(const ir::Plan& plan, const planner::SearchResult* search,
                                       int64_t top) {
  std::vector<PageData> data = {{"plan-data", ir::PlanToJson(plan)},
                                {"timeline-data", TimelineJson(plan)}};
  if (search != nullptr) data.push_back({"search-data", SearchJson(*search, top)});
  return HtmlPage("accel plan: " + plan.job().name(), kPlanBody, data, PlanPageScript());
}

}  // namespace accel::html
