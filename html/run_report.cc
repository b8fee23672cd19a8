#include "html/run_report.h"

#include <cmath>
#include <filesystem>
#include <limits>

#include "absl/strings/str_cat.h"
#include "spec/file_reader.h"

namespace accel::html {
namespace {

constexpr size_t kMaxRunFileBytes = size_t{256} << 20;

// The located error of field `name` on line `line` of `path`.
absl::Status FieldError(const std::string& path, int line, const std::string& name,
                        const std::string& what, const nlohmann::json* got) {
  std::string message = absl::StrCat(path, ":", line, ": field \"", name, "\": ", what);
  if (got != nullptr) {
    std::string shown = got->dump();
    if (shown.size() > 40) shown = shown.substr(0, 40) + "...";
    absl::StrAppend(&message, ", got ", shown);
  }
  return absl::InvalidArgumentError(message);
}

// A number field (null reads as NaN: StepRecordJson writes non-finite numbers so).
absl::StatusOr<double> Number(const nlohmann::json& record, const std::string& name,
                              const std::string& path, int line) {
  auto it = record.find(name);
  if (it == record.end()) return FieldError(path, line, name, "missing", nullptr);
  if (it->is_null()) return std::numeric_limits<double>::quiet_NaN();
  if (!it->is_number()) return FieldError(path, line, name, "expected a number or null", &*it);
  return it->get<double>();
}

// A whole-number field; `absent` when it is missing or null and `required` is false.
absl::StatusOr<int64_t> Integer(const nlohmann::json& record, const std::string& name,
                                const std::string& path, int line, bool required,
                                int64_t absent = -1) {
  auto it = record.find(name);
  if (it == record.end() || it->is_null()) {
    if (!required) return absent;
    return FieldError(path, line, name, "missing", it == record.end() ? nullptr : &*it);
  }
  if (!it->is_number_integer()) return FieldError(path, line, name, "expected an integer", &*it);
  return it->get<int64_t>();
}

// Appends one parsed record to `s`.
absl::Status AppendRecord(const nlohmann::json& r, const std::string& path, int line,
                          StepSeries& s) {
  if (!r.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ":", line, ": expected a JSON object"));
  }
  absl::StatusOr<int64_t> step = Integer(r, "step", path, line, true);
  if (!step.ok()) return step.status();
  std::vector<std::pair<const char*, std::vector<double>*>> numbers = {
      {"loss", &s.loss}, {"lr", &s.lr}, {"grad_norm", &s.grad_norm},
      {"tokens_per_second", &s.tokens_per_second}, {"step_seconds", &s.step_seconds}};
  for (auto& [name, series] : numbers) {
    absl::StatusOr<double> v = Number(r, name, path, line);
    if (!v.ok()) return v.status();
    series->push_back(*v);
  }
  absl::StatusOr<int64_t> rss = Integer(r, "peak_memory_bytes", path, line, true);
  absl::StatusOr<int64_t> tensor = Integer(r, "peak_tensor_bytes", path, line, false);
  absl::StatusOr<int64_t> reserved = Integer(r, "peak_reserved_bytes", path, line, false);
  for (const auto* v : {&rss, &tensor, &reserved}) {
    if (!v->ok()) return v->status();
  }
  auto skipped = r.find("skipped");
  if (skipped != r.end() && !skipped->is_boolean()) {
    return FieldError(path, line, "skipped", "expected true or false", &*skipped);
  }
  s.step.push_back(*step);
  s.peak_memory_bytes.push_back(*rss);
  s.peak_tensor_bytes.push_back(*tensor);
  s.peak_reserved_bytes.push_back(*reserved);
  s.skipped.push_back(skipped != r.end() && skipped->get<bool>());
  return absl::OkStatus();
}

// Reads one file of the run directory, refusing one over kMaxRunFileBytes.
absl::StatusOr<std::string> ReadRunFile(const std::string& path) {
  absl::StatusOr<std::string> text = spec::ReadFileLimited(path, kMaxRunFileBytes);
  if (absl::IsOutOfRange(text.status())) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": larger than ", kMaxRunFileBytes >> 20, " MiB"));
  }
  return text;
}

absl::StatusOr<std::optional<nlohmann::json>> ReadSummary(const std::filesystem::path& dir) {
  const std::string path = (dir / "summary.json").string();
  if (!std::filesystem::exists(path)) return std::optional<nlohmann::json>();
  absl::StatusOr<std::string> text = ReadRunFile(path);
  if (!text.ok()) return text.status();
  nlohmann::json summary = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (summary.is_discarded() || !summary.is_object()) {
    return absl::InvalidArgumentError(path + ": not a JSON object (accel run writes summary.json "
                                      "when a run ends)");
  }
  return std::optional<nlohmann::json>(std::move(summary));
}

absl::StatusOr<std::optional<ir::Plan>> ReadPlan(const std::filesystem::path& dir) {
  const std::string path = (dir / "plan.binpb").string();
  if (!std::filesystem::exists(path)) return std::optional<ir::Plan>();
  absl::StatusOr<std::string> bytes = ReadRunFile(path);
  if (!bytes.ok()) return bytes.status();
  ir::Plan plan;
  if (!plan.ParseFromString(*bytes) || plan.ir_version() == 0) {
    return absl::InvalidArgumentError(path + ": not an accel plan (accel.ir.Plan, binary)");
  }
  return std::optional<ir::Plan>(std::move(plan));
}

}  // namespace

absl::StatusOr<StepSeries> ParseMetrics(const std::string& text, const std::string& path) {
  StepSeries series;
  int line_number = 0;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_number, ": not JSON (a line cut off by a crash?)"));
    }
    if (absl::Status s = AppendRecord(record, path, line_number, series); !s.ok()) return s;
  }
  if (series.step.empty()) return absl::InvalidArgumentError(path + ": no steps");
  return series;
}

absl::StatusOr<RunData> ReadRunDirectory(const std::string& dir) {
  const std::filesystem::path root(dir);
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) {
    return absl::NotFoundError(absl::StrCat(
        dir, ": ", std::filesystem::exists(root, ec) ? "not a directory" : "no such directory"));
  }
  const std::string metrics_path = (root / "metrics.jsonl").string();
  if (!std::filesystem::exists(metrics_path, ec)) {
    return absl::NotFoundError(metrics_path + ": no such file; is " + dir +
                               " a run directory? (`accel run` writes metrics.jsonl there)");
  }
  absl::StatusOr<std::string> text = ReadRunFile(metrics_path);
  if (!text.ok()) return text.status();
  RunData run;
  run.dir = dir;
  absl::StatusOr<StepSeries> steps = ParseMetrics(*text, metrics_path);
  if (!steps.ok()) return steps.status();
  run.steps = *std::move(steps);
  absl::StatusOr<std::optional<nlohmann::json>> summary = ReadSummary(root);
  if (!summary.ok()) return summary.status();
  run.summary = *std::move(summary);
  absl::StatusOr<std::optional<ir::Plan>> plan = ReadPlan(root);
  if (!plan.ok()) return plan.status();
  run.plan = *std::move(plan);
  return run;
}

}  // namespace accel::html
