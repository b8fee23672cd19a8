#include "executor/models/ops/float_blocks.h"

#include <algorithm>

#include <ATen/ATen.h>

namespace accel::exec {

bool UsesFloatBlocks(const at::Tensor& x) {
  return x.device().is_cpu() && (x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf);
}

at::Tensor MapInFloatBlocks(const std::vector<at::Tensor>& inputs,
                            const std::function<at::Tensor(const std::vector<at::Tensor>&)>& f) {
  const at::Tensor& first = inputs.front();
  const int64_t width = first.dim() > 0 ? std::max<int64_t>(first.size(-1), 1) : 1;
  std::vector<at::Tensor> rows;
  for (const at::Tensor& t : inputs) rows.push_back(t.contiguous().view({-1, width}));
  at::Tensor out = at::empty_like(rows.front());
  ForEachRowBlock(out.size(0), width, [&](int64_t begin, int64_t count) {
    std::vector<at::Tensor> blocks;
    for (const at::Tensor& r : rows) blocks.push_back(r.narrow(0, begin, count).to(at::kFloat));
    out.narrow(0, begin, count).copy_(f(blocks));
  });
  return out.view(first.sizes());
}

void ForEachRowBlock(int64_t rows, int64_t row_width, const std::function<void(int64_t, int64_t)>& f) {
  const int64_t per_block = std::max<int64_t>(1, kFloatBlockElements / row_width);
  for (int64_t begin = 0; begin < rows; begin += per_block) f(begin, std::min(per_block, rows - begin));
}

}  // namespace accel::exec
