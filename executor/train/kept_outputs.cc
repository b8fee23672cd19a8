#include "executor/train/kept_outputs.h"

#include <utility>

#include "executor/models/ops/linear.h"
#include "executor/train/region_outputs.h"

namespace accel::exec {
namespace {

// A kept product of Linear: computed (and stored in a region's forward) or, in a region's
// recompute, the stored one with Linear's backward.
at::Tensor KeptProduct(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, WeightLayout layout,
                       bool keep) {
  const ActiveRegion region = CurrentRegion();
  if (!keep || region.outputs == nullptr) return Linear(x, weight, bias, layout);
  if (!region.replay) {
    at::Tensor y = Linear(x, weight, bias, layout);
    region.outputs->Store({y});
    return y;
  }
  return Linear(x, weight, bias, layout, region.outputs->Take()[0]);
}

}  // namespace

at::Tensor KeptLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool keep) {
  return KeptProduct(x, weight, bias, WeightLayout::kOutIn, keep);
}

at::Tensor KeptMatmul(const at::Tensor& x, const at::Tensor& m, bool keep) {
  return KeptProduct(x, m, at::Tensor(), WeightLayout::kInOut, keep);
}

std::vector<at::Tensor> KeptOutputs(const RecomputeManyFn& fn, const std::vector<at::Tensor>& inputs, bool keep) {
  const ActiveRegion region = CurrentRegion();
  if (!keep || region.outputs == nullptr) return fn(inputs);
  if (!region.replay) {
    std::vector<at::Tensor> outputs = fn(inputs);
    region.outputs->Store(outputs);
    return outputs;
  }
  return RecomputeFromOutputs(fn, inputs, region.outputs->Take());
}

}  // namespace accel::exec
