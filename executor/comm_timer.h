// A Communicator decorator that adds up the wall time its blocking collectives take, so a run can
// report how long a rank spent in, say, its tensor-parallel collectives next to the plan's
// estimate of their exposed time (planner/step_communication.h).
#ifndef ACCEL_EXECUTOR_COMM_TIMER_H_
#define ACCEL_EXECUTOR_COMM_TIMER_H_

#include <atomic>
#include <cstdint>
#include <memory>

#include "executor/communicator.h"

namespace accel::exec {

// Seconds and calls of the collectives timed so far; thread-safe.
class CollectiveTimer {
 public:
  void Add(double seconds);
  double seconds() const { return static_cast<double>(nanos_.load()) / 1e9; }
  int64_t calls() const { return calls_.load(); }

 private:
  std::atomic<int64_t> nanos_{0};
  std::atomic<int64_t> calls_{0};
};

// Wraps inner so that every blocking call (all-reduce, all-gather, reduce-scatter, broadcast,
// send, receive, barrier) adds its wall time to `timer`: the transfer, the reduction and the wait
// for the slowest peer. Asynchronous calls are forwarded untimed: whoever waits on their
// PendingWork times the wait (as the gradient sync does).
std::shared_ptr<Communicator> WithTimer(std::shared_ptr<Communicator> inner,
                                        std::shared_ptr<CollectiveTimer> timer);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_COMM_TIMER_H_
