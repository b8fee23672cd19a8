#include "cli/worker_command.h"

#include <signal.h>

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "common/exit_codes.h"
#include "launcher/fatal_signal.h"
#include "launcher/rank_message.h"
#include "launcher/worker_env.h"
#include "executor/worker.h"
#include "ir/plan.pb.h"

namespace accel::cli {
namespace {

// Set from the signal handler, read by the training loop at step boundaries.
std::atomic<bool> g_stop_requested{false};

extern "C" void OnWorkerStopSignal(int) { g_stop_requested.store(true); }

void InstallStopHandlers() {
  struct sigaction action {};
  action.sa_handler = OnWorkerStopSignal;
  sigemptyset(&action.sa_mask);
  // SA_RESTART: a signal must not turn a blocking read or socket call into a spurious error;
  // the flag is enough.
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

}  // namespace

int RunWorkerCommand(const WorkerCommandOptions& options, std::ostream& out, std::ostream& err) {
  InstallStopHandlers();
  exec::InstallFatalSignalBacktrace();
  absl::StatusOr<exec::WorkerEnv> env = exec::WorkerEnvFromProcess();
  if (!env.ok()) {
    err << "error: accel worker: " << env.status().message()
        << " (the worker is started by `accel run`)\n";
    return kExitUsage;
  }
  std::ifstream in(options.plan, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  ir::Plan plan;
  if (!in || !plan.ParseFromString(bytes.str())) {
    err << "error: " << exec::WithRank(env->rank, "cannot read plan " + options.plan) << "\n";
    return kExitUsage;
  }
  exec::WorkerOptions worker_options;
  worker_options.stop = &g_stop_requested;
  if (absl::Status s = exec::ReadWorkerTestHooks(exec::ProcessEnvLookup(), worker_options);
      !s.ok()) {
    err << "error: " << exec::WithRank(env->rank, s.message()) << "\n";
    return kExitUsage;
  }
  absl::StatusOr<exec::WorkerResult> result = exec::RunWorker(plan, *env, worker_options);
  out.flush();
  if (!result.ok()) {
    err << "error: " << exec::WithRank(env->rank, result.status().message()) << "\n";
    err.flush();
    // The launcher reports the first worker to exit as the cause. A rank that only lost a peer
    // (Unavailable) waits longer, so that the peer that failed first, which waits 1 s, is the
    // one named.
    const bool lost_peer = result.status().code() == absl::StatusCode::kUnavailable;
    std::this_thread::sleep_for(std::chrono::seconds(lost_peer ? 3 : 1));
    return kExitRuntime;
  }
  return result->stopped ? 128 + SIGTERM : kExitOk;
}

void RegisterWorkerCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<WorkerCommandOptions>();
  CLI::App* sub = app.add_subcommand("worker", "Run one rank of a job (started by `accel run`)");
  sub->group("");  // hidden
  sub->add_option("--plan", options->plan, "Binary plan written by `accel run`")->required();
  sub->callback([options, &context] {
    context.exit_code = RunWorkerCommand(*options, *context.out, *context.err);
  });
}

}  // namespace accel::cli
