// `accel report RUN_DIR --format html`: a run's metrics per step against the plan's estimates,
// as one self-contained page (html/report_page.js draws it).
#ifndef ACCEL_HTML_REPORT_PAGE_H_
#define ACCEL_HTML_REPORT_PAGE_H_

#include <string>

#include "absl/status/statusor.h"
#include "html/run_report.h"

namespace accel::html {

// The page's data:
//   {"dir": "...", "steps": {"step": [...], "loss": [...], "lr": [...], "grad_norm": [...],
//    "tokens_per_second": [...], "step_seconds": [...], "peak_memory_bytes": [...],
//    "peak_tensor_bytes": [... | null], "peak_reserved_bytes": [... | null], "skipped": [...]},
//    "summary": summary.json | null,
//    "plan": null | {"job": name, "world_size": n, "step_seconds": s, "tokens_per_second": x,
//             "bubble_fraction": x, "device_limit_bytes": n,
//             "stages": [{"stage": s, "device_total_bytes": n, "ranks": n}, ...],
//             "rank_stage": [stage of rank 0, of rank 1, ...]},
//    "plan_href": "plan.html" | ""}
// NaN and unmeasured (-1) values are null.
std::string RunReportJson(const RunData& run, const std::string& plan_href);

// The report page; `plan_href` (a relative URL, "" for none) links the plan's own page.
// Errors: FailedPrecondition when the binary has no charting library.
absl::StatusOr<std::string> RunReportToHtml(const RunData& run, const std::string& plan_href);

}  // namespace accel::html

#endif  // ACCEL_HTML_REPORT_PAGE_H_
