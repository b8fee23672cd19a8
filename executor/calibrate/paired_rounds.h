// Timing a training step over a forked process group with some of its collectives and with them
// skipped, in paired rounds: `accel calibrate`'s reference steps (tensor_parallel_step.h,
// data_parallel_step.h). A shared machine's speed can drift by tens of percent over minutes, so
// each round times both modes back to back and the collectives' cost is taken per round. Plain
// types and std::function only (no LibTorch).
#ifndef ACCEL_EXECUTOR_CALIBRATE_PAIRED_ROUNDS_H_
#define ACCEL_EXECUTOR_CALIBRATE_PAIRED_ROUNDS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accel::exec {

class SkippableGroup;  // executor/calibrate/skippable_group.h (LibTorch)

// Which all-reduces a reference step counts and skips: the blocking ones (a tensor-parallel
// model's) or the asynchronous ones (the gradient buckets a trainer's backward hooks launch).
enum class SkippedCalls { kBlocking, kAsync };

// One paired measurement, from rank 0 of its group.
struct PairedStepSample {
  int group_size = 0;
  // Median seconds of one training step with its collectives, and with the skippable ones
  // skipped (each rank then runs its own share of the same work unsynchronized).
  double with_collectives_seconds = 0;
  double without_collectives_seconds = 0;
  // The median over rounds of each round's (with − without) medians: the collectives' cost.
  double paired_difference_seconds = 0;
  // Bytes of each skippable all-reduce one step makes, in call order.
  std::vector<double> call_bytes;
};

// Seconds of each of `steps` training steps (throws what LibTorch throws).
using TimeSteps = std::function<std::vector<double>(int steps)>;

// Builds one rank's model and step around `group` (the world, wrapped) and returns how to time
// its steps; throws what LibTorch throws.
using MakeSteps = std::function<TimeSteps(std::shared_ptr<SkippableGroup> group)>;

// Forks `group_size` (≥ 2) processes joined as one Gloo group (JoinGlooGroup: one thread each)
// through `store_file` (must not exist). Each wraps the world in a SkippableGroup counting
// `calls`, builds its step with `make` and runs `rounds` (≥ 1) rounds; a round times a warm-up
// and `timed_steps` (≥ 1) steps with the collectives, then the same with them skipped, each
// mode starting together on every rank. After the rounds one more step records call_bytes.
// Call it before this process starts LibTorch's thread pools. Errors: InvalidArgument for a
// count out of range; Internal, naming `what` ("the tensor-parallel step"), when a process
// fails or its results are incomplete.
absl::StatusOr<PairedStepSample> MeasurePairedStep(const std::string& what, int group_size,
                                                   int rounds, int timed_steps,
                                                   SkippedCalls calls,
                                                   const std::string& store_file,
                                                   const MakeSteps& make);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_PAIRED_ROUNDS_H_
