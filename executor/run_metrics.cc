#include "executor/run_metrics.h"

#include <fstream>

#include <nlohmann/json.hpp>

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_format.h"
#include "common/no_follow.h"

namespace accel::exec {

namespace {

std::string JsonNumber(double v) { return std::isfinite(v) ? absl::StrFormat("%.9g", v) : "null"; }

std::string JsonOptional(const std::optional<int64_t>& v) {
  return v.has_value() ? absl::StrCat(*v) : "null";
}

std::string JsonOptional(const std::optional<double>& v) {
  return v.has_value() ? JsonNumber(*v) : "null";
}

// ,"moe":{...} or nothing for a dense model.
std::string MoeJson(const StepRecord& r) {
  if (r.expert_tokens.empty()) return "";
  return absl::StrCat(",\"moe\":{\"expert_tokens\":[", absl::StrJoin(r.expert_tokens, ","),
                      "],\"aux_loss\":", JsonOptional(r.aux_loss), "}");
}

}  // namespace

std::string StepRecordJson(const StepRecord& r) {
  return absl::StrCat(
      "{\"step\":", r.step, ",\"loss\":", JsonNumber(r.loss), ",\"lr\":", JsonNumber(r.lr),
      ",\"grad_norm\":", JsonNumber(r.grad_norm), ",\"tokens\":", r.tokens,
      ",\"step_seconds\":", JsonNumber(r.step_seconds),
      ",\"tokens_per_second\":", JsonNumber(r.tokens_per_second),
      ",\"since_launch_seconds\":", JsonNumber(r.since_launch_seconds),
      ",\"peak_memory_bytes\":", r.peak_resident_bytes,
      ",\"peak_tensor_bytes\":", JsonOptional(r.peak_tensor_bytes),
      ",\"live_tensor_bytes\":", JsonOptional(r.live_tensor_bytes),
      ",\"peak_reserved_bytes\":", JsonOptional(r.peak_reserved_bytes),
      ",\"buckets\":", r.buckets,
      ",\"buckets_launched_in_backward\":", r.buckets_launched_in_backward,
      ",\"backward_seconds\":", JsonNumber(r.backward_seconds),
      ",\"comm_wait_seconds\":", JsonNumber(r.comm_wait_seconds),
      ",\"tp_comm_seconds\":", JsonOptional(r.tp_comm_seconds),
      ",\"loss_scale\":", JsonNumber(r.loss_scale), ",\"skipped\":", r.skipped ? "true" : "false",
      ",\"unix_time\":", absl::StrFormat("%.3f", r.unix_time), MoeJson(r), "}");
}

namespace {

// ,"pipeline":{...} or nothing without pipeline parallelism.
std::string PipelineJson(const RunSummary& s) {
  if (!s.planned_bubble.has_value()) return "";
  std::vector<std::string> waits;
  for (double w : s.measured_wait_per_stage) waits.push_back(JsonNumber(w));
  return absl::StrCat(",\"pipeline\":{\"planned_bubble\":", JsonNumber(*s.planned_bubble),
                      ",\"measured_wait_per_stage\":[", absl::StrJoin(waits, ","), "]}");
}

// ,"tensor_parallel":{...} or nothing without tensor parallelism.
std::string TensorParallelJson(const RunSummary& s) {
  if (!s.tensor_parallel.has_value()) return "";
  const RunSummary::TensorParallelTime& t = *s.tensor_parallel;
  return absl::StrCat(",\"tensor_parallel\":{\"collectives_per_step\":", JsonNumber(t.collectives_per_step),
                      ",\"seconds_per_step\":", JsonNumber(t.seconds_per_step),
                      ",\"planned_collectives_per_step\":", t.planned_collectives_per_step,
                      ",\"planned_exposed_seconds\":", JsonNumber(t.planned_exposed_seconds),
                      ",\"planned_stage\":", t.planned_stage, "}");
}

}  // namespace

std::string RunSummaryJson(const RunSummary& s) {
  return absl::StrCat("{\"steps_done\":", s.steps_done, ",\"steps_this_run\":", s.steps_this_run,
                      ",\"final_loss\":", JsonNumber(s.final_loss),
                      ",\"tokens_per_second\":", JsonNumber(s.tokens_per_second),
                      ",\"world_size\":", s.world_size,
                      ",\"stopped\":", s.stopped ? "true" : "false",
                      ",\"memory\":", s.memory_json.value_or("null"), PipelineJson(s),
                      TensorParallelJson(s), "}\n");
}

absl::Status MetricsFile::Open(const std::string& path, int64_t resumed_step) {
  if (IsSymlink(path)) return SymlinkRefusal(path);
  std::string kept;
  if (resumed_step >= 0) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
      const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      const bool later = record.is_object() && record.contains("step") &&
                         record["step"].is_number_integer() &&
                         record["step"].get<int64_t>() > resumed_step;
      if (!later) kept += line + "\n";
    }
  }
  out_.open(path, std::ios::trunc);
  if (!out_) return absl::InternalError(absl::StrCat("cannot write ", path));
  out_ << kept;
  out_.flush();
  return absl::OkStatus();
}

void MetricsFile::Append(const StepRecord& record) {
  out_ << StepRecordJson(record) << '\n';
  out_.flush();
}

}  // namespace accel::exec
