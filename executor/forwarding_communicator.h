// A Communicator that hands every call to another one: the base of decorators that change a
// few calls (executor/comm_timer.cc times the blocking ones; `accel calibrate`'s reference steps
// count or skip all-reduces, executor/calibrate/skippable_group.h). Header-only; include it only where a decorator is defined.
#ifndef ACCEL_EXECUTOR_FORWARDING_COMMUNICATOR_H_
#define ACCEL_EXECUTOR_FORWARDING_COMMUNICATOR_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "executor/communicator.h"

namespace accel::exec {

class ForwardingCommunicator : public Communicator {
 public:
  explicit ForwardingCommunicator(std::shared_ptr<Communicator> inner) : inner_(std::move(inner)) {}

  int Rank() const override { return inner_->Rank(); }
  int Size() const override { return inner_->Size(); }
  const std::vector<int>& GlobalRanks() const override { return inner_->GlobalRanks(); }
  std::string BackendName() const override { return inner_->BackendName(); }
  absl::Status AllReduce(at::Tensor& tensor, ReduceOp op) override {
    return inner_->AllReduce(tensor, op);
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> AllReduceAsync(at::Tensor tensor,
                                                              ReduceOp op) override {
    return inner_->AllReduceAsync(std::move(tensor), op);
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> AllGatherAsync(at::Tensor input,
                                                              at::Tensor output) override {
    return inner_->AllGatherAsync(std::move(input), std::move(output));
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> ReduceScatterAsync(at::Tensor input,
                                                                  at::Tensor output,
                                                                  ReduceOp op) override {
    return inner_->ReduceScatterAsync(std::move(input), std::move(output), op);
  }
  absl::Status AllGather(const at::Tensor& input, at::Tensor& output) override {
    return inner_->AllGather(input, output);
  }
  absl::Status ReduceScatter(const at::Tensor& input, at::Tensor& output, ReduceOp op) override {
    return inner_->ReduceScatter(input, output, op);
  }
  absl::Status AllToAll(const at::Tensor& input, at::Tensor& output, const std::vector<int64_t>& input_splits,
                        const std::vector<int64_t>& output_splits) override {
    return inner_->AllToAll(input, output, input_splits, output_splits);
  }
  absl::Status Broadcast(at::Tensor& tensor, int root) override {
    return inner_->Broadcast(tensor, root);
  }
  absl::Status Send(const at::Tensor& tensor, int dst, int tag) override {
    return inner_->Send(tensor, dst, tag);
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> SendAsync(at::Tensor tensor, int dst,
                                                         int tag) override {
    return inner_->SendAsync(std::move(tensor), dst, tag);
  }
  absl::Status Recv(at::Tensor& tensor, int src, int tag) override {
    return inner_->Recv(tensor, src, tag);
  }
  absl::Status Barrier() override { return inner_->Barrier(); }

 protected:
  std::shared_ptr<Communicator> inner_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_FORWARDING_COMMUNICATOR_H_
