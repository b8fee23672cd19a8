#ifndef ACCEL_CLI_PLAN_SEARCH_H_
#define ACCEL_CLI_PLAN_SEARCH_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "planner/layout_search.h"
#include "spec/job_spec.h"

// `accel plan JOB --search [--top N] [--emit-spec FILE]`: the layout search's table and the
// winner written back as a spec (planner/layout_search.h does the searching).
namespace accel::cli {

// The table of the first `top` ranked layouts of `result`: rank, degrees
// (dp_replicate x dp_shard x tp x pp), context degree, sharding stage, micro batch,
// accumulation, recompute, sharding offload, schedule ("-" without pipelining), step time, tokens/s, MFU, peak device memory / limit, and
// for every row after the first the step-time term it lost to the winner by
// (planner/step_time_diff.h). Then the counts (enumerated, valid, fitting, and when non-zero
// the dominated variants not planned and the refused) and the search time
// with candidates/s. With no fitting layout the table is replaced by a sentence saying so.
std::string SearchTable(const spec::JobSpec& spec, const planner::SearchResult& result,
                        int64_t top);

// Runs the search on the spec at `spec_path` (with `overrides`) and writes the table to `out`
// (or to `output` when not "" / "-"), or with `html` instead the page of the winner's plan
// (planned in full) with the ranking above it (html::PlanToHtml); with `emit_spec` not "" it
// also writes the layout ranked `emit_rank` (1 = the winner) as a spec there. Returns an exit
// code: 0 done, 1 the spec is invalid or no layout fits (with `emit_spec` or `html`, which then
// have nothing to show; otherwise the table says so and exits 0), 2 usage (global batch auto
// and unresolvable; fewer than `emit_rank` fitting layouts; html from a build without the
// charting library), 3 internal (the winner does not plan in full), 4 a
// file cannot be written. Without `forecast`, layouts the executor does not run
// (exec::ExecutorSupportIssues of a build with CUDA and SDPA: the search varies no device or
// precision, so what remains is context parallelism) are refused rather than ranked, so every
// ranked layout, the emitted one included, is one `accel run` executes.
int RunPlanSearch(const std::string& spec_path, const std::vector<std::string>& overrides,
                  int64_t top, const std::string& output, const std::string& emit_spec,
                  int64_t emit_rank, bool forecast, bool html, std::ostream& out,
                  std::ostream& err);

}  // namespace accel::cli

#endif  // ACCEL_CLI_PLAN_SEARCH_H_
