#include "launcher/fatal_signal.h"

#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

namespace accel::exec {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

void WriteText(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, ::strlen(text));
  (void)ignored;
}

void OnFatalSignal(int signal) {
  WriteText("\nfatal signal: ");
  WriteText(::strsignal(signal));
  WriteText("; call stack:\n");
  void* frames[64];
  const int count = ::backtrace(frames, 64);
  ::backtrace_symbols_fd(frames, count, STDERR_FILENO);
  // SA_RESETHAND restored the default action: die of the same signal.
  ::raise(signal);
}

}  // namespace

void InstallFatalSignalBacktrace() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  void* warm[1];
  ::backtrace(warm, 1);
  struct sigaction action {};
  action.sa_handler = OnFatalSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND | SA_NODEFER;
  for (int signal : kSignals) ::sigaction(signal, &action, nullptr);
}

}  // namespace accel::exec
