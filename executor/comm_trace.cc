#include "executor/comm_trace.h"

#include <ATen/ATen.h>

namespace accel::exec {

void CollectiveTrace::Add(CollectiveRecord record) {
  std::lock_guard<std::mutex> lock(mu_);
  records_.push_back(std::move(record));
}

std::vector<CollectiveRecord> CollectiveTrace::Records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

void CollectiveTrace::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  records_.clear();
}

namespace {

class TracingCommunicator final : public Communicator {
 public:
  TracingCommunicator(std::shared_ptr<Communicator> inner, std::shared_ptr<CollectiveTrace> trace)
      : inner_(std::move(inner)), trace_(std::move(trace)) {}

  int Rank() const override { return inner_->Rank(); }
  int Size() const override { return inner_->Size(); }
  const std::vector<int>& GlobalRanks() const override { return inner_->GlobalRanks(); }
  std::string BackendName() const override { return inner_->BackendName(); }

  absl::Status AllReduce(at::Tensor& tensor, ReduceOp op) override {
    Record("all_reduce", tensor);
    return inner_->AllReduce(tensor, op);
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> AllReduceAsync(at::Tensor tensor,
                                                              ReduceOp op) override {
    Record("all_reduce", tensor);
    return inner_->AllReduceAsync(std::move(tensor), op);
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> AllGatherAsync(at::Tensor input,
                                                              at::Tensor output) override {
    Record("all_gather", input);
    return inner_->AllGatherAsync(std::move(input), std::move(output));
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> ReduceScatterAsync(at::Tensor input,
                                                                  at::Tensor output,
                                                                  ReduceOp op) override {
    Record("reduce_scatter", input);
    return inner_->ReduceScatterAsync(std::move(input), std::move(output), op);
  }
  absl::Status AllGather(const at::Tensor& input, at::Tensor& output) override {
    Record("all_gather", input);
    return inner_->AllGather(input, output);
  }
  absl::Status ReduceScatter(const at::Tensor& input, at::Tensor& output, ReduceOp op) override {
    Record("reduce_scatter", input);
    return inner_->ReduceScatter(input, output, op);
  }
  absl::Status AllToAll(const at::Tensor& input, at::Tensor& output, const std::vector<int64_t>& input_splits,
                        const std::vector<int64_t>& output_splits) override {
    Record("all-to-all", input);
    return inner_->AllToAll(input, output, input_splits, output_splits);
  }
  absl::Status Broadcast(at::Tensor& tensor, int root) override {
    Record("broadcast", tensor);
    return inner_->Broadcast(tensor, root);
  }
  absl::Status Send(const at::Tensor& tensor, int dst, int tag) override {
    Record("send", tensor);
    return inner_->Send(tensor, dst, tag);
  }
  absl::StatusOr<std::unique_ptr<PendingWork>> SendAsync(at::Tensor tensor, int dst,
                                                         int tag) override {
    Record("send", tensor);
    return inner_->SendAsync(std::move(tensor), dst, tag);
  }
  absl::Status Recv(at::Tensor& tensor, int src, int tag) override {
    Record("recv", tensor);
    return inner_->Recv(tensor, src, tag);
  }
  absl::Status Barrier() override { return inner_->Barrier(); }

 private:
  void Record(const char* kind, const at::Tensor& tensor) {
    trace_->Add({kind, Size(), tensor.numel(), std::string(c10::toString(tensor.scalar_type()))});
  }

  std::shared_ptr<Communicator> inner_;
  std::shared_ptr<CollectiveTrace> trace_;
};

}  // namespace

std::shared_ptr<Communicator> WithTrace(std::shared_ptr<Communicator> inner,
                                        std::shared_ptr<CollectiveTrace> trace) {
  return std::make_shared<TracingCommunicator>(std::move(inner), std::move(trace));
}

}  // namespace accel::exec
