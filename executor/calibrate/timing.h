// Timing helpers shared by the calibration measurements (executor/calibrate/*.cc). Torch-free.
#ifndef ACCEL_EXECUTOR_CALIBRATE_TIMING_H_
#define ACCEL_EXECUTOR_CALIBRATE_TIMING_H_

#include <algorithm>
#include <chrono>
#include <vector>

namespace accel::exec::calibrate {

using Clock = std::chrono::steady_clock;

// Seconds since `start` on the monotonic clock.
inline double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The median of `v` (the upper one of an even count); `v` must not be empty. Calibration takes
// medians of repeated timings: the step-time model predicts a typical step, not the fastest.
inline double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The mean of `v`; `v` must not be empty. For a cost a step pays many times over (its
// collectives): a step's sum of n of them tends to n times their mean, tail included, which the
// median leaves out.
inline double Mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace accel::exec::calibrate

#endif  // ACCEL_EXECUTOR_CALIBRATE_TIMING_H_
