// What `accel report` reads of a run directory (docs/run.md "The run directory"): rank 0's
// metrics.jsonl, summary.json when the run finished, and the plan the workers executed.
#ifndef ACCEL_HTML_RUN_REPORT_H_
#define ACCEL_HTML_RUN_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "nlohmann/json.hpp"

namespace accel::html {

// The per-step series of metrics.jsonl (executor/run_metrics.h StepRecordJson), one entry per
// line in file order. Seconds, bytes, tokens/s; NaN where the file has null (a non-finite
// value), and -1 for a byte count the run did not measure (null).
struct StepSeries {
  std::vector<int64_t> step;
  std::vector<double> loss, lr, grad_norm, tokens_per_second, step_seconds;
  std::vector<int64_t> peak_memory_bytes;  // process max RSS so far
  std::vector<int64_t> peak_tensor_bytes;  // allocator's peak during the step; -1: not measured
  std::vector<int64_t> peak_reserved_bytes;  // CUDA only; -1 elsewhere
  std::vector<bool> skipped;                 // fp16 overflow: the optimizer did not step
};

struct RunData {
  std::string dir;                     // as given
  StepSeries steps;
  std::optional<nlohmann::json> summary;  // summary.json; absent while running or after a crash
  std::optional<ir::Plan> plan;           // plan.binpb; absent in a directory without one
};

// Parses metrics.jsonl text; `path` only names the file in messages. Blank lines are skipped.
// Errors: InvalidArgument located at the line, e.g.
//   "runs/x/metrics.jsonl:3: not JSON: ..." or
//   "runs/x/metrics.jsonl:3: field \"loss\": expected a number or null, got \"abc\"",
// for a missing required field (step, loss, lr, grad_norm, tokens_per_second, step_seconds,
// peak_memory_bytes) too; "...: no steps" when the file has no record.
absl::StatusOr<StepSeries> ParseMetrics(const std::string& text, const std::string& path);

// Reads run directory `dir`. Errors: NotFound when `dir` is not a directory or has no
// metrics.jsonl (the message says which); InvalidArgument for malformed metrics.jsonl
// (ParseMetrics), summary.json ("DIR/summary.json: not JSON: ...") or plan.binpb
// ("DIR/plan.binpb: not an accel plan"); FailedPrecondition for a file over 256 MiB.
absl::StatusOr<RunData> ReadRunDirectory(const std::string& dir);

}  // namespace accel::html

#endif  // ACCEL_HTML_RUN_REPORT_H_
