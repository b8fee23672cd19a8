#include "cli/report_command.h"

#include <filesystem>

#include <CLI/CLI.hpp>

#include "cli/plan_command.h"
#include "common/exit_codes.h"
#include "common/spellcheck.h"
#include "html/plan_page.h"
#include "html/report_page.h"
#include "html/run_report.h"

namespace accel::cli {
namespace {

// Where plan.html goes: next to the report, or into the run directory for standard output.
std::filesystem::path PlanPagePath(const ReportOptions& options, const std::string& report) {
  if (report == "-") return std::filesystem::path(options.run_dir) / "plan.html";
  return std::filesystem::path(report).parent_path() / "plan.html";
}

// The link from the report to the plan page: relative when they share a directory.
std::string PlanHref(const std::string& report, const std::filesystem::path& plan_page) {
  if (report != "-") return "plan.html";
  return "file://" + std::filesystem::absolute(plan_page).lexically_normal().string();
}

}  // namespace

int RunReportCommand(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  if (options.format != "html") {
    err << "error: unknown format '" << options.format << "'";
    if (auto hint = ClosestMatch(options.format, {"html"})) err << "; did you mean '" << *hint << "'?";
    err << " (accel report writes html)\n";
    return kExitUsage;
  }
  absl::StatusOr<html::RunData> run = html::ReadRunDirectory(options.run_dir);
  if (!run.ok()) {
    err << "error: " << run.status().message() << "\n";
    return kExitInvalid;
  }
  const std::string report = options.output.empty()
                                 ? (std::filesystem::path(options.run_dir) / "report.html").string()
                                 : options.output;
  std::string plan_href;
  std::filesystem::path plan_page;
  std::string plan_html;
  if (run->plan) {
    absl::StatusOr<std::string> page = html::PlanToHtml(*run->plan);
    if (!page.ok()) {
      err << "error: " << page.status().message() << "\n";
      return kExitUsage;
    }
    plan_html = *std::move(page);
    plan_page = PlanPagePath(options, report);
    plan_href = PlanHref(report, plan_page);
  }
  absl::StatusOr<std::string> page = html::RunReportToHtml(*run, plan_href);
  if (!page.ok()) {
    err << "error: " << page.status().message() << "\n";
    return kExitUsage;
  }
  if (run->plan) {
    if (int code = WriteCommandOutput(plan_page.string(), plan_html, out, err); code != kExitOk) {
      return code;
    }
  }
  const int code = WriteCommandOutput(report, *page, out, err);
  if (code == kExitOk && report != "-") {
    err << "wrote " << report << (run->plan ? " and " + plan_page.string() : "") << "\n";
  }
  return code;
}

void RegisterReportCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "Show a run as a self-contained HTML page: loss, learning rate, gradient norm, "
                "tokens/s and memory per step against the plan's estimates, with the plan's page");
  sub->add_option("run_dir", options->run_dir,
                  "Run directory (runs/<job name>, or accel run's --run-dir)")
      ->required();
  sub->add_option("--format", options->format, "Output format: html")->capture_default_str();
  sub->add_option("-o,--output", options->output,
                  "Write the report to FILE (default RUN_DIR/report.html; - for standard output); "
                  "the plan's page goes next to it as plan.html");
  sub->callback([options, &context] {
    context.exit_code = RunReportCommand(*options, *context.out, *context.err);
  });
}

}  // namespace accel::cli
