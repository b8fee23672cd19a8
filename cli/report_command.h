#ifndef ACCEL_CLI_REPORT_COMMAND_H_
#define ACCEL_CLI_REPORT_COMMAND_H_

#include <ostream>
#include <string>

#include "cli/app.h"

namespace accel::cli {

// `accel report RUN_DIR [--format html] [-o FILE]`: a run's metrics as a page.
struct ReportOptions {
  std::string run_dir;          // what `accel run` wrote: metrics.jsonl, summary.json, plan.binpb
  std::string format = "html";  // the only format so far
  // The page; "" means RUN_DIR/report.html, "-" standard output. The plan's page is written as
  // plan.html next to it (into RUN_DIR for standard output) and linked.
  std::string output;
};

// Reads the run directory (html/run_report.h), writes the report and the plan's page, and prints
// "wrote FILE (and PLAN)" to `err`. Returns kExitOk; kExitUsage for an unknown format or a build
// without the charting library; kExitInvalid when the directory or its files are missing or
// malformed (the message names the file, line and field: "DIR/metrics.jsonl:3: field \"loss\":
// expected a number or null, got \"x\""); kExitRuntime when a page cannot be written.
int RunReportCommand(const ReportOptions& options, std::ostream& out, std::ostream& err);

// Registers `report` on the app (a CommandRegistrar).
void RegisterReportCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_REPORT_COMMAND_H_
