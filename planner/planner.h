#ifndef ACCEL_PLANNER_PLANNER_H_
#define ACCEL_PLANNER_PLANNER_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "ir/plan.pb.h"
#include "planner/model_params.h"
#include "planner/shard_layout.h"
#include "spec/job_spec.h"

namespace accel::planner {

struct PlanOptions {
  // Stop after this pass and return the plan as it is then ("" = run all passes).
  std::string dump_after;
  // Run ir::VerifyPlan after every pass; a violation is reported as an internal error
  // diagnostic (tests turn this on; it costs time on very large worlds).
  bool verify_each_pass = false;
  // Skip the memory-fit error (estimate-memory still fills the estimate): used by
  // `accel estimate-memory`, which reports fit itself.
  bool allow_not_fitting = false;
  // Summary mode, for the layout search: every pass runs with every check and diagnostic of a
  // full plan, and plan.memory and plan.step_time hold the full plan's numbers (without the
  // formula and source texts), but the tables that grow with the world size, the layer count
  // or the microbatches are not written: no
  // plan.ranks or process_groups (the estimates take group sizes and links from the mesh),
  // no pipeline ops (max_inflight_microbatches is kept), no shard units or buckets (their
  // per-stage totals stay inside the planner), no recompute_modules. Such a plan is a summary:
  // it does not pass ir::VerifyPlan (verify_each_pass is ignored) and must not be run; plan the
  // chosen layout again without this option.
  bool summary_only = false;
  // With allow_not_fitting: when some stage does not fit, estimate-step-time still checks the
  // device profile (its errors are the same) but writes no plan.step_time. The layout search
  // ranks only fitting candidates and sets this to skip the estimate of the others.
  bool step_time_only_if_fits = false;
  // Parameter tables shared by plans of the same model (not owned; null: each plan builds its
  // own). The layout search passes one cache to all of its candidates.
  ModelParamsCache* model_params_cache = nullptr;
  // Summary mode: shard totals shared by plans of the same model (not owned; null: each plan
  // computes its own); used only together with model_params_cache, whose tables key it. The
  // layout search passes one cache to all of its candidates.
  ShardTotalsCache* shard_totals_cache = nullptr;
};

// Result of planning: the plan (complete, or as it was after `dump_after`, or after the pass
// that failed) and the name of the last pass that ran.
struct PlanResult {
  ir::Plan plan;
  std::string last_pass;
  bool ok = false;  // no errors reported
  std::vector<std::string> verifier_violations;
};

// Runs the pass pipeline on a loaded spec. Errors go to `sink`; the pipeline stops after the
// first pass that reported an error. Unknown `dump_after` names are a usage error the caller
// checks with IsPassName first.
PlanResult BuildPlan(const spec::JobSpec& spec, const PlanOptions& options, DiagnosticSink& sink);

// BuildPlan for callers that only read the plan (the layout search): the plan is built on a
// protobuf arena, so its thousands of per-rank fields are freed at once instead of one by one,
// and `inspect` reads it before the arena goes. The same passes and checks as BuildPlan.
// Returns BuildPlan's `ok` (no errors; verifier clean when options.verify_each_pass).
bool BuildPlanAndInspect(const spec::JobSpec& spec, const PlanOptions& options,
                         DiagnosticSink& sink, const std::function<void(const ir::Plan&)>& inspect);

// Runs every pass on `spec` for its diagnostics only (the plan is discarded): what
// `accel validate` adds to the loader's checks, so CI catches layouts that cannot work.
void CheckSpec(const spec::JobSpec& spec, DiagnosticSink& sink);

// The pass names in order.
std::vector<std::string> PassNames();
bool IsPassName(const std::string& name);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_PLANNER_H_
