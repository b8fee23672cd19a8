#include "executor/train/kept_outputs.h"

#include <utility>

#include "executor/models/ops/linear.h"
#include "executor/train/region_outputs.h"

namespace accel::exec {
namespace {

std::vector<at::Tensor> AsList(const at::Tensor& t) { return {t}; }
const std::vector<at::Tensor>& AsList(const std::vector<at::Tensor>& ts) { return ts; }

// A kept op: run plainly outside a region or when not kept; in a region's forward run and store
// its output; in its recompute hand the stored output to `replay`.
template <typename Compute, typename Replay>
auto RunKept(bool keep, const Compute& compute, const Replay& replay) -> decltype(compute()) {
  const ActiveRegion region = CurrentRegion();
  if (!keep || region.outputs == nullptr) return compute();
  if (region.replay) return replay(region.outputs->Take());
  auto output = compute();
  region.outputs->Store(AsList(output));
  return output;
}

// Linear, or in a recompute Linear returning the stored product with its backward.
at::Tensor KeptProduct(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, WeightLayout layout,
                       bool keep) {
  return RunKept(
      keep, [&] { return Linear(x, weight, bias, layout); },
      [&](std::vector<at::Tensor> stored) { return Linear(x, weight, bias, layout, stored[0]); });
}

}  // namespace

at::Tensor KeptLinear(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, bool keep) {
  return KeptProduct(x, weight, bias, WeightLayout::kOutIn, keep);
}

at::Tensor KeptMatmul(const at::Tensor& x, const at::Tensor& m, bool keep) {
  return KeptProduct(x, m, at::Tensor(), WeightLayout::kInOut, keep);
}

std::vector<at::Tensor> KeptOutputs(const RecomputeManyFn& fn, const std::vector<at::Tensor>& inputs, bool keep) {
  return RunKept(
      keep, [&] { return fn(inputs); },
      [&](std::vector<at::Tensor> stored) { return RecomputeFromOutputs(fn, inputs, std::move(stored)); });
}

}  // namespace accel::exec
