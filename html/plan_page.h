// `accel plan JOB --format html` (and `--search --format html`): the plan as one interactive,
// self-contained page (html/plan_page.js draws it with the embedded charting library).
#ifndef ACCEL_HTML_PLAN_PAGE_H_
#define ACCEL_HTML_PLAN_PAGE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "planner/layout_search.h"

namespace accel::html {

// The pipeline as SimulatePipeline places it, for the timeline chart:
//   {"makespan": slots, "bubble_fraction": x, "stall": "...",
//    "stages": [[[slot, "F"|"B"|"I"|"W", microbatch, chunk], ...], ...]}
// one array per stage in Pipeline.stages order ("I"/"W": backward input / weight). Compact
// arrays: a 4-stage, 128-microbatch 1F1B step is about 20 kB.
std::string TimelineJson(const ir::Plan& plan);

// The first `top` ranked layouts of `result` and its counts:
//   {"global_batch": n, "enumerated": n, "valid": n, "fitting": n, "dominated": n,
//    "refused": n, "seconds": s, "rows": [{"rank": 1, "dp_replicate": n, "dp_shard": n,
//    "tp": n, "pp": n, "cp": n, "ep": n, "sharding_stage": n, "micro_batch": n, "accum": n,
//    "recompute": "none", "offload": "none", "schedule": "1f1b" | "-", "step_seconds": s,
//    "tokens_per_second": x, "mfu": x, "peak_bytes": n, "limit_bytes": n,
//    "lost": "exposed tp communication +12.3 ms" | "-"}, ...]}
// "lost" is the step-time term each row loses to the winner by (planner/step_time_diff.h), as
// `accel plan --search` prints it.
std::string SearchJson(const planner::SearchResult& result, int64_t top);

// The page of `plan`: mesh, process groups, pipeline timeline, per-stage memory, step time,
// resolved values, notes; with `search` (not null) also its ranked table (SearchJson, `top`
// rows), `plan` then being the winner's. The plan is embedded as ir::PlanToJson's JSON, the
// timeline as TimelineJson. Errors: FailedPrecondition when the binary has no charting library
// (html/chart_library.h).
absl::StatusOr<std::string> PlanToHtml(const ir::Plan& plan,
                                       const planner::SearchResult* search = nullptr,
                                       int64_t top = 10);

}  // namespace accel::html

#endif  // ACCEL_HTML_PLAN_PAGE_H_
