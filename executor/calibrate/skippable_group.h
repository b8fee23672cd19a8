// The communicator `accel calibrate`'s reference steps hand the model or the trainer: it passes
// one kind of all-reduce (SkippedCalls) through, counting its bytes, or skips it while `skip` is
// set, so the same step can be timed with and without those collectives. Every other call is
// passed through uncounted. Included only by calibrate's .cc files (LibTorch).
#ifndef ACCEL_EXECUTOR_CALIBRATE_SKIPPABLE_GROUP_H_
#define ACCEL_EXECUTOR_CALIBRATE_SKIPPABLE_GROUP_H_

#include <memory>
#include <utility>
#include <vector>

#include "executor/calibrate/paired_rounds.h"
#include "executor/forwarding_communicator.h"

namespace accel::exec {

class SkippableGroup final : public ForwardingCommunicator {
 public:
  SkippableGroup(std::shared_ptr<Communicator> inner, SkippedCalls calls)
      : ForwardingCommunicator(std::move(inner)), calls_(calls) {}

  bool skip = false;
  std::vector<double> call_bytes;  // bytes of every counted all-reduce made while not skipping

  absl::Status AllReduce(at::Tensor& tensor, ReduceOp op) override {
    if (calls_ != SkippedCalls::kBlocking) return inner_->AllReduce(tensor, op);
    if (skip) return absl::OkStatus();
    call_bytes.push_back(static_cast<double>(tensor.numel() * tensor.element_size()));
    return inner_->AllReduce(tensor, op);
  }

  // A skipped asynchronous all-reduce returns work that is already done, leaving the tensor as
  // this rank computed it.
  absl::StatusOr<std::unique_ptr<PendingWork>> AllReduceAsync(at::Tensor tensor,
                                                              ReduceOp op) override {
    if (calls_ != SkippedCalls::kAsync) return inner_->AllReduceAsync(std::move(tensor), op);
    if (skip) return std::unique_ptr<PendingWork>(new DoneWork());
    call_bytes.push_back(static_cast<double>(tensor.numel() * tensor.element_size()));
    return inner_->AllReduceAsync(std::move(tensor), op);
  }

 private:
  class DoneWork final : public PendingWork {
   public:
    absl::Status Wait() override { return absl::OkStatus(); }
    bool Done() override { return true; }
  };

  SkippedCalls calls_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_SKIPPABLE_GROUP_H_
