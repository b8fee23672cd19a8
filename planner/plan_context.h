#ifndef ACCEL_PLANNER_PLAN_CONTEXT_H_
#define ACCEL_PLANNER_PLAN_CONTEXT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "ir/plan.pb.h"
#include "planner/model_params.h"
#include "planner/shard_layout.h"
#include "spec/job_spec.h"

namespace accel::planner {

// Everything a pass reads and writes. The spec is read-only; each pass writes only its own part
// of `plan` and reports user errors to `sink` (tagged with the pass name).
class PlanContext {
 public:
  PlanContext(const spec::JobSpec& spec, DiagnosticSink& sink) : spec_(spec), sink_(sink) {}
  // Writes into `plan` (not owned; e.g. a message on a protobuf arena) instead of its own.
  PlanContext(const spec::JobSpec& spec, DiagnosticSink& sink, ir::Plan* plan)
      : spec_(spec), sink_(sink), plan_(plan) {}
  PlanContext(const PlanContext&) = delete;
  PlanContext& operator=(const PlanContext&) = delete;

  const spec::JobSpec& spec() const { return spec_; }
  ir::Plan& plan() { return *plan_; }
  const ir::Plan& plan() const { return *plan_; }
  DiagnosticSink& sink() { return sink_; }

  // When true the estimate-memory pass records a plan that does not fit without reporting
  // an error (`accel estimate-memory` reports the fit itself).
  void set_allow_not_fitting(bool allow) { allow_not_fitting_ = allow; }
  bool allow_not_fitting() const { return allow_not_fitting_; }

  // Summary mode (PlanOptions.summary_only): passes skip the plan's per-rank and per-parameter
  // tables and keep what the estimates read in the context instead.
  void set_summary_only(bool summary) { summary_only_ = summary; }
  bool summary_only() const { return summary_only_; }

  // PlanOptions.step_time_only_if_fits: estimate-step-time leaves plan.step_time empty when a
  // stage does not fit.
  void set_step_time_only_if_fits(bool only) { step_time_only_if_fits_ = only; }
  bool step_time_only_if_fits() const { return step_time_only_if_fits_; }

  // Tables shared with other plans of the same model (not owned; null: this plan builds its
  // own).
  void set_model_params_cache(ModelParamsCache* cache) { params_cache_ = cache; }
  // Summary-mode shard totals shared with other plans (PlanOptions.shard_totals_cache; not
  // owned; null: none).
  void set_shard_totals_cache(ShardTotalsCache* cache) { shard_totals_cache_ = cache; }
  ShardTotalsCache* shard_totals_cache() const { return shard_totals_cache_; }

  // The parameter table of the plan's model (plan.model(), padded vocabulary included, so only
  // after resolve-auto) at tensor degree `tp`: built once per plan, or taken from the shared
  // cache. Valid for the context's lifetime.
  const ModelParams& ModelParamsFor(int64_t tp);

  // Summary mode: the per-stage totals of the shard units and buckets build-shard-groups did
  // not write (null before that pass and in full mode).
  void set_shard_totals(ShardTotals totals) { shard_totals_ = std::move(totals); }
  const ShardTotals* shard_totals() const { return shard_totals_ ? &*shard_totals_ : nullptr; }

  // The pass now running; diagnostics and resolved values are tagged with it.
  void set_current_pass(std::string_view name) { current_pass_ = name; }
  const std::string& current_pass() const { return current_pass_; }

  // Reports an error about the spec field `field` (dotted path), located at that field's value
  // in the spec (or its nearest located ancestor). Returns the diagnostic for notes.
  Diagnostic& Error(const char* code, const std::string& field, std::string message);
  Diagnostic& Warning(const char* code, const std::string& field, std::string message);
  // A standalone note (no code), e.g. "vocab_size 50257 padded to 50432".
  Diagnostic& Info(const std::string& field, std::string message);

  // Adds a note to `d` pointing at where `field` was set ("num_heads set here"), when the
  // field has a location.
  void NoteField(Diagnostic& d, const std::string& field, std::string message) const;

  // Records a decision in plan.resolved: field, value and the reason with its arithmetic (not
  // in summary mode, whose plans are never shown).
  void Resolve(const std::string& field, std::string value, std::string reason);

  // Mirrors plan warnings/notes into plan.notes so `accel plan` can show them.
  void RecordNote(const Diagnostic& d);

 private:
  Diagnostic& Report(Severity severity, const char* code, const std::string& field,
                     std::string message);

  const spec::JobSpec& spec_;
  DiagnosticSink& sink_;
  ir::Plan owned_plan_;
  ir::Plan* plan_ = &owned_plan_;
  std::string current_pass_;
  bool allow_not_fitting_ = false;
  bool summary_only_ = false;
  bool step_time_only_if_fits_ = false;
  ModelParamsCache* params_cache_ = nullptr;
  ShardTotalsCache* shard_totals_cache_ = nullptr;
  const ModelParams* params_ = nullptr;  // the table for params_tp_
  int64_t params_tp_ = 0;
  std::optional<ModelParams> own_params_;
  std::optional<ShardTotals> shard_totals_;
};

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_PLAN_CONTEXT_H_
