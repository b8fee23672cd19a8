#include "launcher/restart_record.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/durable_file.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// In field order (ordered_json), as a reader expects to see them.
nlohmann::ordered_json RecordToJson(const RestartRecord& r) {
  nlohmann::ordered_json j = {{"restart", r.restart},
            {"nodes_before", r.nodes_before},
            {"nodes_after", r.nodes_after},
            {"world_before", r.world_before},
            {"world_after", r.world_after},
            {"nodes_kept", r.nodes_kept},
            {"resumed_step", r.resumed_step},
            {"last_step_before", nullptr},
            {"last_step_unix", nullptr},
            {"failed_unix", r.failed_unix},
            {"relaunch_unix", r.relaunch_unix}};
  if (r.last_step_before) j["last_step_before"] = *r.last_step_before;
  if (r.last_step_unix) j["last_step_unix"] = *r.last_step_unix;
  return j;
}

// unix_time of every step in RUN_DIR/metrics.jsonl (the last record of a step wins).
std::map<int64_t, double> StepTimes(const std::string& run_dir) {
  std::map<int64_t, double> times;
  std::ifstream in(fs::path(run_dir) / "metrics.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("step") || !j["step"].is_number_integer()) continue;
    if (!j.contains("unix_time") || !j["unix_time"].is_number()) continue;
    times[j["step"].get<int64_t>()] = j["unix_time"].get<double>();
  }
  return times;
}

}  // namespace

std::string RestartRecordJson(const RestartRecord& record) { return RecordToJson(record).dump(); }

std::optional<LastStep> LastMetricsStep(const std::string& run_dir) {
  const std::map<int64_t, double> times = StepTimes(run_dir);
  if (times.empty()) return std::nullopt;
  return LastStep{times.rbegin()->first, times.rbegin()->second};
}

absl::Status WriteRestartRecords(const std::string& run_dir, const std::vector<RestartRecord>& records) {
  std::string text;
  for (const RestartRecord& r : records) absl::StrAppend(&text, RestartRecordJson(r), "\n");
  return WriteFileAtomically(run_dir, "restarts.jsonl", text);
}

absl::Status AddRestartsToSummary(const std::string& run_dir, const std::vector<RestartRecord>& records) {
  const fs::path path = fs::path(run_dir) / "summary.json";
  std::ifstream in(path);
  if (records.empty() || !in) return absl::OkStatus();
  std::stringstream text;
  text << in.rdbuf();
  // ordered_json keeps the worker's key order.
  nlohmann::ordered_json summary = nlohmann::ordered_json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (!summary.is_object()) return absl::InternalError(absl::StrCat(path.string(), " is not a JSON object"));
  const std::map<int64_t, double> times = StepTimes(run_dir);
  nlohmann::ordered_json restarts = nlohmann::ordered_json::array();
  for (const RestartRecord& r : records) {
    nlohmann::ordered_json j = RecordToJson(r);
    j["time_lost_seconds"] = nullptr;
    if (r.last_step_before && r.last_step_unix) {
      if (auto t = times.find(*r.last_step_before); t != times.end()) {
        j["time_lost_seconds"] = t->second - *r.last_step_unix;
      }
    }
    restarts.push_back(std::move(j));
  }
  summary["restarts"] = std::move(restarts);
  return WriteFileAtomically(run_dir, "summary.json", summary.dump() + "\n");
}

}  // namespace accel::exec
