#include "cli/run_command.h"

#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "cli/compile_job.h"
#include "cli/plan_command.h"
#include "common/diagnostics.h"
#include "common/exit_codes.h"
#include "executor/launcher/job_token.h"
#include "executor/launcher/launch_layout.h"
#include "executor/launcher/plan_support.h"
#include "executor/launcher/process_supervisor.h"
#include "executor/launcher/slurm_env.h"
#include "executor/launcher/worker_env.h"
#include "executor/worker.h"
#include "ir/plan_writer.h"
#include "planner/planner.h"

namespace accel::cli {
namespace {

int64_t UnixNanos() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// CPUs this process may run on (affinity, so `taskset` and cgroup cpusets are respected).
int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
}

std::string SelfExecutable() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : self.string();
}

}  // namespace

// One `accel worker` per local rank of `layout`, numbered attempt (0 for the first launch):
// ACCEL_RESTART_COUNT tells a restarted worker it is one (test hooks act on attempt 0 only).
std::vector<exec::ProcessSpec> WorkerSpecs(const exec::LaunchLayout& layout, const std::string& exe,
                                           const std::string& plan_path, const std::string& run_dir,
                                           int attempt) {
  std::vector<exec::ProcessSpec> specs;
  for (const exec::WorkerEnv& w : layout.workers) {
    exec::ProcessSpec spec;
    spec.rank = w.rank;
    spec.argv = {exe, "worker", "--plan", plan_path};
    spec.env = exec::WorkerEnvVariables(w);
    spec.env.emplace_back("ACCEL_RESTART_COUNT", std::to_string(attempt));
    spec.log_path = (std::filesystem::path(run_dir) / ("rank" + std::to_string(w.rank) + ".log")).string();
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Starts the workers and waits for all of them (exec::ProcessSupervisor); the first local
// rank's output goes to `out`. Errors: those of ProcessSupervisor::Start.
absl::StatusOr<exec::SupervisionResult> SuperviseAttempt(const std::vector<exec::ProcessSpec>& specs,
                                                         const RunCommandOptions& options,
                                                         std::ostream& out) {
  exec::SupervisorOptions supervisor_options;
  supervisor_options.grace = std::chrono::milliseconds(
      static_cast<int64_t>(std::max(0.0, options.grace_period_seconds) * 1000));
  // Rank 0's progress on the terminal; on other nodes, their first local rank's.
  supervisor_options.echo_rank = specs.front().rank;
  supervisor_options.echo = [&out](std::string_view line) { out << line << std::flush; };
  exec::ProcessSupervisor supervisor(supervisor_options);
  if (absl::Status started = supervisor.Start(specs); !started.ok()) return started;
  return supervisor.Wait();
}

// Renames every local rank's log to rank<R>.attempt<attempt>.log, so the next attempt's
// rank<R>.log starts fresh and the failed one stays readable.
void KeepAttemptLogs(const exec::LaunchLayout& layout, const std::string& run_dir, int attempt) {
  for (const exec::WorkerEnv& w : layout.workers) {
    const std::filesystem::path dir(run_dir);
    const std::string rank = "rank" + std::to_string(w.rank);
    std::error_code ec;
    std::filesystem::rename(dir / (rank + ".log"), dir / (rank + ".attempt" + std::to_string(attempt) + ".log"), ec);
  }
}

int RunRunCommand(const RunCommandOptions& options, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  const int64_t launch_ns = UnixNanos();

  // Compile and check: nothing starts unless the whole plan can run.
  SourceManager sources;
  DiagnosticSink sink;
  CompiledJob compiled = CompileJob(options.spec, options.overrides, {}, sink, sources);
  const std::optional<spec::JobSpec>& job = compiled.job;
  const planner::PlanResult& planned = compiled.planned;
  if (job) {
    if (planned.ok) {
      exec::CheckExecutorSupport(planned.plan, *job,
                                 exec::ExecutorCapabilitiesOfThisBuild(), sink);
      exec::CheckTrainingData(planned.plan, *job, sink);
      exec::CheckTokenizer(planned.plan, *job, sink);
      exec::CheckPretrainedWeights(planned.plan, *job, sink);
    }
  }
  err << RenderText(sink.diagnostics(), sources);
  if (!job || !planned.ok || sink.HasErrors()) return kExitInvalid;
  const ir::Plan& plan = planned.plan;
  if (options.max_restarts > 0 && plan.checkpoint().resume() == ir::RESUME_POLICY_NEVER) {
    err << "error: --max-restarts needs checkpoint.resume: auto (a restart resumes from the newest "
           "checkpoint; with resume: never it would train from step 0 again)\n";
    return kExitUsage;
  }
  const std::string summary = ir::PlanSummary(plan);
  out << summary;

  // Who runs here.
  exec::LaunchRequest request;
  request.nodes = static_cast<int>(plan.topology().nodes());
  for (const ir::RankPlacement& r : plan.ranks()) {
    request.slots.push_back({r.rank(), r.node(), r.local_rank()});
  }
  exec::EnvLookup env = exec::ProcessEnvLookup();
  request.node_rank = options.node_rank;
  request.master_addr = options.master_addr.empty() ? env("MASTER_ADDR").value_or("")
                                                    : options.master_addr;
  request.master_port = options.master_port;
  if (!request.master_port.has_value()) {
    if (std::optional<std::string> port = env("MASTER_PORT")) {
      std::optional<int64_t> value = exec::ParseInt(*port);
      if (!value.has_value()) {
        err << "error: MASTER_PORT='" << *port << "' is not a port number\n";
        return kExitUsage;
      }
      request.master_port = static_cast<int>(*value);
    }
  }
  if (!options.no_slurm) {
    absl::StatusOr<std::optional<exec::SlurmEnv>> slurm = exec::SlurmEnvFromLookup(env);
    if (!slurm.ok()) {
      err << "error: " << slurm.status().message() << " (use --no-slurm to ignore SLURM)\n";
      return kExitUsage;
    }
    request.slurm = *slurm;
  }
  const std::string run_dir =
      options.run_dir.empty() ? (fs::path("runs") / plan.job().name()).string() : options.run_dir;
  request.run_dir = run_dir;
  request.launch_unix_ns = launch_ns;
  absl::StatusOr<exec::LaunchLayout> layout = exec::ResolveLaunchLayout(request);
  if (!layout.ok()) {
    err << "error: " << layout.status().message() << "\n";
    return kExitUsage;
  }
  const int local_workers = static_cast<int>(layout->workers.size());
  const int threads = options.threads_per_worker > 0
                          ? options.threads_per_worker
                          : std::max(1, UsableCpus() / local_workers);
  for (exec::WorkerEnv& w : layout->workers) w.num_threads = threads;

  // The run directory: the plan the workers execute, next to their outputs.
  std::error_code ec;
  fs::create_directories(run_dir, ec);
  if (ec) {
    err << "error: cannot create run directory " << run_dir << ": " << ec.message() << "\n";
    return kExitRuntime;
  }
  const std::string plan_path = (fs::path(run_dir) / "plan.binpb").string();
  std::string write_error;
  if (!WriteFileAtomically(plan_path, ir::PlanToBinary(plan), &write_error) ||
      !WriteFileAtomically((fs::path(run_dir) / "plan.txt").string(), summary, &write_error)) {
    err << "error: " << write_error << "\n";
    return kExitRuntime;
  }
  const std::string checkpoint_dir = plan.checkpoint().dir().empty()
                                         ? (fs::path(run_dir) / "checkpoints").string()
                                         : plan.checkpoint().dir();

  const std::string exe =
      options.worker_executable.empty() ? SelfExecutable() : options.worker_executable;
  const exec::WorkerEnv& first = layout->workers.front();
  // One node: the workers meet through a file in the run directory, so no store listens on the
  // network (LibTorch 1.13's TCPStore server binds every interface).
  const bool file_store = request.nodes == 1;
  const std::string rendezvous =
      file_store ? "a file in the run directory"
                 : absl::StrCat(first.master_addr, ":", first.master_port);
  out << absl::StrFormat(
             "\nlaunching %d %s (%s, node %d of %d) with %d intra-op %s each; rendezvous "
             "%s\nrun directory %s: plan.binpb, plan.txt, metrics.jsonl, rank<R>.log; "
             "checkpoints in %s\n",
             local_workers, local_workers == 1 ? "worker" : "workers", layout->mode,
             layout->node_rank, request.nodes, threads, threads == 1 ? "thread" : "threads",
             rendezvous, run_dir, checkpoint_dir)
      << std::flush;

  for (int attempt = 0;; ++attempt) {
    // A fresh token per attempt (single node): a straggler of a failed attempt cannot join.
    absl::StatusOr<std::string> token = exec::JobTokenFor(
        *layout, request.slurm.has_value() ? request.slurm->job_id : std::string(), env);
    if (!token.ok()) {
      err << "error: " << token.status().message() << "\n";
      return attempt == 0 ? kExitUsage : kExitRuntime;
    }
    // Each attempt meets in a fresh store file (a dead attempt's keys stay in its own); a file
    // or link left at that name by an earlier run is removed, never written through.
    const std::string store_file =
        file_store ? (fs::path(run_dir) / absl::StrCat(".rendezvous.attempt", attempt)).string() : "";
    if (file_store && ::unlink(store_file.c_str()) != 0 && errno != ENOENT) {
      err << "error: cannot remove " << store_file << ": " << std::strerror(errno) << "\n";
      return kExitRuntime;
    }
    for (exec::WorkerEnv& w : layout->workers) {
      w.job_token = *token;
      w.store_file = store_file;
    }
    const absl::StatusOr<exec::SupervisionResult> supervised =
        SuperviseAttempt(WorkerSpecs(*layout, exe, plan_path, run_dir, attempt), options, out);
    if (!supervised.ok()) {
      err << "error: cannot start workers: " << supervised.status().message() << "\n";
      return kExitRuntime;
    }
    const exec::SupervisionResult& result = *supervised;
    if (result.ok()) {
      out << absl::StrFormat("run finished: %d %s succeeded; metrics in %s\n", local_workers,
                             local_workers == 1 ? "worker" : "workers",
                             (fs::path(run_dir) / "metrics.jsonl").string());
      return kExitOk;
    }
    err << "error: " << exec::FormatFailureReport(result);
    if (result.interrupted_by != 0 || !result.first_failure.has_value() ||
        attempt >= options.max_restarts) {
      if (result.interrupted_by != 0 && !result.first_failure.has_value()) {
        err << "workers stopped at a step boundary; checkpoints are in " << checkpoint_dir
            << " (resume: run the same command again)\n";
      }
      return kExitRuntime;
    }
    err << absl::StrFormat(
               "restarting the workers (restart %d of %d): they resume from the newest intact "
               "checkpoint in %s; the failed attempt's logs are rank<R>.attempt%d.log\n",
               attempt + 1, options.max_restarts, checkpoint_dir, attempt)
        << std::flush;
    KeepAttemptLogs(*layout, run_dir, attempt);
    // A port this launcher picked may still be held by the dead rank 0's store: pick anew.
    if (!request.master_port.has_value() && request.nodes == 1 && !request.slurm.has_value()) {
      absl::StatusOr<exec::LaunchLayout> again = exec::ResolveLaunchLayout(request);
      if (!again.ok()) {
        err << "error: " << again.status().message() << "\n";
        return kExitRuntime;
      }
      *layout = *std::move(again);
      for (exec::WorkerEnv& w : layout->workers) w.num_threads = threads;
    }
  }
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
  sub->add_option("--run-dir", options->run_dir,
                  "Directory for the plan, metrics and logs (default runs/<job name>)");
  sub->add_option("--node-rank", *node_rank, "This node's index (multi-node jobs by hand)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--master-addr", options->master_addr,
                  "Host of node 0, where rank 0 serves the rendezvous store");
  sub->add_option("--master-port", *master_port, "TCP port of the rendezvous store")
      ->check(CLI::Range(1, 65535));
  sub->add_option("--threads-per-worker", options->threads_per_worker,
                  "Intra-op threads per worker (default: usable CPUs / local workers)")
      ->check(CLI::NonNegativeNumber);
  sub->add_option("--grace-period", options->grace_period_seconds,
                  "Seconds workers get to stop after SIGTERM before SIGKILL")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_option("--max-restarts", options->max_restarts,
                  "After a worker failure, restart the workers up to N times; each restart "
                  "resumes from the newest intact checkpoint")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_flag("--no-slurm", options->no_slurm, "Ignore SLURM_* environment variables");
  sub->callback([options, node_rank, master_port, &context] {
    if (*node_rank >= 0) options->node_rank = *node_rank;
    if (*master_port > 0) options->master_port = *master_port;
    context.exit_code = RunRunCommand(*options, *context.out, *context.err);
  });
}

}  // namespace accel::cli
