#ifndef ACCEL_CLI_PLAN_COMMAND_H_
#define ACCEL_CLI_PLAN_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace accel::cli {

// `accel plan SPEC [--set k=v]... [--format F] [-o FILE] [--dump-after PASS] [--werror]`, or
// `accel plan SPEC [--set k=v]... --search [--top N] [--emit-spec FILE [--emit-rank K]] [-o FILE]`.
struct PlanCommandOptions {
  std::string spec;
  std::vector<std::string> overrides;
  // text | json | textproto | binpb | dot | svg | png | pipeline-csv | html (with `search`:
  // text or html)
  std::string format = "text";
  // "" or "-": standard output. Otherwise written atomically (temporary file, then rename).
  std::string output;
  // Stop after this pass and print the partial plan.
  std::string dump_after;
  // Warnings are errors: reported as error[W...], no plan is written, exit 1.
  bool werror = false;
  // Layout search (cli/plan_search.h) instead of planning the spec's own layout.
  bool search = false;
  // Rows of the search table; valid only with `search`, at least 1.
  int64_t top = 10;
  bool top_given = false;  // --top appeared on the command line
  // With `search`: write the winner as a job spec to this file ("" = none).
  std::string emit_spec;
  // With `emit_spec`: write the layout ranked here instead of the winner (1 = the winner), so a
  // benchmark can run every ranked layout (bench/search_winner).
  int64_t emit_rank = 1;
  bool emit_rank_given = false;  // --emit-rank appeared on the command line
  // With `search`: also rank layouts the executor does not run yet (context parallel > 1),
  // as the estimate's forecast; without it they count as refused.
  bool forecast = false;
  // A checkpoint (step directory or checkpoint directory) to check against the plan instead of
  // printing the plan (cli/resume_from.h); "" = none.
  std::string resume_from;
};

// The accepted --format values, in help order.
const std::vector<std::string>& PlanFormats();

// Loads, plans and writes the plan. Diagnostics (errors, warnings, notes) go to `err`.
// Returns an exit code: 0 planned, 1 invalid spec or plan (or any warning with `werror`),
// 2 usage (--resume-from with --search, --format or --dump-after;
// unknown format or pass, binary output to a terminal, --top or --emit-spec without
// --search, --emit-rank without --emit-spec or below 1, --top below 1, --search with a
// --format other than text or html or with --dump-after, html from a build without the
// charting library), 3 internal (a Graphviz or I/O failure).
int RunPlanCommand(const PlanCommandOptions& options, std::ostream& out, std::ostream& err);

// Registers `plan` on the app (a CommandRegistrar).
void RegisterPlanCommand(CLI::App& app, AppContext& context);

// A command's output: `data` to `out` when `path` is "" or "-", else to the file (atomically).
// Returns kExitOk, or kExitRuntime after "error: ..." on err when the file cannot be written.
int WriteCommandOutput(const std::string& path, const std::string& data, std::ostream& out,
                       std::ostream& err);

}  // namespace accel::cli

#endif  // ACCEL_CLI_PLAN_COMMAND_H_
