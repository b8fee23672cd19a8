// Deferred weight gradients for zero-bubble pipeline schedules (Qi et al. 2023, "Zero Bubble
// Pipeline Parallelism", arXiv 2401.10241 §2: the backward split into B, the input gradients on
// the critical path, and W, the weight gradients run later in the pipeline's bubbles; Megatron-LM's
// and DeepSpeed's WeightGradStore do the same for their linear layers).
#ifndef ACCEL_EXECUTOR_MODELS_OPS_WEIGHT_GRAD_STORE_H_
#define ACCEL_EXECUTOR_MODELS_OPS_WEIGHT_GRAD_STORE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace accel::exec {

// The weight gradients one backward (B) deferred: what each needs to be computed (for a
// projection, its input and its output gradient, which stay alive until Run). Not thread-safe:
// one store per (microbatch, model chunk), filled and run by the thread that runs the pipeline.
class WeightGradStore {
 public:
  // A deferred gradient: returns the parameter and its gradient (same shape and dtype).
  using Deferred = std::function<std::pair<at::Tensor, at::Tensor>()>;

  void Add(Deferred weight_grad) { pending_.push_back(std::move(weight_grad)); }
  int64_t size() const { return static_cast<int64_t>(pending_.size()); }

  // W: computes every deferred gradient and accumulates them into their parameters' .grad in one
  // autograd call (torch::autograd::backward on the parameters with those gradients), so the
  // gradient hooks of data-parallel synchronization fire as in a whole backward. Empties the
  // store. Throws c10::Error on LibTorch failures.
  void Run();

 private:
  std::vector<Deferred> pending_;
};

// While alive, the Linear backwards that run on this thread (executor/models/ops/linear.h)
// compute only their input and bias gradients and add their weight gradient to `store`. Nests:
// the previous store is active again on destruction. A null store defers nothing.
class WeightGradDeferral {
 public:
  explicit WeightGradDeferral(WeightGradStore* store);
  ~WeightGradDeferral();
  WeightGradDeferral(const WeightGradDeferral&) = delete;
  WeightGradDeferral& operator=(const WeightGradDeferral&) = delete;

 private:
  WeightGradStore* previous_;
};

// The store of the innermost WeightGradDeferral on this thread, or null.
WeightGradStore* ActiveWeightGradStore();

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_WEIGHT_GRAD_STORE_H_
