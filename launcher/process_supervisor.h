// Starts worker processes and supervises them as one job: a worker that fails stops the others,
// SIGINT/SIGTERM to the launcher is forwarded, and nothing outlives the launcher. Torch-free.
//
// Each worker runs in its own process group (setpgid), so a signal reaches the worker and every
// process it started; it gets PR_SET_PDEATHSIG so it dies when the launcher dies. Its stdout and
// stderr go to its log file; one rank's log can be echoed line by line while it runs.
#ifndef ACCEL_LAUNCHER_PROCESS_SUPERVISOR_H_
#define ACCEL_LAUNCHER_PROCESS_SUPERVISOR_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace accel::exec {

// One process to start.
struct ProcessSpec {
  // Label used in reports (the worker's global rank).
  int rank = 0;
  // argv[0] is the executable's path (execve: no PATH search).
  std::vector<std::string> argv;
  // Variables set on top of (replacing) the launcher's own environment.
  std::vector<std::pair<std::string, std::string>> env;
  // File receiving stdout and stderr, created or truncated; never through a symbolic link
  // (O_NOFOLLOW). stdin is /dev/null.
  std::string log_path;
};

// How the supervisor behaves.
struct SupervisorOptions {
  // After SIGTERM, how long workers get to exit before SIGKILL.
  std::chrono::milliseconds grace{5000};
  // How often exits, signals and the echoed log are checked.
  std::chrono::milliseconds poll_interval{20};
  // After SIGKILL, how long to wait for the kernel to reap before giving up on a process.
  std::chrono::milliseconds kill_wait{3000};
  // Rank whose log is passed to `echo` line by line while it runs; -1 for none.
  int echo_rank = 0;
  // Receives whole lines (with '\n') of the echoed log; null for none.
  std::function<void(std::string_view)> echo;
  // Install SIGINT/SIGTERM handlers for the duration of Wait(): the first signal forwards SIGTERM
  // to every worker, a second one sends SIGKILL. Previous handlers are restored afterwards.
  bool handle_signals = true;
  // Signal a worker receives when the launcher dies (prctl PR_SET_PDEATHSIG).
  int parent_death_signal = SIGKILL;
  // Lines of the failing worker's log kept for the report.
  int tail_lines = 20;
};

// How one process ended.
struct ProcessExit {
  int rank = 0;
  pid_t pid = 0;
  bool exited = false;        // exited on its own with `status`
  int status = 0;             // exit status when exited
  int signal = 0;             // terminating signal when !exited and reaped
  bool reaped = true;         // false: still alive after SIGKILL and kill_wait (reported, not waited)
  bool stopped_by_us = false; // ended after the supervisor signalled it
  std::chrono::milliseconds runtime{0};
  // Signal that had stopped the process (SIGSTOP, SIGTSTP, ...; seen with waitpid WUNTRACED)
  // when the job's first failure was seen, 0 when it was running; and for how long it had been
  // stopped by then. A stopped worker is a hung peer: the others' collectives time out on it.
  int stop_signal = 0;
  std::chrono::milliseconds stopped_for{0};

  // Exited with status 0.
  bool success() const { return reaped && exited && status == 0; }
};

// The outcome of a supervised job.
struct SupervisionResult {
  // One per started process, in start order.
  std::vector<ProcessExit> exits;
  // Index into `exits` of the first process that failed by itself (non-zero status or a signal
  // not sent by the supervisor); among failures seen in the same poll, one killed by a signal
  // wins. nullopt when none did.
  std::optional<size_t> first_failure;
  // Index into `exits` of a process that was stopped by a signal when the first failure was seen
  // (the longest-stopped one): the likely cause when the failure is a collective timeout.
  // nullopt when none was stopped.
  std::optional<size_t> hung;
  // The signal (SIGINT/SIGTERM) the launcher received, 0 when none; or -1 for RequestStop().
  int interrupted_by = 0;
  // Time from the first failure (or interruption) until every process was gone.
  std::chrono::milliseconds stop_duration{0};
  // The last SupervisorOptions::tail_lines lines of the failing process's log.
  std::vector<std::string> failure_log_tail;
  // Log path of the failing process.
  std::string failure_log_path;

  // Every process exited with status 0 and nothing was interrupted.
  bool ok() const;
};

// "exited with status 3", "was killed by signal 9 (SIGKILL)", "did not exit after SIGKILL".
std::string DescribeExit(const ProcessExit& exit);

// The report printed when a job failed or was interrupted, e.g.
//   rank 1 (pid 4242) exited with status 3; stopped the other 1 worker in 0.1 s
// preceded, when a worker was stopped by a signal at the failure (result.hung), by
//   rank 1 (pid 4243) hung: stopped by signal 19 (SIGSTOP) for 3.2 s, so its peers' collectives
//   timed out waiting for it
//   last 2 lines of runs/x/rank1.log:
//     | loading data
//     | boom
// Empty when result.ok().
std::string FormatFailureReport(const SupervisionResult& result);

// The last `max_lines` lines of the file at path (reads at most its last 1 MiB); empty when it
// cannot be read.
std::vector<std::string> ReadLastLines(const std::string& path, int max_lines);

// Starts and supervises a set of processes. Not copyable; one job per instance.
class ProcessSupervisor {
 public:
  explicit ProcessSupervisor(SupervisorOptions options);
  ~ProcessSupervisor();
  ProcessSupervisor(const ProcessSupervisor&) = delete;
  ProcessSupervisor& operator=(const ProcessSupervisor&) = delete;

  // Starts every process. If one cannot be started (log file not writable, exec failure such as a
  // missing executable), those already started are stopped and reaped and the error is returned:
  // Internal/NotFound naming the rank, path and errno text; FailedPrecondition "rank R:
  // refusing to write PATH: it is a symbolic link (...)" for a log path that is a link.
  absl::Status Start(const std::vector<ProcessSpec>& specs);

  // Blocks until every process ended. On the first failure (or a signal, or RequestStop) sends
  // SIGTERM to every remaining process group, SIGKILL after options.grace, and waits at most
  // options.kill_wait more.
  SupervisionResult Wait();

  // Asks Wait() to stop all processes as on SIGTERM. Thread-safe and async-signal-safe.
  void RequestStop() { stop_requested_.store(true); }

  // Process ids in start order.
  std::vector<pid_t> pids() const;

 private:
  struct Child {
    ProcessSpec spec;
    pid_t pid = 0;
    bool done = false;
    ProcessExit exit;
    std::chrono::steady_clock::time_point started;
    // Signal that stopped the child (0 while it runs) and when it was seen stopped.
    int stop_signal = 0;
    std::chrono::steady_clock::time_point stopped_at;
  };

  // Sends sig to the process group of every child still running.
  void SignalAll(int sig);
  // SIGKILL to every running child, then a blocking reap (error paths and the destructor).
  void KillAndReapAll();
  // Reaps whatever ended and records children stopped or continued by a signal; returns the
  // index of a child that failed by itself, if any.
  std::optional<size_t> ReapSome(bool stopping);
  // At the first failure: copies each stopped child's signal and duration into its ProcessExit
  // and sets result.hung to the longest-stopped one.
  void NoteStoppedChildren(SupervisionResult& result);
  void EchoNewOutput(bool flush);
  bool AllDone() const;
  void StopAll(SupervisionResult& result, std::chrono::steady_clock::time_point since);

  SupervisorOptions options_;
  std::vector<Child> children_;
  std::atomic<bool> stop_requested_{false};
  // Echo state: bytes of the echoed log already passed on, and an unfinished last line.
  int64_t echo_offset_ = 0;
  std::string echo_partial_;
};

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_PROCESS_SUPERVISOR_H_
