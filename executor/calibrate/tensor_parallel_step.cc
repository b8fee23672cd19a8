#include "executor/calibrate/tensor_parallel_step.h"

#include <unistd.h>

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "executor/blas_threads.h"
#include "executor/calibrate/every_core.h"
#include "executor/calibrate/timing.h"
#include "executor/communicator.h"
#include "executor/forwarding_communicator.h"
#include "executor/models/causal_lm.h"
#include "executor/train/trainer.h"

namespace accel::exec {
namespace {

using calibrate::Clock;
using calibrate::Median;
using calibrate::Seconds;

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

// Seconds of each of `steps` training steps of `model` (forward, loss, backward, SGD update).
std::vector<double> TimeSteps(CausalLm& model, torch::optim::SGD& sgd, const torch::Tensor& tokens,
                              int steps) {
  const torch::Tensor input = tokens.narrow(1, 0, tokens.size(1) - 1);
  const torch::Tensor targets = tokens.narrow(1, 1, tokens.size(1) - 1);
  std::vector<double> seconds;
  for (int step = 0; step < steps; ++step) {
    const Clock::time_point start = Clock::now();
    sgd.zero_grad();
    torch::Tensor loss = CausalLmLossOfLogits(model, model.Forward(input), targets);
    loss.backward();
    sgd.step();
    seconds.push_back(Seconds(start));
  }
  return seconds;
}

// Rank `rank` of the group: returns the process exit code; rank 0 writes
// "with without bytes..." to `out_fd`.
int RunMember(int rank, int group_size, int rounds, const std::string& store_file, int out_fd) {
  at::set_num_threads(1);
  SetBlasThreads(1);
  RendezvousOptions options;
  options.world_size = group_size;
  options.rank = rank;
  options.store_file = store_file;
  options.timeout = std::chrono::seconds(60);
  absl::StatusOr<std::unique_ptr<Rendezvous>> rendezvous = Rendezvous::Connect(options);
  if (!rendezvous.ok()) return 3;
  absl::StatusOr<std::shared_ptr<Communicator>> world = (*rendezvous)->CreateWorld(CommBackend::kGloo);
  if (!world.ok()) return 4;
  auto group = std::make_shared<SkippableGroup>(*world);
  TensorParallel tp;
  tp.group = group;
  absl::StatusOr<std::shared_ptr<CausalLm>> model = BuildCausalLm(ModelConfig{}, 1234, tp);
  if (!model.ok()) return 5;
  try {
    torch::optim::SGD sgd((*model)->parameters(), torch::optim::SGDOptions(1e-3));
    const torch::Tensor tokens = torch::randint(0, ModelConfig{}.vocab_size, {8, 129}, torch::kLong);
    std::vector<double> with, without, differences;
    for (int round = 0; round < rounds; ++round) {
      double median[2] = {0, 0};
      for (bool skip : {false, true}) {
        group->skip = false;
        if (!(*world)->Barrier().ok()) return 6;
        group->skip = skip;
        std::vector<double> s = TimeSteps(**model, sgd, tokens, kWarmUpSteps + kTimedSteps);
        s.erase(s.begin(), s.begin() + kWarmUpSteps);
        median[skip ? 1 : 0] = Median(s);
        (skip ? without : with).insert((skip ? without : with).end(), s.begin(), s.end());
      }
      differences.push_back(median[0] - median[1]);
    }
    group->skip = false;
    group->call_bytes.clear();
    TimeSteps(**model, sgd, tokens, 1);
    std::ostringstream line;
    line.precision(9);
    line << Median(with) << " " << Median(without) << " " << Median(differences);
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
