#include "executor/models/ops/all_to_all.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <string>

#include "executor/communicator.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor Exchange(const at::Tensor& input, const std::vector<int64_t>& send, const std::vector<int64_t>& recv,
                    Communicator& group) {
  int64_t rows = 0;
  for (int64_t n : recv) rows += n;
  std::vector<int64_t> shape = input.sizes().vec();
  shape[0] = rows;
  at::Tensor output = at::empty(shape, input.options());
  const absl::Status status = group.AllToAll(input, output, send, recv);
  TORCH_CHECK(status.ok(), std::string(status.message()));
  return output;
}

struct AllToAllFunction : torch::autograd::Function<AllToAllFunction> {
  // The group travels as its address: AutogradContext holds IValues only, and the caller keeps
  // the group alive past backward (AllToAllRows' contract).
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& input, std::vector<int64_t> send,
                            std::vector<int64_t> recv, int64_t group) {
    ctx->saved_data["send"] = send;
    ctx->saved_data["recv"] = recv;
    ctx->saved_data["group"] = group;
    return Exchange(input, send, recv, *reinterpret_cast<Communicator*>(group));
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* group = reinterpret_cast<Communicator*>(ctx->saved_data["group"].toInt());
    const std::vector<int64_t> send = ctx->saved_data["send"].toIntVector();
    const std::vector<int64_t> recv = ctx->saved_data["recv"].toIntVector();
    return {Exchange(grads[0].contiguous(), recv, send, *group), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor AllToAllRows(const at::Tensor& input, const std::vector<int64_t>& send_splits,
                        const std::vector<int64_t>& recv_splits, Communicator& group) {
  return AllToAllFunction::apply(input, send_splits, recv_splits, reinterpret_cast<int64_t>(&group));
}

}  // namespace accel::exec
