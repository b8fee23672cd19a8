// The log lines and the clock of `accel worker` (executor/worker.cc and the files it calls:
// checkpointing, the training loop, step reports, the run summary). Torch-free.
#ifndef ACCEL_EXECUTOR_WORKER_LOG_H_
#define ACCEL_EXECUTOR_WORKER_LOG_H_

#include <chrono>
#include <iostream>
#include <string>

namespace accel::exec {

// The clock of the worker's durations (setup, steps, the whole run): monotonic, so a wall-clock
// adjustment cannot make a step negative.
using WorkerClock = std::chrono::steady_clock;

// A WorkerClock duration in seconds.
inline double SecondsOf(WorkerClock::duration d) { return std::chrono::duration<double>(d).count(); }

// One line on stdout (the rank's log file), flushed so the launcher's echo of rank 0 and a crash
// report show it at once.
inline void WorkerLog(const std::string& line) { std::cout << line << std::endl; }

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_WORKER_LOG_H_
