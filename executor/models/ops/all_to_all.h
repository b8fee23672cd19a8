// The all-to-all of expert parallelism and of DeepSpeed-Ulysses context parallelism as an
// autograd node.
#ifndef ACCEL_EXECUTOR_MODELS_OPS_ALL_TO_ALL_H_
#define ACCEL_EXECUTOR_MODELS_OPS_ALL_TO_ALL_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace accel::exec {

class Communicator;

// Communicator::AllToAll of input's rows ([Σ send_splits, ...]) over `group`, returning
// [Σ recv_splits, ...] in input's dtype. Backward sends the gradient back the way the rows came
// (the same all-to-all with the splits swapped), so every rank of the group must run backward
// too, in the same order. `group` must outlive the backward. Errors: c10::Error with the
// communicator's message (bad splits, a timeout, a peer failure).
at::Tensor AllToAllRows(const at::Tensor& input, const std::vector<int64_t>& send_splits,
                        const std::vector<int64_t>& recv_splits, Communicator& group);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_ALL_TO_ALL_H_
