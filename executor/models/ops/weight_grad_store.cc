#include "executor/models/ops/weight_grad_store.h"

#include <torch/autograd.h>
#include <torch/torch.h>

namespace accel::exec {
namespace {

thread_local WeightGradStore* active_weight_grad_store = nullptr;

}  // namespace

void WeightGradStore::Run() {
  std::vector<at::Tensor> params, grads;
  for (const Deferred& compute : pending_) {
    auto [param, grad] = compute();
    params.push_back(std::move(param));
    grads.push_back(std::move(grad));
  }
  pending_.clear();
  // A leaf passed as a root accumulates the given gradient through its AccumulateGrad node, with
  // the hooks registered on it.
  if (!params.empty()) torch::autograd::backward(params, grads);
}

WeightGradDeferral::WeightGradDeferral(WeightGradStore* store) : previous_(active_weight_grad_store) {
  active_weight_grad_store = store;
}

WeightGradDeferral::~WeightGradDeferral() { active_weight_grad_store = previous_; }

WeightGradStore* ActiveWeightGradStore() { return active_weight_grad_store; }

}  // namespace accel::exec
