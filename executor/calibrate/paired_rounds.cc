#include "executor/calibrate/paired_rounds.h"

#include <unistd.h>

#include <exception>
#include <sstream>
#include <utility>

#include "executor/calibrate/every_core.h"
#include "executor/calibrate/group_member.h"
#include "executor/calibrate/skippable_group.h"
#include "executor/calibrate/timing.h"

namespace accel::exec {
namespace {

using calibrate::Median;

// Every timed step with and without the collectives, and each round's difference of medians.
struct Timings {
  std::vector<double> with, without, differences;
};

// One round: a warm-up step and `timed_steps` steps with the collectives, then the same with
// them skipped; each mode starts together on every rank. False when a barrier fails.
bool TimeRound(SkippableGroup& group, Communicator& world, const TimeSteps& time_steps,
               int timed_steps, Timings& timings) {
  constexpr int kWarmUpSteps = 1;  // per round and mode: the first step after a switch
  double medians[2] = {0, 0};
  for (bool skip : {false, true}) {
    group.skip = false;
    if (!world.Barrier().ok()) return false;
    group.skip = skip;
    std::vector<double> s = time_steps(kWarmUpSteps + timed_steps);
    s.erase(s.begin(), s.begin() + kWarmUpSteps);
    medians[skip ? 1 : 0] = Median(s);
    std::vector<double>& all = skip ? timings.without : timings.with;
    all.insert(all.end(), s.begin(), s.end());
  }
  group.skip = false;
  timings.differences.push_back(medians[0] - medians[1]);
  return true;
}

// Rank `rank`: returns the process exit code; rank 0 writes "with without difference bytes..."
// to `out_fd`.
int RunMember(int rank, int group_size, int rounds, int timed_steps, SkippedCalls calls,
              const std::string& store_file, const MakeSteps& make, int out_fd) {
  absl::StatusOr<GroupMember> member = JoinGlooGroup(rank, group_size, store_file);
  if (!member.ok()) return 3;
  auto group = std::make_shared<SkippableGroup>(member->world, calls);
  try {
    const TimeSteps steps = make(group);
    Timings timings;
    for (int round = 0; round < rounds; ++round) {
      if (!TimeRound(*group, *member->world, steps, timed_steps, timings)) return 6;
    }
    group->call_bytes.clear();
    steps(1);
    std::ostringstream line;
    line.precision(9);
    line << Median(timings.with) << " " << Median(timings.without) << " "
         << Median(timings.differences);
    for (double b : group->call_bytes) line << " " << b;
    line << "\n";
    const std::string text = line.str();
    if (rank == 0 && ::write(out_fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      return 7;
    }
  } catch (const std::exception&) {
    return 8;
  }
  return 0;
}

}  // namespace

absl::StatusOr<PairedStepSample> MeasurePairedStep(const std::string& what, int group_size,
                                                   int rounds, int timed_steps,
                                                   SkippedCalls calls,
                                                   const std::string& store_file,
                                                   const MakeSteps& make) {
  if (group_size < 2 || rounds < 1 || timed_steps < 1) {
    return absl::InvalidArgumentError(what + " needs at least 2 ranks, 1 round and 1 timed step, not " +
                                      std::to_string(group_size) + ", " + std::to_string(rounds) +
                                      " and " + std::to_string(timed_steps));
  }
  const std::string over = what + " over " + std::to_string(group_size) + " ranks";
  absl::StatusOr<std::string> text = RunForkedGroup(group_size, [&](int rank, int fd) {
    return RunMember(rank, group_size, rounds, timed_steps, calls, store_file, make, fd);
  });
  if (!text.ok()) return absl::InternalError(over + " failed: " + std::string(text.status().message()));
  PairedStepSample sample;
  sample.group_size = group_size;
  std::istringstream in(*text);
  in >> sample.with_collectives_seconds >> sample.without_collectives_seconds >>
      sample.paired_difference_seconds;
  for (double b; in >> b;) sample.call_bytes.push_back(b);
  if (!(sample.with_collectives_seconds > 0) || !(sample.without_collectives_seconds > 0) ||
      sample.call_bytes.empty()) {
    return absl::InternalError(over + " returned incomplete results");
  }
  return sample;
}

}  // namespace accel::exec
