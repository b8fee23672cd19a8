#include "cli/plan_search.h"

#include <cstdio>
#include <optional>
#include <sstream>

#include "cli/plan_command.h"
#include "cli/searched_spec.h"
#include "common/diagnostics.h"
#include "common/durable_file.h"
#include "common/exit_codes.h"
#include "common/units.h"
#include "html/plan_page.h"
#include "launcher/executor_support.h"
#include "planner/planner.h"
#include "planner/step_time_diff.h"
#include "spec/file_reader.h"
#include "spec/text_checks.h"
#include "spec/loader.h"

namespace accel::cli {
namespace {

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string Seconds(double s) { return s >= 1 ? Printf("%.3f s", s) : Printf("%.1f ms", s * 1e3); }

// One table row; `winner` is null for the first.
std::string Row(int64_t rank, const planner::RankedLayout& r, const planner::RankedLayout* winner) {
  const planner::Layout& l = r.layout;
  const std::string schedule = l.pipeline > 1 ? spec::Name(l.schedule) : "-";
  const std::string memory = FormatBytes(r.peak_device_bytes) + " / " +
                             FormatBytes(r.device_limit_bytes);
  const std::string lost = winner == nullptr ? "-" : planner::DifferenceText(
      planner::LargestDifference(r.step_time, winner->step_time));
  const std::string degrees = std::to_string(l.data_replicate) + "x" +
                              std::to_string(l.data_shard) + "x" + std::to_string(l.tensor) + "x" +
                              std::to_string(l.pipeline) +
                              (l.expert > 1 ? " ep" + std::to_string(l.expert) : std::string());
  char line[512];
  std::snprintf(line, sizeof line, "%4lld  %-17s %3lld  %5lld %5lld %5lld  %-9s %-9s %-16s %10s %12s %6s  %-23s %s\n",
                static_cast<long long>(rank), degrees.c_str(), static_cast<long long>(l.context),
                static_cast<long long>(l.sharding_stage),
                static_cast<long long>(l.micro_batch_size),
                static_cast<long long>(r.grad_accum_steps), spec::Name(l.recompute),
                spec::Name(l.offload), schedule.c_str(), Seconds(r.step_time.step_seconds()).c_str(),
                FormatCount(static_cast<int64_t>(r.step_time.tokens_per_second())).c_str(),
                Printf("%.1f%%", r.step_time.mfu() * 100).c_str(), memory.c_str(), lost.c_str());
  return line;
}

// The first reason the executor (any build: CUDA and SDPA assumed) cannot run `plan`, or "".
std::string RefuseUnexecuted(const ir::Plan& plan) {
  const std::vector<exec::SupportIssue> issues =
      exec::ExecutorSupportIssues(plan, exec::ExecutorCapabilities{.cuda = true, .sdpa = true});
  return issues.empty() ? "" : issues.front().message;
}

std::string Counts(const planner::SearchResult& result) {
  const double rate = result.seconds > 0 ? result.enumerated / result.seconds : 0;
  std::string skipped;
  if (result.dominated > 0) {
    skipped += ", " + FormatCount(result.dominated) +
               " not planned (offload or gpipe variants of a fitting twin: never faster)";
  }
  if (result.refused > 0) {
    skipped += ", " + FormatCount(result.refused) +
               " refused (the executor does not run them yet; --forecast ranks them)";
  }
  return FormatCount(result.enumerated) + " candidates enumerated, " +
         FormatCount(result.valid) + " valid, " + FormatCount(result.fitting) + " fit" + skipped +
         "; searched in " +
         Printf("%.3f s", result.seconds) + " (" + FormatCount(static_cast<int64_t>(rate)) +
         " candidates/s)\n";
}

// Loads the spec; diagnostics of a failed load go to `err`.
std::optional<spec::JobSpec> Load(const std::string& path, const std::vector<std::string>& overrides,
                                  std::ostream& err) {
  DiagnosticSink sink;
  SourceManager sources;
  spec::LoadOptions load;
  load.overrides = overrides;
  std::optional<spec::JobSpec> job = spec::LoadJobSpec(path, load, sink, sources);
  if (!job || sink.HasErrors()) {
    err << RenderText(sink.diagnostics(), sources);
    return std::nullopt;
  }
  return job;
}

// Writes the layout ranked `rank` (1-based, in range) as a spec to `path`.
int EmitSpec(const std::string& spec_path, const std::vector<std::string>& overrides,
             const planner::SearchResult& result, int64_t rank, const std::string& path,
             std::ostream& err) {
  absl::StatusOr<std::string> text = spec::ReadFileLimited(spec_path, spec::kMaxSpecFileBytes);
  if (!text.ok()) {
    err << "error: " << text.status().message() << "\n";
    return kExitRuntime;
  }
  absl::StatusOr<std::string> yaml = SearchedSpecYaml(spec_path, *text, overrides,
                                                      result.ranked[rank - 1].layout,
                                                      result.global_batch, path);
  if (!yaml.ok()) {
    err << "error: " << yaml.status().message() << "\n";
    return kExitInvalid;
  }
  if (absl::Status written = WriteFileAtomically(path, *yaml); !written.ok()) {
    err << "error: " << written.message() << "\n";
    return kExitRuntime;
  }
  return kExitOk;
}

// The page of the winner's plan with the ranking (`--search --format html`); "" after an
// error on `err`, with `code` set.
std::string SearchPage(const spec::JobSpec& job, const planner::SearchResult& result, int64_t top,
                       std::ostream& err, int& code) {
  if (result.ranked.empty()) {
    err << "error: no layout fits, so --format html has no plan to show\n" << Counts(result);
    code = kExitInvalid;
    return "";
  }
  DiagnosticSink sink;
  planner::PlanResult winner = planner::BuildPlan(
      planner::ApplyLayout(job, result.ranked.front().layout, result.global_batch), {}, sink);
  if (!winner.ok) {
    err << "internal error: the search's winner does not plan (pass " << winner.last_pass << ")\n";
    code = kExitInternal;
    return "";
  }
  absl::StatusOr<std::string> page = html::PlanToHtml(winner.plan, &result, top);
  if (!page.ok()) {
    err << "error: " << page.status().message() << "\n";
    code = kExitUsage;
    return "";
  }
  code = kExitOk;
  return *std::move(page);
}

}  // namespace

std::string SearchTable(const spec::JobSpec& spec, const planner::SearchResult& result,
                        int64_t top) {
  std::ostringstream s;
  s << "layout search: " << spec.name << " on " << FormatCount(spec.world_size()) << " ranks ("
    << spec.cluster.nodes << " x " << spec.cluster.devices_per_node << " "
    << spec::Name(spec.cluster.device) << "), global batch " << result.global_batch
    << " sequences, fastest fitting layouts by estimated step time\n";
  if (result.ranked.empty()) {
    s << "no layout fits\n" << Counts(result);
    return s.str();
  }
  char header[512];
  std::snprintf(header, sizeof header, "%4s  %-17s %3s  %5s %5s %5s  %-9s %-9s %-16s %10s %12s %6s  %-23s %s\n",
                "rank", "dr x ds x tp x pp", "cp", "stage", "micro", "accum", "recompute", "offload", "schedule",
                "step", "tokens/s", "MFU", "peak memory / limit", "lost to #1 by");
  s << header;
  const int64_t rows = std::min<int64_t>(top, static_cast<int64_t>(result.ranked.size()));
  for (int64_t i = 0; i < rows; ++i) {
    s << Row(i + 1, result.ranked[i], i == 0 ? nullptr : &result.ranked.front());
  }
  s << Counts(result);
  return s.str();
}

int RunPlanSearch(const std::string& spec_path, const std::vector<std::string>& overrides,
                  int64_t top, const std::string& output, const std::string& emit_spec,
                  int64_t emit_rank, bool forecast, bool html, std::ostream& out,
                  std::ostream& err) {
  std::optional<spec::JobSpec> job = Load(spec_path, overrides, err);
  if (!job) return kExitInvalid;
  planner::SearchOptions options;
  if (!forecast) options.refuse = RefuseUnexecuted;
  absl::StatusOr<planner::SearchResult> result = planner::SearchLayouts(*job, options);
  if (!result.ok()) {
    err << "error: " << result.status().message() << "\n";
    return kExitUsage;
  }
  int code = kExitOk;
  const std::string data = html ? SearchPage(*job, *result, top, err, code)
                                : SearchTable(*job, *result, top);
  if (code != kExitOk) return code;
  code = WriteCommandOutput(output, data, out, err);
  if (code != kExitOk || emit_spec.empty()) return code;
  if (result->ranked.empty()) {
    err << "error: no layout fits, so --emit-spec has nothing to write\n";
    return kExitInvalid;
  }
  if (emit_rank > static_cast<int64_t>(result->ranked.size())) {
    err << "error: --emit-rank " << emit_rank << " but only " << result->ranked.size()
        << " layouts fit\n";
    return kExitUsage;
  }
  return EmitSpec(spec_path, overrides, *result, emit_rank, emit_spec, err);
}

}  // namespace accel::cli
