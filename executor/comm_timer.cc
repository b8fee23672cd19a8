#include "executor/comm_timer.h"

#include <chrono>
#include <utility>

#include <ATen/ATen.h>

#include "executor/forwarding_communicator.h"

namespace accel::exec {

void CollectiveTimer::Add(double seconds) {
  nanos_ += static_cast<int64_t>(seconds * 1e9);
  ++calls_;
}

namespace {

using Clock = std::chrono::steady_clock;

class TimedCommunicator final : public ForwardingCommunicator {
 public:
  TimedCommunicator(std::shared_ptr<Communicator> inner, std::shared_ptr<CollectiveTimer> timer)
      : ForwardingCommunicator(std::move(inner)), timer_(std::move(timer)) {}

  // The asynchronous calls stay ForwardingCommunicator's: untimed.
  absl::Status AllReduce(at::Tensor& tensor, ReduceOp op) override {
    return Timed([&] { return inner_->AllReduce(tensor, op); });
  }
  absl::Status AllGather(const at::Tensor& input, at::Tensor& output) override {
    return Timed([&] { return inner_->AllGather(input, output); });
  }
  absl::Status ReduceScatter(const at::Tensor& input, at::Tensor& output, ReduceOp op) override {
    return Timed([&] { return inner_->ReduceScatter(input, output, op); });
  }
  absl::Status AllToAll(const at::Tensor& input, at::Tensor& output, const std::vector<int64_t>& input_splits,
                        const std::vector<int64_t>& output_splits) override {
    return Timed([&] { return inner_->AllToAll(input, output, input_splits, output_splits); });
  }
  absl::Status Broadcast(at::Tensor& tensor, int root) override {
    return Timed([&] { return inner_->Broadcast(tensor, root); });
  }
  absl::Status Send(const at::Tensor& tensor, int dst, int tag) override {
    return Timed([&] { return inner_->Send(tensor, dst, tag); });
  }
  absl::Status Recv(at::Tensor& tensor, int src, int tag) override {
    return Timed([&] { return inner_->Recv(tensor, src, tag); });
  }
  absl::Status Barrier() override {
    return Timed([&] { return inner_->Barrier(); });
  }

 private:
  template <typename Call>
  absl::Status Timed(Call call) {
    const Clock::time_point start = Clock::now();
    absl::Status status = call();
    timer_->Add(std::chrono::duration<double>(Clock::now() - start).count());
    return status;
  }

  std::shared_ptr<CollectiveTimer> timer_;
};

}  // namespace

std::shared_ptr<Communicator> WithTimer(std::shared_ptr<Communicator> inner,
                                        std::shared_ptr<CollectiveTimer> timer) {
  return std::make_shared<TimedCommunicator>(std::move(inner), std::move(timer));
}

}  // namespace accel::exec
