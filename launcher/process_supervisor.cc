#include "launcher/process_supervisor.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/no_follow.h"

extern char** environ;

namespace accel::exec {

namespace {

using Clock = std::chrono::steady_clock;

// Set by the SIGINT/SIGTERM handler, read by Wait(). A lock-free atomic int is safe to store from
// a signal handler.
std::atomic<int> g_received_signal{0};
std::atomic<int> g_signal_count{0};

extern "C" void OnLauncherSignal(int sig) {
  g_received_signal.store(sig);
  g_signal_count.fetch_add(1);
}

// Installs the handlers and restores the previous ones when destroyed.
class SignalScope {
 public:
  SignalScope() {
    g_received_signal.store(0);
    g_signal_count.store(0);
    struct sigaction action {};
    action.sa_handler = OnLauncherSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: let sleeps end early
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~SignalScope() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// One SignalScope per process at a time (handlers are process-wide); owned by the supervisor
// that installed it.
std::unique_ptr<SignalScope>& ActiveSignalScope() {
  static std::unique_ptr<SignalScope> scope;
  return scope;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev) : absl::StrCat("signal ", sig);
}

std::string Seconds(std::chrono::milliseconds ms) {
  return absl::StrFormat("%.1f s", static_cast<double>(ms.count()) / 1000.0);
}

}  // namespace

bool SupervisionResult::ok() const {
  if (first_failure.has_value() || interrupted_by != 0) return false;
  for (const ProcessExit& e : exits) {
    if (!e.success()) return false;
  }
  return true;
}

std::string DescribeExit(const ProcessExit& exit) {
  if (!exit.reaped) return "did not exit after SIGKILL";
  if (exit.exited) return absl::StrCat("exited with status ", exit.status);
  return absl::StrCat("was killed by signal ", exit.signal, " (", SignalName(exit.signal), ")");
}

std::vector<std::string> ReadLastLines(const std::string& path, int max_lines) {
  std::vector<std::string> lines;
  if (max_lines <= 0) return lines;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return lines;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return lines;
  }
  constexpr off_t kMaxRead = 1 << 20;
  off_t start = st.st_size > kMaxRead ? st.st_size - kMaxRead : 0;
  std::string text(static_cast<size_t>(st.st_size - start), '\0');
  ssize_t n = ::pread(fd, text.data(), text.size(), start);
  ::close(fd);
  if (n < 0) return lines;
  text.resize(static_cast<size_t>(n));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  if (text.empty()) return lines;
  size_t end = text.size();
  while (static_cast<int>(lines.size()) < max_lines) {
    size_t nl = text.rfind('\n', end == 0 ? 0 : end - 1);
    if (nl == std::string::npos || end == 0) {
      lines.push_back(text.substr(0, end));
      break;
    }
    lines.push_back(text.substr(nl + 1, end - nl - 1));
    end = nl;
  }
  // A partial read may start mid-line; drop that fragment if it was reached.
  if (start > 0 && static_cast<int>(lines.size()) < max_lines && !lines.empty()) lines.pop_back();
  return {lines.rbegin(), lines.rend()};
}

std::string FormatFailureReport(const SupervisionResult& result) {
  if (result.ok()) return "";
  std::string out;
  int stopped = 0;
  for (const ProcessExit& e : result.exits) stopped += e.stopped_by_us ? 1 : 0;
  if (result.hung.has_value()) {
    const ProcessExit& hung = result.exits[*result.hung];
    absl::StrAppend(&out, "rank ", hung.rank, " (pid ", hung.pid, ") hung: stopped by signal ",
                    hung.stop_signal, " (", SignalName(hung.stop_signal), ") for ",
                    Seconds(hung.stopped_for),
                    ", so its peers' collectives timed out waiting for it\n");
  }
  if (result.first_failure.has_value()) {
    const ProcessExit& failed = result.exits[*result.first_failure];
    absl::StrAppend(&out, "rank ", failed.rank, " (pid ", failed.pid, ") ", DescribeExit(failed));
    if (stopped > 0) {
      absl::StrAppend(&out, "; stopped the other ", stopped, stopped == 1 ? " worker" : " workers",
                      " in ", Seconds(result.stop_duration));
    }
    absl::StrAppend(&out, "\n");
  } else if (result.interrupted_by != 0) {
    absl::StrAppend(&out, "interrupted",
                    result.interrupted_by > 0
                        ? absl::StrCat(" by ", SignalName(result.interrupted_by))
                        : std::string(),
                    ": stopped ", stopped, stopped == 1 ? " worker" : " workers", " in ",
                    Seconds(result.stop_duration), "\n");
  }
  // Anything else worth knowing: workers that had to be killed, or failed besides the first.
  for (size_t i = 0; i < result.exits.size(); ++i) {
    const ProcessExit& e = result.exits[i];
    if (result.first_failure == i || result.hung == i || e.success()) continue;
    if (e.stopped_by_us && (e.exited || e.signal == SIGTERM)) continue;
    absl::StrAppend(&out, "rank ", e.rank, " (pid ", e.pid, ") ", DescribeExit(e),
                    e.stopped_by_us ? " after being told to stop" : "", "\n");
  }
  if (result.first_failure.has_value()) {
    const ProcessExit& failed = result.exits[*result.first_failure];
    if (result.failure_log_tail.empty()) {
      absl::StrAppend(&out, "rank ", failed.rank, " wrote nothing to ", result.failure_log_path,
                      "\n");
    } else {
      absl::StrAppend(&out, "last ", result.failure_log_tail.size(),
                      result.failure_log_tail.size() == 1 ? " line" : " lines", " of ",
                      result.failure_log_path, ":\n");
      for (const std::string& line : result.failure_log_tail) {
        absl::StrAppend(&out, "  | ", line, "\n");
      }
    }
  }
  return out;
}

ProcessSupervisor::ProcessSupervisor(SupervisorOptions options) : options_(std::move(options)) {}

ProcessSupervisor::~ProcessSupervisor() {
  // A supervisor destroyed without Wait() (an early error in the caller) must not leave
  // processes behind.
  KillAndReapAll();
  if (options_.handle_signals) ActiveSignalScope().reset();
}

std::vector<pid_t> ProcessSupervisor::pids() const {
  std::vector<pid_t> out;
  for (const Child& c : children_) out.push_back(c.pid);
  return out;
}

absl::Status ProcessSupervisor::Start(const std::vector<ProcessSpec>& specs) {
  if (!children_.empty()) return absl::FailedPreconditionError("Start() called twice");
  if (options_.handle_signals) ActiveSignalScope() = std::make_unique<SignalScope>();
  const pid_t parent = ::getpid();
  for (const ProcessSpec& spec : specs) {
    if (spec.argv.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("rank ", spec.rank, ": empty argv"));
    }
    // Everything the child needs is prepared before fork(): after fork() in a possibly
    // multi-threaded parent only async-signal-safe calls are allowed.
    std::set<std::string> replaced;
    for (const auto& [name, value] : spec.env) replaced.insert(name);
    std::vector<std::string> env_strings;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string_view entry(*e);
      std::string name(entry.substr(0, entry.find('=')));
      if (replaced.count(name) == 0) env_strings.emplace_back(entry);
    }
    for (const auto& [name, value] : spec.env) env_strings.push_back(name + "=" + value);
    std::vector<char*> envp;
    for (std::string& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::vector<std::string> argv_strings = spec.argv;
    std::vector<char*> argv;
    for (std::string& s : argv_strings) argv.push_back(s.data());
    argv.push_back(nullptr);

    int log_fd = ::open(spec.log_path.c_str(),
                        O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (log_fd < 0) {
      int err = errno;
      KillAndReapAll();
      if (err == ELOOP) {
        return absl::FailedPreconditionError(absl::StrCat(
            "rank ", spec.rank, ": ", SymlinkRefusal(spec.log_path).message()));
      }
      return absl::InternalError(absl::StrCat("rank ", spec.rank, ": cannot create log file ",
                                              spec.log_path, ": ", std::strerror(err)));
    }
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    int exec_pipe[2];
    if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
      int err = errno;
      ::close(log_fd);
      if (null_fd >= 0) ::close(null_fd);
      KillAndReapAll();
      return absl::InternalError(absl::StrCat("pipe: ", std::strerror(err)));
    }
    const int death_signal = options_.parent_death_signal;

    pid_t pid = ::fork();
    if (pid == 0) {
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, death_signal);
      // The launcher may have died between fork() and prctl(): then nobody would signal us.
      if (::getppid() != parent) ::_exit(127);
      // Handlers do not survive execve, but ignored signals and the mask do: start clean.
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::signal(SIGPIPE, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
      ::dup2(log_fd, STDOUT_FILENO);
      ::dup2(log_fd, STDERR_FILENO);
      ::execve(argv[0], argv.data(), envp.data());
      int err = errno;
      ssize_t ignored = ::write(exec_pipe[1], &err, sizeof(err));
      (void)ignored;
      ::_exit(127);
    }
    int fork_errno = errno;
    ::close(exec_pipe[1]);
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    if (pid < 0) {
      ::close(exec_pipe[0]);
      KillAndReapAll();
      return absl::InternalError(absl::StrCat("rank ", spec.rank, ": fork: ",
                                              std::strerror(fork_errno)));
    }
    // Also set the group here, so a signal sent right after Start() cannot miss it.
    ::setpgid(pid, pid);
    Child child;
    child.spec = spec;
    child.pid = pid;
    child.started = Clock::now();
    child.exit.rank = spec.rank;
    child.exit.pid = pid;
    children_.push_back(std::move(child));

    // The pipe closes on a successful execve (O_CLOEXEC) or carries the errno of a failed one.
    int exec_errno = 0;
    ssize_t n;
    do {
      n = ::read(exec_pipe[0], &exec_errno, sizeof(exec_errno));
    } while (n < 0 && errno == EINTR);
    ::close(exec_pipe[0]);
    if (n == static_cast<ssize_t>(sizeof(exec_errno))) {
      KillAndReapAll();
      std::string message = absl::StrCat("rank ", spec.rank, ": cannot execute ", spec.argv[0],
                                         ": ", std::strerror(exec_errno));
      return exec_errno == ENOENT ? absl::NotFoundError(message) : absl::InternalError(message);
    }
  }
  return absl::OkStatus();
}

void ProcessSupervisor::KillAndReapAll() {
  SignalAll(SIGKILL);
  for (Child& c : children_) {
    if (c.done) continue;
    ::waitpid(c.pid, nullptr, 0);
    c.done = true;
  }
}

void ProcessSupervisor::SignalAll(int sig) {
  for (Child& c : children_) {
    if (c.done) continue;
    if (sig == SIGTERM || sig == SIGKILL) c.exit.stopped_by_us = true;
    // The whole group: the worker and anything it started.
    if (::kill(-c.pid, sig) != 0) ::kill(c.pid, sig);
  }
}

bool ProcessSupervisor::AllDone() const {
  for (const Child& c : children_) {
    if (!c.done) return false;
  }
  return true;
}

std::optional<size_t> ProcessSupervisor::ReapSome(bool stopping) {
  std::optional<size_t> failed;
  for (size_t i = 0; i < children_.size(); ++i) {
    Child& c = children_[i];
    if (c.done) continue;
    int status = 0;
    // WUNTRACED/WCONTINUED: a worker stopped by SIGSTOP is a hung peer worth naming later.
    pid_t r = ::waitpid(c.pid, &status, WNOHANG | WUNTRACED | WCONTINUED);
    if (r == 0) continue;
    if (r < 0 && errno == EINTR) continue;
    if (r > 0 && WIFSTOPPED(status)) {
      if (c.stop_signal == 0) c.stopped_at = Clock::now();
      c.stop_signal = WSTOPSIG(status);
      continue;
    }
    if (r > 0 && WIFCONTINUED(status)) {
      c.stop_signal = 0;
      continue;
    }
    c.done = true;
    c.exit.runtime =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - c.started);
    if (r < 0) {
      // ECHILD: someone else reaped it; its status is lost.
      c.exit.exited = false;
      c.exit.signal = 0;
    } else if (WIFEXITED(status)) {
      c.exit.exited = true;
      c.exit.status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      c.exit.exited = false;
      c.exit.signal = WTERMSIG(status);
    }
    if (stopping || c.exit.stopped_by_us || c.exit.success()) continue;
    // Several failures seen in one poll: a peer's crash makes the other ranks' collectives fail
    // too, so prefer the one killed by a signal (the likely cause) over an error exit.
    if (!failed.has_value() ||
        (!c.exit.exited && children_[*failed].exit.exited)) {
      failed = i;
    }
  }
  return failed;
}

void ProcessSupervisor::NoteStoppedChildren(SupervisionResult& result) {
  const Clock::time_point now = Clock::now();
  for (size_t i = 0; i < children_.size(); ++i) {
    Child& c = children_[i];
    if (c.done || c.stop_signal == 0) continue;
    c.exit.stop_signal = c.stop_signal;
    c.exit.stopped_for = std::chrono::duration_cast<std::chrono::milliseconds>(now - c.stopped_at);
    if (!result.hung.has_value() || c.exit.stopped_for > children_[*result.hung].exit.stopped_for) {
      result.hung = i;
    }
  }
}

void ProcessSupervisor::EchoNewOutput(bool flush) {
  if (!options_.echo) return;
  const Child* echoed = nullptr;
  for (const Child& c : children_) {
    if (c.spec.rank == options_.echo_rank) echoed = &c;
  }
  if (echoed == nullptr) return;
  int fd = ::open(echoed->spec.log_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  char buffer[65536];
  while (true) {
    ssize_t n = ::pread(fd, buffer, sizeof(buffer), echo_offset_);
    if (n <= 0) break;
    echo_offset_ += n;
    echo_partial_.append(buffer, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl = echo_partial_.find('\n'); nl != std::string::npos;
         nl = echo_partial_.find('\n', start)) {
      options_.echo(std::string_view(echo_partial_).substr(start, nl + 1 - start));
      start = nl + 1;
    }
    echo_partial_.erase(0, start);
  }
  ::close(fd);
  if (flush && !echo_partial_.empty()) {
    echo_partial_.push_back('\n');
    options_.echo(echo_partial_);
    echo_partial_.clear();
  }
}

void ProcessSupervisor::StopAll(SupervisionResult& result, Clock::time_point since) {
  SignalAll(SIGTERM);
  // A stopped process cannot act on SIGTERM (it stays pending) and would wait out the grace
  // period; SIGKILL ends it at once.
  for (Child& c : children_) {
    if (!c.done && c.stop_signal != 0 && ::kill(-c.pid, SIGKILL) != 0) ::kill(c.pid, SIGKILL);
  }
  const auto term_deadline = Clock::now() + options_.grace;
  const int signals_at_entry = g_signal_count.load();
  while (!AllDone() && Clock::now() < term_deadline) {
    // Another Ctrl-C while stopping means "now": skip the rest of the grace period.
    if (g_signal_count.load() > signals_at_entry) break;
    EchoNewOutput(false);
    ReapSome(true);
    if (!AllDone()) std::this_thread::sleep_for(options_.poll_interval);
  }
  if (!AllDone()) {
    SignalAll(SIGKILL);
    const auto kill_deadline = Clock::now() + options_.kill_wait;
    while (!AllDone() && Clock::now() < kill_deadline) {
      ReapSome(true);
      if (!AllDone()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (Child& c : children_) {
      if (!c.done) {
        c.done = true;
        c.exit.reaped = false;
      }
    }
  }
  // Processes the workers started and left behind (their group outlives the leader).
  for (Child& c : children_) {
    if (c.exit.reaped) ::kill(-c.pid, SIGKILL);
  }
  result.stop_duration =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since);
}

SupervisionResult ProcessSupervisor::Wait() {
  SupervisionResult result;
  while (true) {
    EchoNewOutput(false);
    std::optional<size_t> failed = ReapSome(false);
    if (failed.has_value()) {
      result.first_failure = failed;
      NoteStoppedChildren(result);
      StopAll(result, Clock::now());
      break;
    }
    if (AllDone()) break;
    int sig = options_.handle_signals ? g_received_signal.load() : 0;
    if (sig != 0 || stop_requested_.load()) {
      result.interrupted_by = sig != 0 ? sig : -1;
      StopAll(result, Clock::now());
      break;
    }
    std::this_thread::sleep_for(options_.poll_interval);
  }
  EchoNewOutput(true);
  for (const Child& c : children_) result.exits.push_back(c.exit);
  if (result.first_failure.has_value()) {
    const Child& c = children_[*result.first_failure];
    result.failure_log_path = c.spec.log_path;
    result.failure_log_tail = ReadLastLines(c.spec.log_path, options_.tail_lines);
  }
  if (options_.handle_signals) ActiveSignalScope().reset();
  return result;
}

}  // namespace accel::exec
