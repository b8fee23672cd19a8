#include "planner/step_time_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace accel::planner {
namespace {

// Σ exposed seconds per process-group set.
std::map<std::string, double> ExposedByGroup(const ir::StepTimeEstimate& estimate) {
  std::map<std::string, double> out;
  for (const ir::CommunicationTime& c : estimate.communication()) {
    out[c.group()] += c.exposed_seconds();
  }
  return out;
}

// The slowest stage's host optimizer step (StageComputeTime.host_seconds), part of
// compute_seconds.
double HostSeconds(const ir::StepTimeEstimate& estimate) {
  for (const ir::StageComputeTime& st : estimate.stages()) {
    if (st.stage() == estimate.slowest_stage()) return st.host_seconds();
  }
  return 0;
}

}  // namespace

StepTimeDifference LargestDifference(const ir::StepTimeEstimate& slower,
                                     const ir::StepTimeEstimate& faster) {
  const double slower_host = HostSeconds(slower);
  const double faster_host = HostSeconds(faster);
  StepTimeDifference best{"compute", (slower.compute_seconds() - slower_host) -
                                         (faster.compute_seconds() - faster_host)};
  auto consider = [&best](const std::string& term, double seconds) {
    if (seconds > best.seconds) best = {term, seconds};
  };
  consider("host optimizer step", slower_host - faster_host);
  consider("pipeline bubble", slower.bubble_seconds() - faster.bubble_seconds());
  std::map<std::string, double> a = ExposedByGroup(slower);
  std::map<std::string, double> b = ExposedByGroup(faster);
  for (const auto& [group, seconds] : a) b.try_emplace(group, 0.0);
  for (const auto& [group, seconds] : b) {
    auto it = a.find(group);
    consider("exposed " + group + " communication", (it == a.end() ? 0.0 : it->second) - seconds);
  }
  const double step = std::max(std::abs(faster.step_seconds()), std::abs(slower.step_seconds()));
  best.same_step = std::abs(slower.step_seconds() - faster.step_seconds()) <= 1e-9 * step;
  return best;
}

std::string DifferenceText(const StepTimeDifference& difference) {
  if (difference.seconds <= 0) return "no term larger (tie)";
  char number[32];
  if (difference.seconds >= 10) std::snprintf(number, sizeof number, "+%.1f s", difference.seconds);
  else std::snprintf(number, sizeof number, "+%.1f ms", difference.seconds * 1e3);
  if (difference.same_step) return "tie (" + difference.term + " " + number + ", offset by others)";
  return difference.term + " " + number;
}

}  // namespace accel::planner
