#include "executor/calibrate/tensor_parallel_step.h"

#include <unistd.h>

#include <torch/torch.h>

#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "executor/calibrate/every_core.h"
#include "executor/calibrate/group_member.h"
#include "executor/calibrate/timing.h"
#include "executor/calibrate/training_steps.h"
#include "executor/communicator.h"
#include "executor/forwarding_communicator.h"
#include "executor/models/causal_lm.h"

namespace accel::exec {
namespace {

using calibrate::Median;

constexpr int kWarmUpSteps = 1;  // per round and mode: the first step after a switch
constexpr int kTimedSteps = 3;

// The tensor-parallel group the reference model sees: the world's all-reduces, counted, or
// skipped (returning at once with this rank's own values) while `skip` is set. The model under
// tensor parallelism without sequence parallelism calls nothing else; every other collective
// is passed through uncounted.
class SkippableGroup final : public ForwardingCommunicator {
 public:
  using ForwardingCommunicator::ForwardingCommunicator;

  bool skip = false;
  std::vector<double> call_bytes;  // every all-reduce made while not skipping

  absl::Status AllReduce(at::Tensor& tensor, ReduceOp op) override {
    if (skip) return absl::OkStatus();
    call_bytes.push_back(static_cast<double>(tensor.numel() * tensor.element_size()));
    return inner_->AllReduce(tensor, op);
  }
};

// Every timed step with and without the collectives, and each round's difference of medians.
struct Timings {
  std::vector<double> with, without, differences;
};

// One round: a warm-up and kTimedSteps steps with the collectives, then the same with them
// skipped; each mode starts together on every rank (a barrier). False when the barrier fails.
bool TimeRound(CausalLm& model, SkippableGroup& group, Communicator& world,
               torch::optim::SGD& sgd, const torch::Tensor& tokens, Timings& timings) {
  double medians[2] = {0, 0};
  for (bool skip : {false, true}) {
    group.skip = false;
    if (!world.Barrier().ok()) return false;
    group.skip = skip;
    std::vector<double> s = TimeTrainingSteps(model, sgd, tokens, kWarmUpSteps + kTimedSteps);
    s.erase(s.begin(), s.begin() + kWarmUpSteps);
    medians[skip ? 1 : 0] = Median(s);
    std::vector<double>& all = skip ? timings.without : timings.with;
    all.insert(all.end(), s.begin(), s.end());
  }
  group.skip = false;
  timings.differences.push_back(medians[0] - medians[1]);
  return true;
}

// Rank `rank` of the group: returns the process exit code; rank 0 writes
// "with without difference bytes..." to `out_fd`.
int RunMember(int rank, int group_size, int rounds, const std::string& store_file, int out_fd) {
  absl::StatusOr<GroupMember> member = JoinGlooGroup(rank, group_size, store_file);
  if (!member.ok()) return 3;
  auto group = std::make_shared<SkippableGroup>(member->world);
  TensorParallel tp;
  tp.group = group;
  absl::StatusOr<std::shared_ptr<CausalLm>> model = BuildCausalLm(ModelConfig{}, 1234, tp);
  if (!model.ok()) return 5;
  try {
    torch::optim::SGD sgd((*model)->parameters(), torch::optim::SGDOptions(1e-3));
    const torch::Tensor tokens = torch::randint(0, ModelConfig{}.vocab_size, {8, 129}, torch::kLong);
    Timings timings;
    for (int round = 0; round < rounds; ++round) {
      if (!TimeRound(**model, *group, *member->world, sgd, tokens, timings)) return 6;
    }
    group->call_bytes.clear();
    TimeTrainingSteps(**model, sgd, tokens, 1);
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

absl::StatusOr<TensorParallelStepSample> MeasureTensorParallelStep(int group_size, int rounds,
                                                                  const std::string& store_file) {
  if (group_size < 2 || rounds < 1) {
    return absl::InvalidArgumentError("a tensor-parallel step needs at least 2 ranks and 1 round, not " +
                                      std::to_string(group_size) + " and " + std::to_string(rounds));
  }
  absl::StatusOr<std::string> text = RunForkedGroup(group_size, [&](int rank, int fd) {
    return RunMember(rank, group_size, rounds, store_file, fd);
  });
  if (!text.ok()) {
    return absl::InternalError("the tensor-parallel step over " + std::to_string(group_size) +
                               " ranks failed: " + std::string(text.status().message()));
  }
  TensorParallelStepSample sample;
  sample.group_size = group_size;
  std::istringstream in(*text);
  in >> sample.with_collectives_seconds >> sample.without_collectives_seconds >>
      sample.paired_difference_seconds;
  for (double b; in >> b;) sample.call_bytes.push_back(b);
  if (!(sample.with_collectives_seconds > 0) || !(sample.without_collectives_seconds > 0) ||
      sample.call_bytes.empty()) {
    return absl::InternalError("the tensor-parallel step over " + std::to_string(group_size) +
                               " ranks returned incomplete results");
  }
  return sample;
}

}  // namespace accel::exec
