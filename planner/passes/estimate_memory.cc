// estimate-memory: the per-rank memory of every pipeline stage, term by term with formula and
// source (planner/memory_estimator.h), written to plan.memory. A stage over the device limit is
// error E0501 on cluster.device_memory, with the breakdown and the single changes that were
// re-estimated and found to fit, unless the caller allows plans that do not fit. Summary mode
// records the terms' bytes without formulas and sources (the same totals and fit).
#include <algorithm>
#include <string>

#include "common/diag_codes.h"
#include "common/units.h"
#include "planner/memory_estimator.h"
#include "planner/pass.h"

namespace accel::planner {
namespace {

class EstimateMemoryPass : public Pass {
 public:
  std::string_view name() const override { return "estimate-memory"; }

  void Run(PlanContext& context) override {
    ir::Plan& plan = context.plan();
    absl::StatusOr<MemoryInputs> inputs =
        MemoryInputsFromPlan(plan, plan.mesh().sequence_parallel());
    const absl::Status status =
        inputs.ok() ? Estimate(context, *inputs, !context.summary_only()) : inputs.status();
    if (!status.ok()) {
      // The earlier passes write only names this pass knows; anything else is an accel bug.
      context.Error(nullptr, "", "internal error: " + std::string(status.message()));
      return;
    }
    if (context.allow_not_fitting() || EveryStageFits(plan)) return;
    // Summary mode left the formulas out; the error shows them.
    if (context.summary_only()) Estimate(context, *inputs, true).IgnoreError();

    const ir::MemoryEstimate* worst = nullptr;
    std::vector<int32_t> over;
    for (const ir::MemoryEstimate& e : plan.memory()) {
      if (e.fits()) continue;
      over.push_back(e.stage());
      if (worst == nullptr || e.device_total_bytes() > worst->device_total_bytes()) worst = &e;
    }
    if (worst == nullptr) return;

    Diagnostic& d = context.Error(
        codes::kDoesNotFit, "cluster.device_memory",
        "stage " + std::to_string(worst->stage()) + " needs " +
            FormatBytes(worst->device_total_bytes()) +
            " per device but cluster.device_memory is " + FormatBytes(worst->device_limit_bytes()));
    for (const ir::MemoryTerm& t : worst->device()) {
      d.Note(t.category() + ": " + FormatBytes(t.bytes()) + " = " + t.formula());
    }
    if (worst->host_total_bytes() > 0) {
      d.Note("host (offloaded, not counted on the device): " + FormatBytes(worst->host_total_bytes()));
    }
    if (over.size() > 1) {
      std::string others;
      for (int32_t s : over) {
        if (s == worst->stage()) continue;
        others += (others.empty() ? "" : ", ") + std::to_string(s);
      }
      d.Note("stage" + std::string(over.size() > 2 ? "s " : " ") + others +
             (over.size() > 2 ? " do" : " does") + " not fit either");
    }
    const std::vector<FitSuggestion> suggestions = SuggestChangesThatFit(*inputs);
    for (const FitSuggestion& s : suggestions) d.Note(s.text);
    if (suggestions.empty()) {
      d.Note("no single change of sharding.stage, training.recompute, sharding.offload, "
             "data.micro_batch_size, parallel.tensor or parallel.pipeline makes every stage fit; "
             "combine them or use more devices");
    }
  }

 private:
  // Writes plan.memory, with formulas and sources when `explain`.
  static absl::Status Estimate(PlanContext& context, MemoryInputs& inputs, bool explain) {
    inputs.explain = explain;
    context.plan().clear_memory();
    return EstimateMemoryInto(inputs, context.ModelParamsFor(inputs.tp),
                              *context.plan().mutable_memory());
  }

  static bool EveryStageFits(const ir::Plan& plan) {
    for (const ir::MemoryEstimate& e : plan.memory()) {
      if (!e.fits()) return false;
    }
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeEstimateMemoryPass() { return std::make_unique<EstimateMemoryPass>(); }

}  // namespace accel::planner
