#include "launcher/run_job.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <system_error>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/durable_file.h"
#include "common/route_address.h"
#include "common/exit_codes.h"
#include "common/remove_tree.h"
#include "ir/plan_writer.h"
#include "checkpoint/run_identity.h"
#include "common/diag_codes.h"
#include "launcher/checkpoint_dir_check.h"
#include "launcher/dir_lock.h"
#include "launcher/elastic_rendezvous.h"
#include "launcher/job_token.h"
#include "launcher/launch_layout.h"
#include "launcher/output_dirs.h"
#include "launcher/resume_check.h"
#include "launcher/process_supervisor.h"
#include "launcher/restart_record.h"
#include "launcher/slurm_env.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

// CPUs this process may run on (affinity, so `taskset` and cgroup cpusets are respected).
int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
}

std::string SelfExecutable() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("/proc/self/exe") : self.string();
}

// The launch as the plan, the flags and the environment describe it. Errors: InvalidArgument
// for a MASTER_PORT that is not a number and for inconsistent SLURM variables.
absl::StatusOr<LaunchRequest> LaunchRequestFor(const ir::Plan& plan, const RunOptions& options,
                                               const EnvLookup& env) {
  LaunchRequest request;
  request.nodes = static_cast<int>(plan.topology().nodes());
  for (const ir::RankPlacement& r : plan.ranks()) request.slots.push_back({r.rank(), r.node(), r.local_rank()});
  request.node_rank = options.node_rank;
  request.master_addr = options.master_addr.empty() ? env("MASTER_ADDR").value_or("") : options.master_addr;
  request.master_port = options.master_port;
  if (!request.master_port.has_value()) {
    if (std::optional<std::string> port = env("MASTER_PORT")) {
      std::optional<int64_t> value = ParseInt(*port);
      if (!value.has_value()) {
        return absl::InvalidArgumentError(absl::StrCat("MASTER_PORT='", *port, "' is not a port number"));
      }
      request.master_port = static_cast<int>(*value);
    }
  }
  if (!options.no_slurm) {
    absl::StatusOr<std::optional<SlurmEnv>> slurm = SlurmEnvFromLookup(env);
    if (!slurm.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(slurm.status().message(), " (use --no-slurm to ignore SLURM)"));
    }
    request.slurm = *slurm;
  }
  request.run_dir = options.run_dir.empty() ? (fs::path("runs") / plan.job().name()).string() : options.run_dir;
  return request;
}

// ResolveLaunchLayout with every local worker's intra-op threads set.
absl::StatusOr<LaunchLayout> LocalLayout(const LaunchRequest& request, int threads) {
  absl::StatusOr<LaunchLayout> layout = ResolveLaunchLayout(request);
  if (layout.ok()) {
    for (WorkerEnv& w : layout->workers) w.num_threads = threads;
  }
  return layout;
}

// The run directory (created and locked already) with the plan the workers execute (plan.binpb)
// and its summary (plan.txt).
absl::Status PrepareRunDir(const std::string& run_dir, const ir::Plan& plan, const std::string& summary) {
  if (absl::Status s = WriteFileAtomically(run_dir, "plan.binpb", ir::PlanToBinary(plan)); !s.ok()) return s;
  return WriteFileAtomically(run_dir, "plan.txt", summary);
}

// One `accel worker` per local rank of layout, numbered attempt (0 for the first launch):
// ACCEL_RESTART_COUNT tells a restarted worker it is one (test hooks act on attempt 0 only).
std::vector<ProcessSpec> WorkerSpecs(const LaunchLayout& layout, const std::string& exe,
                                     const std::string& run_dir, int attempt) {
  std::vector<ProcessSpec> specs;
  for (const WorkerEnv& w : layout.workers) {
    ProcessSpec spec;
    spec.rank = w.rank;
    spec.argv = {exe, "worker", "--plan", (fs::path(run_dir) / "plan.binpb").string()};
    spec.env = WorkerEnvVariables(w);
    spec.env.emplace_back("ACCEL_RESTART_COUNT", std::to_string(attempt));
    spec.log_path = (fs::path(run_dir) / ("rank" + std::to_string(w.rank) + ".log")).string();
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Starts the workers and waits for all of them; the first local rank's output goes to out.
absl::StatusOr<SupervisionResult> SuperviseAttempt(const std::vector<ProcessSpec>& specs,
                                                   double grace_period_seconds, std::ostream& out) {
  SupervisorOptions supervisor_options;
  supervisor_options.grace =
      std::chrono::milliseconds(static_cast<int64_t>(std::max(0.0, grace_period_seconds) * 1000));
  supervisor_options.echo_rank = specs.front().rank;  // rank 0's progress, or this node's first
  supervisor_options.echo = [&out](std::string_view line) { out << line << std::flush; };
  ProcessSupervisor supervisor(supervisor_options);
  if (absl::Status started = supervisor.Start(specs); !started.ok()) return started;
  return supervisor.Wait();
}

// Renames every local rank's log to rank<R>.attempt<attempt>.log, so the next attempt's
// rank<R>.log starts fresh and the failed one stays readable.
void KeepAttemptLogs(const LaunchLayout& layout, const std::string& run_dir, int attempt) {
  for (const WorkerEnv& w : layout.workers) {
    const std::string rank = "rank" + std::to_string(w.rank);
    std::error_code ec;
    fs::rename(fs::path(run_dir) / (rank + ".log"),
               fs::path(run_dir) / (rank + ".attempt" + std::to_string(attempt) + ".log"), ec);
  }
}

// What every attempt shares.
struct Launch {
  // The plan the workers run (replaced when an elastic restart goes on with fewer nodes).
  ir::Plan plan;
  std::string summary;
  LaunchRequest request;
  LaunchLayout layout;
  int threads = 1;
  std::string exe;
  std::string checkpoint_dir;
  // The run id every worker records in its checkpoints (WorkerEnv::run_id).
  std::string run_id;
  // Held from before the run directory is written until RunJob returns.
  std::vector<std::unique_ptr<DirLock>> locks;
  // One node: the workers meet through a file in the run directory, so no store listens on the
  // network (LibTorch 1.13's TCPStore server binds every interface).
  bool file_store = true;
  // Elastic restarts: this node's --node-rank at launch, and the launch node ranks of the nodes
  // running now (0..nodes-1 until a restart goes on without some).
  int node_id = 0;
  std::vector<int> nodes_now;
  std::vector<RestartRecord> restarts;
};

void AnnounceLaunch(const Launch& launch, std::ostream& out) {
  const int workers = static_cast<int>(launch.layout.workers.size());
  const WorkerEnv& first = launch.layout.workers.front();
  const std::string rendezvous = launch.file_store ? "a file in the run directory"
                                                   : absl::StrCat(first.master_addr, ":", first.master_port);
  out << absl::StrFormat(
             "\nlaunching %d %s (%s, node %d of %d) with %d intra-op %s each; rendezvous "
             "%s\nrun directory %s: plan.binpb, plan.txt, metrics.jsonl, rank<R>.log; "
             "checkpoints in %s (%s)\n",
             workers, workers == 1 ? "worker" : "workers", launch.layout.mode, launch.layout.node_rank,
             launch.request.nodes, launch.threads, launch.threads == 1 ? "thread" : "threads",
             rendezvous, launch.request.run_dir, launch.checkpoint_dir, RunLabel(launch.run_id))
      << std::flush;
}

// Gives every local worker of attempt a fresh job token (single node: a straggler of a failed
// attempt cannot join) and a fresh store file (a dead attempt's keys stay in its own; a file or
// link left at that name by an earlier run is removed, never written through).
absl::Status PrepareAttempt(Launch& launch, const EnvLookup& env, int attempt) {
  const LaunchRequest& request = launch.request;
  absl::StatusOr<std::string> token =
      JobTokenFor(launch.layout, request.slurm.has_value() ? request.slurm->job_id : std::string(),
                  PlanHashHex(launch.plan), env);
  if (!token.ok()) return token.status();
  const std::string store_file =
      launch.file_store ? (fs::path(request.run_dir) / absl::StrCat(".rendezvous.attempt", attempt)).string() : "";
  if (launch.file_store && ::unlink(store_file.c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(absl::StrCat("cannot remove ", store_file, ": ", std::strerror(errno)));
  }
  for (WorkerEnv& w : launch.layout.workers) {
    w.job_token = *token;
    w.store_file = store_file;
    w.run_id = launch.run_id;
  }
  return absl::OkStatus();
}

// Whether a failed attempt is restarted; announces the restart on err.
bool ShouldRestart(const SupervisionResult& result, const Launch& launch, int attempt, int max_restarts,
                   std::ostream& err) {
  if (result.interrupted_by != 0 || !result.first_failure.has_value() || attempt >= max_restarts) {
    if (result.interrupted_by != 0 && !result.first_failure.has_value()) {
      err << "workers stopped at a step boundary; checkpoints are in " << launch.checkpoint_dir
          << " (resume: run the same command again)\n";
    }
    return false;
  }
  err << absl::StrFormat(
             "restarting the workers (restart %d of %d): they resume from the newest intact "
             "checkpoint in %s; the failed attempt's logs are rank<R>.attempt%d.log\n",
             attempt + 1, max_restarts, launch.checkpoint_dir, attempt)
      << std::flush;
  return true;
}

// Hands issues to options.report_issues, or prints them plainly; returns whether any is an error.
bool ReportIssues(const std::vector<PlanIssue>& issues, const RunOptions& options, std::ostream& err) {
  if (issues.empty()) return false;
  if (options.report_issues) {
    options.report_issues(issues);
  } else {
    for (const PlanIssue& i : issues) {
      err << (i.warning ? "warning[" : "error[") << i.code << "]: " << i.field << ": " << i.message << "\n";
    }
  }
  return std::any_of(issues.begin(), issues.end(), [](const PlanIssue& i) { return !i.warning; });
}

// Whether this node runs global rank 0, the one that publishes and prunes checkpoints.
bool HostsRankZero(const LaunchLayout& layout) {
  return std::any_of(layout.workers.begin(), layout.workers.end(), [](const WorkerEnv& w) { return w.rank == 0; });
}

// Locks the run directory and the checkpoint directory (once when they are the same). Only the
// node of rank 0 locks: the other nodes of a job may share both directories on one file system.
absl::Status LockOutputs(Launch& launch) {
  if (!HostsRankZero(launch.layout) || !launch.locks.empty()) return absl::OkStatus();
  std::error_code ec;
  // flock conflicts between two open files of one process: one lock when both are one directory.
  std::vector<std::string> dirs = {launch.request.run_dir};
  if (!fs::equivalent(launch.request.run_dir, launch.checkpoint_dir, ec)) dirs.push_back(launch.checkpoint_dir);
  for (const std::string& dir : dirs) {
    absl::StatusOr<std::unique_ptr<DirLock>> lock = DirLock::Acquire(dir);
    if (!lock.ok()) return lock.status();
    launch.locks.push_back(*std::move(lock));
  }
  return absl::OkStatus();
}

// What resume continues and whether this run may write into checkpoint.dir; sets the run id and
// prints the resume report and the checkpoints left in place. Returns kExitOk to go on.
int DecideResume(const ir::Plan& plan, Launch& launch, const RunOptions& options, std::ostream& out,
                 std::ostream& err) {
  absl::StatusOr<CheckpointDirScan> scan = ScanCheckpointDir(plan, launch.checkpoint_dir);
  if (!scan.ok()) {
    err << "error: " << scan.status().message() << "\n";
    return kExitRuntime;
  }
  std::vector<PlanIssue> issues = CheckpointDirIssues(plan, *scan);
  std::optional<ResumeReport> report;
  if (scan->resume.has_value()) {
    absl::StatusOr<ResumeReport> checked = CheckResume(plan, scan->resume->info.path);
    if (!checked.ok()) {
      err << "error: " << checked.status().message() << "\n";
      return kExitRuntime;
    }
    report = *std::move(checked);
    issues.insert(issues.end(), report->errors.begin(), report->errors.end());
    issues.insert(issues.end(), report->warnings.begin(), report->warnings.end());
  }
  if (ReportIssues(issues, options, err)) return kExitInvalid;
  launch.run_id = scan->run_id;
  if (launch.run_id.empty()) {
    absl::StatusOr<std::string> id = NewRunId();
    if (!id.ok()) {
      err << "error: " << id.status().message() << "\n";
      return kExitRuntime;
    }
    launch.run_id = *id;
  }
  if (report.has_value()) out << ResumeReportText(*report);
  if (const std::string line = LeftInPlaceLine(*scan); !line.empty()) out << line << "\n";
  return kExitOk;
}

// Before any work: both output directories checked and created, locked, the resume decided.
int ClaimOutputs(const ir::Plan& plan, Launch& launch, const RunOptions& options, std::ostream& out,
                 std::ostream& err) {
  if (absl::Status s = PrepareOutputDir(launch.request.run_dir, "run directory"); !s.ok()) {
    err << "error: " << s.message() << "\n";
    return kExitRuntime;
  }
  if (absl::Status s = PrepareOutputDir(launch.checkpoint_dir, "checkpoint.dir"); !s.ok()) {
    PlanIssue unusable;
    unusable.code = codes::kCheckpointDirUnusable;
    unusable.field = "checkpoint.dir";
    unusable.message = std::string(s.message());
    ReportIssues({unusable}, options, err);
    return kExitInvalid;
  }
  if (absl::Status s = LockOutputs(launch); !s.ok()) {
    err << "error: " << s.message() << "\n";
    return kExitRuntime;
  }
  return DecideResume(plan, launch, options, out, err);
}

// After every worker finished: the restarts go into summary.json (on the node of rank 0).
int Finish(const Launch& launch, std::ostream& out, std::ostream& err) {
  const std::string& run_dir = launch.request.run_dir;
  if (absl::Status s = AddRestartsToSummary(run_dir, launch.restarts); !s.ok()) {
    err << "error: " << s.message() << "\n";
    return kExitRuntime;
  }
  const size_t workers = launch.layout.workers.size();
  std::string restarts;
  if (!launch.restarts.empty()) {
    const int before = launch.restarts.front().nodes_before;
    const int now = launch.restarts.back().nodes_after;
    restarts = absl::StrFormat(" after %d %s%s", launch.restarts.size(),
                               launch.restarts.size() == 1 ? "restart" : "restarts",
                               now == before ? "" : absl::StrFormat(" (now %d of %d nodes)", now, before));
  }
  out << absl::StrFormat("run finished%s: %d %s succeeded; metrics in %s\n", restarts, workers,
                         workers == 1 ? "worker" : "workers", (fs::path(run_dir) / "metrics.jsonl").string());
  return kExitOk;
}

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The step of the checkpoint a restart resumes (the newest intact one of the job), 0 for none.
int64_t ResumedStep(const Launch& launch) {
  absl::StatusOr<CheckpointDirScan> scan = ScanCheckpointDir(launch.plan, launch.checkpoint_dir);
  return scan.ok() && scan->resume.has_value() ? scan->resume->info.step : 0;
}

// Where the launchers of an elastic job meet (inside checkpoint.dir, which every node shares).
std::string ElasticDir(const Launch& launch) {
  return (fs::path(launch.checkpoint_dir) / ".accel-elastic").string();
}

// This node as the other launchers reach it: the local end of its route to the current master.
absl::StatusOr<ElasticMember> SelfMember(const Launch& launch) {
  ElasticMember self;
  self.node_id = launch.node_id;
  self.pid = ::getpid();
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) == 0) self.host = host;
  absl::StatusOr<std::string> address = LocalAddressToward(launch.layout.workers.front().master_addr);
  if (!address.ok()) return address.status();
  self.address = *address;
  return self;
}

// Replaces the plan after a shrink: the previous plan files are kept as plan.attempt<K>.*, the
// new ones written, and the request and layout renumbered for round's members.
absl::Status AdoptShrunkPlan(Launch& launch, const ReplannedJob& job, const ElasticRound& round, int attempt) {
  const fs::path run_dir = launch.request.run_dir;
  for (const char* ext : {".binpb", ".txt"}) {
    std::error_code ec;
    fs::copy_file(run_dir / absl::StrCat("plan", ext), run_dir / absl::StrCat("plan.attempt", attempt, ext),
                  fs::copy_options::overwrite_existing, ec);
  }
  launch.plan = job.plan;
  launch.summary = job.summary;
  LaunchRequest& request = launch.request;
  request.nodes = static_cast<int>(round.members.size());
  request.slots.clear();
  for (const ir::RankPlacement& r : job.plan.ranks()) request.slots.push_back({r.rank(), r.node(), r.local_rank()});
  request.node_rank = round.self_index;
  request.master_addr = round.members.front().address;
  absl::StatusOr<LaunchLayout> layout = LocalLayout(request, launch.threads);
  if (!layout.ok()) return layout.status();
  launch.layout = *std::move(layout);
  if (absl::Status locked = LockOutputs(launch); !locked.ok()) return locked;
  return PrepareRunDir(request.run_dir, launch.plan, launch.summary);
}

// Before restart `restart` of an elastic job: meets the other nodes' launchers and, when fewer
// came back, re-plans for them. Returns kExitOk to go on.
int ElasticRestart(Launch& launch, const RunOptions& options, int restart, std::ostream& out, std::ostream& err) {
  absl::StatusOr<ElasticMember> self = SelfMember(launch);
  if (!self.ok()) {
    err << "error: cannot rejoin the job: " << self.status().message() << "\n";
    return kExitRuntime;
  }
  ElasticRoundRequest request;
  request.dir = ElasticDir(launch);
  request.round = restart;
  request.expected = launch.nodes_now;
  request.min_nodes = options.min_nodes;
  request.timeout = std::chrono::milliseconds(static_cast<int64_t>(options.rejoin_timeout_seconds * 1000));
  request.self = *self;
  out << absl::StrFormat("waiting up to %g s for the job's %d nodes to rejoin (--min-nodes %d)\n",
                         options.rejoin_timeout_seconds, launch.nodes_now.size(), options.min_nodes)
      << std::flush;
  absl::StatusOr<ElasticRound> round = JoinElasticRound(request);
  if (!round.ok()) {
    err << "error: cannot continue: " << round.status().message() << "\n";
    return kExitRuntime;
  }
  std::vector<int> kept;
  for (const ElasticMember& m : round->members) kept.push_back(m.node_id);
  if (kept.size() == launch.nodes_now.size()) return kExitOk;
  absl::StatusOr<ReplannedJob> job = options.replan(static_cast<int>(kept.size()), restart);
  if (absl::Status s = job.ok() ? AdoptShrunkPlan(launch, *job, *round, restart - 1) : job.status(); !s.ok()) {
    err << "error: cannot continue on " << kept.size() << " nodes: " << s.message() << "\n";
    return kExitRuntime;
  }
  // The checkpoint the shrunk job resumes, checked against its new plan before workers start.
  if (const int rc = DecideResume(launch.plan, launch, options, out, err); rc != kExitOk) return rc;
  out << absl::StrFormat(
             "continuing on %d of %d nodes (launch node ranks %s); this node is node %d of %d, master %s:%d\n%s",
             kept.size(), launch.nodes_now.size(), absl::StrJoin(kept, ", "), launch.layout.node_rank, kept.size(),
             launch.layout.workers.front().master_addr, launch.layout.workers.front().master_port, launch.summary)
      << std::flush;
  launch.nodes_now = kept;
  return kExitOk;
}

// Prepares restart attempt+1 (elastic rendezvous or a fresh port) and records it. Returns kExitOk
// to go on.
int PrepareRestart(Launch& launch, const RunOptions& options, int attempt, std::ostream& out, std::ostream& err) {
  RestartRecord record;
  record.restart = attempt + 1;
  record.failed_unix = UnixSeconds();
  record.nodes_before = launch.request.nodes;
  record.world_before = static_cast<int>(launch.request.slots.size());
  if (const std::optional<LastStep> last = LastMetricsStep(launch.request.run_dir)) {
    record.last_step_before = last->step;
    record.last_step_unix = last->unix_time;
  }
  const LaunchRequest& request = launch.request;
  if (options.min_nodes > 0) {
    if (const int rc = ElasticRestart(launch, options, attempt + 1, out, err); rc != kExitOk) return rc;
  } else if (!request.master_port.has_value() && request.nodes == 1 && !request.slurm.has_value()) {
    // A port this launcher picked may still be held by the dead rank 0's store: pick anew.
    absl::StatusOr<LaunchLayout> again = LocalLayout(request, launch.threads);
    if (!again.ok()) {
      err << "error: " << again.status().message() << "\n";
      return kExitRuntime;
    }
    launch.layout = *std::move(again);
  }
  record.nodes_after = launch.request.nodes;
  record.world_after = static_cast<int>(launch.request.slots.size());
  record.nodes_kept = launch.nodes_now;
  record.resumed_step = ResumedStep(launch);
  record.relaunch_unix = UnixSeconds();
  launch.restarts.push_back(record);
  if (absl::Status s = WriteRestartRecords(launch.request.run_dir, launch.restarts); !s.ok()) {
    err << "error: " << s.message() << "\n";
    return kExitRuntime;
  }
  return kExitOk;
}

// Runs attempts until one finishes or the restart policy gives up.
int RunAttempts(Launch& launch, const RunOptions& options, const EnvLookup& env, std::ostream& out,
                std::ostream& err) {
  const std::string& run_dir = launch.request.run_dir;
  for (int attempt = 0;; ++attempt) {
    if (absl::Status prepared = PrepareAttempt(launch, env, attempt); !prepared.ok()) {
      err << "error: " << prepared.message() << "\n";
      return attempt == 0 ? kExitUsage : kExitRuntime;
    }
    const absl::StatusOr<SupervisionResult> result = SuperviseAttempt(
        WorkerSpecs(launch.layout, launch.exe, run_dir, attempt), options.grace_period_seconds, out);
    if (!result.ok()) {
      err << "error: cannot start workers: " << result.status().message() << "\n";
      return kExitRuntime;
    }
    if (result->ok()) return Finish(launch, out, err);
    err << "error: " << FormatFailureReport(*result);
    if (!ShouldRestart(*result, launch, attempt, options.max_restarts, err)) return kExitRuntime;
    KeepAttemptLogs(launch.layout, run_dir, attempt);
    if (const int rc = PrepareRestart(launch, options, attempt, out, err); rc != kExitOk) return rc;
  }
}

}  // namespace

int RunJob(const ir::Plan& plan, const std::string& summary, const RunOptions& options,
           const EnvLookup& env, int64_t launch_unix_ns, std::ostream& out, std::ostream& err) {
  Launch launch;
  launch.plan = plan;
  launch.summary = summary;
  absl::StatusOr<LaunchRequest> request = LaunchRequestFor(plan, options, env);
  if (!request.ok()) {
    err << "error: " << request.status().message() << "\n";
    return kExitUsage;
  }
  launch.request = *std::move(request);
  launch.request.launch_unix_ns = launch_unix_ns;
  absl::StatusOr<LaunchLayout> layout = ResolveLaunchLayout(launch.request);
  if (!layout.ok()) {
    err << "error: " << layout.status().message() << "\n";
    return kExitUsage;
  }
  const int local_workers = static_cast<int>(layout->workers.size());
  launch.threads = options.threads_per_worker > 0 ? options.threads_per_worker
                                                  : std::max(1, UsableCpus() / local_workers);
  for (WorkerEnv& w : layout->workers) w.num_threads = launch.threads;
  launch.layout = *std::move(layout);
  launch.node_id = launch.layout.node_rank;
  for (int n = 0; n < launch.request.nodes; ++n) launch.nodes_now.push_back(n);
  if (options.min_nodes > 0 && !options.replan) {
    err << "error: --min-nodes needs a way to re-plan the job (RunOptions::replan)\n";
    return kExitUsage;
  }
  if (options.min_nodes > 0 && launch.request.slurm.has_value()) {
    err << "error: --min-nodes continues a job started by hand (--node-rank); under SLURM, srun "
           "ends the job step when a node is lost\n";
    return kExitUsage;
  }
  launch.checkpoint_dir = plan.checkpoint().dir().empty()
                              ? (fs::path(launch.request.run_dir) / "checkpoints").string()
                              : plan.checkpoint().dir();
  if (const int claimed = ClaimOutputs(plan, launch, options, out, err); claimed != kExitOk) return claimed;
  if (absl::Status prepared = PrepareRunDir(launch.request.run_dir, plan, summary); !prepared.ok()) {
    err << "error: " << prepared.message() << "\n";
    return kExitRuntime;
  }
  launch.exe = options.worker_executable.empty() ? SelfExecutable() : options.worker_executable;
  launch.file_store = launch.request.nodes == 1;
  if (options.min_nodes > 0 && HostsRankZero(launch.layout)) {
    // A rendezvous of an earlier run of this job would look like this run's rounds.
    std::error_code ec;
    RemoveTree(ElasticDir(launch), ec);
  }
  AnnounceLaunch(launch, out);
  return RunAttempts(launch, options, env, out, err);
}

}  // namespace accel::exec
