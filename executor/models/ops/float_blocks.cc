#include "executor/models/ops/float_blocks.h"

#include <algorithm>

namespace accel::exec {

bool UsesFloatBlocks(const at::Tensor& x) {
  return x.device().is_cpu() && (x.scalar_type() == at::kBFloat16 || x.scalar_type() == at::kHalf);
}

void ForEachRowBlock(int64_t rows, int64_t row_width, const std::function<void(int64_t, int64_t)>& f) {
  const int64_t per_block = std::max<int64_t>(1, kFloatBlockElements / row_width);
  for (int64_t begin = 0; begin < rows; begin += per_block) f(begin, std::min(per_block, rows - begin));
}

}  // namespace accel::exec
