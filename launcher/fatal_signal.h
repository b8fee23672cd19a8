// A worker that dies of a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) writes the signal
// and its call stack to stderr, which the launcher keeps in rank<R>.log, before dying of the same
// signal: the launcher still reports "killed by signal N", and the log says where. Torch-free.
#ifndef ACCEL_LAUNCHER_FATAL_SIGNAL_H_
#define ACCEL_LAUNCHER_FATAL_SIGNAL_H_

namespace accel::exec {

// Installs the handlers (once per process; later calls do nothing). The stack comes from glibc's
// backtrace(), with function names where the binary exports its symbols (accel-executor is linked
// with -rdynamic); only async-signal-safe calls run in the handler after the first backtrace()
// call, which is made here so that libgcc is loaded before any fault.
void InstallFatalSignalBacktrace();

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_FATAL_SIGNAL_H_
