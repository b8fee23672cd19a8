// 16-bit elementwise work on the CPU, done in fp32 a block of rows at a time.
//
// LibTorch 1.13's CPU kernels for bf16 GELU and LayerNorm are several times slower than its fp32
// ones (measured on an AVX512-BF16 AMD EPYC, one thread, [2048, 768]: GELU forward 9.0 ms bf16
// against 4.3 ms fp32, its backward 14.4 against 4.5, LayerNorm forward 10.6 against 0.8; bf16↔fp32
// conversion 0.1 ms each way). Converting a block to fp32, running the fp32 kernel and rounding
// the result once is faster, and rounds once instead of after every step. Blocks of about
// kFloatBlockElements keep the fp32 temporaries in cache and out of the memory peak.
#ifndef ACCEL_EXECUTOR_MODELS_OPS_FLOAT_BLOCKS_H_
#define ACCEL_EXECUTOR_MODELS_OPS_FLOAT_BLOCKS_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "planner/executor_activations.h"

namespace accel::exec {

// Elements per fp32 block (64 KiB): a block's inputs, output and temporaries fit in L2. The
// planner counts their working set (planner::ExecutorFloatBlockBytes).
inline constexpr int64_t kFloatBlockElements = planner::kExecutorFloatBlockElements;

// Whether `x` takes the fp32-block path: a bf16 or fp16 tensor on the CPU. Everything else runs
// LibTorch's kernel directly (CUDA's 16-bit kernels already compute in fp32 registers).
bool UsesFloatBlocks(const at::Tensor& x);

// f applied block by block to fp32 copies of `inputs` (tensors of one shape, read as rows of
// their last dim; f elementwise, returning its blocks' shape), each result rounded into a tensor
// of inputs[0]'s shape and dtype. inputs[0].numel() > 0.
at::Tensor MapInFloatBlocks(const std::vector<at::Tensor>& inputs,
                            const std::function<at::Tensor(const std::vector<at::Tensor>&)>& f);

// Calls f(begin, count) for consecutive row ranges covering [0, rows), each of about
// kFloatBlockElements / row_width rows (at least one). row_width > 0.
void ForEachRowBlock(int64_t rows, int64_t row_width, const std::function<void(int64_t, int64_t)>& f);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_FLOAT_BLOCKS_H_
