#include "planner/plan_context.h"

namespace accel::planner {

Diagnostic& PlanContext::Report(Severity severity, const char* code, const std::string& field,
                                std::string message) {
  spec::FieldSource source = spec_.Locate(field);
  Diagnostic d;
  d.severity = severity;
  d.code = code ? code : "";
  d.file = source.file;
  // A section (no dot) is pointed at by its key; a field by its value.
  bool is_section = field.find('.') == std::string::npos;
  d.location = (!is_section && source.value.known()) ? source.value : source.key;
  if (!d.location.known()) d.location = source.value;
  d.field = field;
  d.message = std::move(message);
  d.origin = current_pass_;
  if (severity != Severity::kError) RecordNote(d);
  return sink_.Add(std::move(d));
}

Diagnostic& PlanContext::Error(const char* code, const std::string& field, std::string message) {
  return Report(Severity::kError, code, field, std::move(message));
}

Diagnostic& PlanContext::Warning(const char* code, const std::string& field,
                                 std::string message) {
  return Report(Severity::kWarning, code, field, std::move(message));
}

Diagnostic& PlanContext::Info(const std::string& field, std::string message) {
  return Report(Severity::kNote, nullptr, field, std::move(message));
}

void PlanContext::NoteField(Diagnostic& d, const std::string& field, std::string message) const {
  auto it = spec_.sources.find(field);
  if (it == spec_.sources.end() || it->second.origin == spec::Origin::kDefault) return;
  const spec::FieldSource& source = it->second;
  d.Note(source.file, source.value.known() ? source.value : source.key, std::move(message));
}

void PlanContext::Resolve(const std::string& field, std::string value, std::string reason) {
  // Only the plan's text and JSON show them; a summary (a search candidate) is never shown.
  if (summary_only_) return;
  ir::ResolvedValue* resolved = plan_->add_resolved();
  resolved->set_field(field);
  resolved->set_value(std::move(value));
  resolved->set_reason(std::move(reason));
  resolved->set_pass(current_pass_);
}

const ModelParams& PlanContext::ModelParamsFor(int64_t tp) {
  if (params_ != nullptr && params_tp_ == tp) return *params_;
  if (params_cache_ != nullptr) {
    params_ = &params_cache_->Get(plan_->model(), tp);
  } else {
    own_params_ = BuildModelParams(plan_->model(), tp);
    params_ = &*own_params_;
  }
  params_tp_ = tp;
  return *params_;
}

void PlanContext::RecordNote(const Diagnostic& d) {
  ir::PlanNote* note = plan_->add_notes();
  note->set_severity(d.severity == Severity::kWarning ? ir::SEVERITY_WARNING : ir::SEVERITY_NOTE);
  note->set_code(d.code);
  note->set_field(d.field);
  note->set_message(d.message);
}

}  // namespace accel::planner
