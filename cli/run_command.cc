#include "cli/run_command.h"

#include <time.h>

#include <CLI/CLI.hpp>

#include <memory>

#include "absl/strings/str_cat.h"

#include "cli/compile_job.h"
#include "cli/elastic_replan.h"
#include "cli/pre_launch_checks.h"
#include "common/diagnostics.h"
#include "common/exit_codes.h"
#include "executor/worker.h"
#include "ir/plan_writer.h"
#include "launcher/run_job.h"
#include "launcher/worker_env.h"
#include "planner/planner.h"

namespace accel::cli {
namespace {

int64_t UnixNanos() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// --min-nodes: the flags it needs, and before launch, that the job can be planned for every
// smaller number of nodes it may go on with (so that a shrink never fails on a layout that does
// not divide). Returns kExitOk to go on.
int CheckElasticOptions(const RunCommandOptions& options, const ir::Plan& plan, std::ostream& err) {
  const int min_nodes = options.launch.min_nodes;
  if (min_nodes == 0) return kExitOk;
  const int64_t nodes = plan.topology().nodes();
  std::string problem;
  if (nodes == 1) {
    problem = "--min-nodes needs a multi-node job (cluster.nodes is 1)";
  } else if (min_nodes > nodes) {
    problem = absl::StrCat("--min-nodes ", min_nodes, " is more than cluster.nodes (", nodes, ")");
  } else if (options.launch.max_restarts == 0) {
    problem = "--min-nodes needs --max-restarts N: going on with fewer nodes is a restart";
  }
  if (!problem.empty()) {
    err << "error: " << problem << "\n";
    return kExitUsage;
  }
  for (int n = min_nodes; n < nodes; ++n) {
    absl::StatusOr<exec::ReplannedJob> job =
        ReplanForNodes(options.spec, options.overrides, plan, n, 0, exec::ExecutorCapabilitiesOfThisBuild());
    if (!job.ok()) {
      err << "error: --min-nodes " << min_nodes << ": the job cannot go on with " << n
          << (n == 1 ? " node: " : " nodes: ") << job.status().message() << "\n";
      return kExitInvalid;
    }
  }
  return kExitOk;
}

}  // namespace

int RunRunCommand(const RunCommandOptions& options, std::ostream& out, std::ostream& err) {
  const int64_t launch_ns = UnixNanos();
  // Compile and check: nothing starts unless the whole plan can run.
  SourceManager sources;
  DiagnosticSink sink;
  CompiledJob compiled = CompileJob(options.spec, options.overrides, {}, sink, sources);
  const std::optional<spec::JobSpec>& job = compiled.job;
  const planner::PlanResult& planned = compiled.planned;
  if (job && planned.ok) {
    CheckBeforeLaunch(planned.plan, *job, exec::ExecutorCapabilitiesOfThisBuild(), sink);
  }
  err << RenderText(sink.diagnostics(), sources);
  if (!job || !planned.ok || sink.HasErrors()) return kExitInvalid;
  const ir::Plan& plan = planned.plan;
  if (options.launch.max_restarts > 0 && plan.checkpoint().resume() == ir::RESUME_POLICY_NEVER) {
    err << "error: --max-restarts needs checkpoint.resume: auto (a restart resumes from the newest "
           "checkpoint; with resume: never it would train from step 0 again)\n";
    return kExitUsage;
  }
  if (const int rc = CheckElasticOptions(options, plan, err); rc != kExitOk) return rc;
  const std::string summary = ir::PlanSummary(plan);
  out << summary;
  // The launcher's checks of checkpoint.dir and of the checkpoint resume picks, located here.
  exec::RunOptions launch = options.launch;
  launch.report_issues = LocatedIssueReporter(*job, sources, err);
  if (launch.min_nodes > 0) {
    launch.replan = [&options, &plan](int nodes, int restart) {
      return ReplanForNodes(options.spec, options.overrides, plan, nodes, restart,
                            exec::ExecutorCapabilitiesOfThisBuild());
    };
  }
  return exec::RunJob(plan, summary, launch, exec::ProcessEnvLookup(), launch_ns, out, err);
}

void RegisterRunCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<RunCommandOptions>();
  auto node_rank = std::make_shared<int>(-1);
  auto master_port = std::make_shared<int>(0);
  CLI::App* sub = app.add_subcommand(
      "run", "Compile a job spec and train it: one worker process per local device");
  sub->add_option("spec", options->spec, "Job spec file (YAML)")->required();
  // One value per --set, so `accel run --set k=v job.yaml` keeps job.yaml as the spec.
  sub->add_option("--set", options->overrides,
                  "Override a key, e.g. --set training.steps=10 (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--run-dir", options->launch.run_dir,
                  "Directory for the plan, metrics and logs (default runs/<job name>)");
  sub->add_option("--node-rank", *node_rank, "This node's index (multi-node jobs by hand)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--master-addr", options->launch.master_addr,
                  "Host of node 0, where rank 0 serves the rendezvous store");
  sub->add_option("--master-port", *master_port, "TCP port of the rendezvous store")
      ->check(CLI::Range(1, 65535));
  sub->add_option("--threads-per-worker", options->launch.threads_per_worker,
                  "Intra-op threads per worker (default: usable CPUs / local workers)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--grace-period", options->launch.grace_period_seconds,
                  "Seconds workers get to stop after SIGTERM before SIGKILL")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--max-restarts", options->launch.max_restarts,
                  "After a worker failure, restart the workers up to N times; each restart "
                  "resumes from the newest intact checkpoint")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--min-nodes", options->launch.min_nodes,
                  "Elastic restarts of a multi-node job: after a node is lost, go on with the nodes "
                  "that rejoin, at least M (torchrun's --nnodes=MIN:MAX); needs --max-restarts")
      ->check(CLI::PositiveNumber);
  sub->add_option("--rejoin-timeout", options->launch.rejoin_timeout_seconds,
                  "Seconds the nodes wait for each other before an elastic restart goes on without "
                  "the missing ones")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_flag("--no-slurm", options->launch.no_slurm, "Ignore SLURM_* environment variables");
  sub->callback([options, node_rank, master_port, &context] {
    if (*node_rank >= 0) options->launch.node_rank = *node_rank;
    if (*master_port > 0) options->launch.master_port = *master_port;
    context.exit_code = RunRunCommand(*options, *context.out, *context.err);
  });
}

}  // namespace accel::cli
