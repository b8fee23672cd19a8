// Activation memory of accel's own executor (executor/models/gpt2.cc, llama.cc), per rank with
// tp = 1: the tensors autograd keeps for backward, listed op by op from the model code under
// LibTorch's autocast rules, and checked against the counting CPU allocator
// (executor/memory/counting_allocator.h; bench/memory_bench/run.sh compares whole runs).
// Korthikanti et al. 2022 (memory_model.h ActivationBytesPerLayer) describe Megatron-LM's fused
// kernels with 16-bit activations and dropout; accel keeps residuals and norm inputs in the
// parameter dtype (fp32), casts matmul operands to bf16 (saved copies), keeps no dropout masks and
// caches bf16 copies of the weights for the step, so its coefficients differ.
#ifndef ACCEL_PLANNER_EXECUTOR_ACTIVATIONS_H_
#define ACCEL_PLANNER_EXECUTOR_ACTIVATIONS_H_

#include <cstdint>
#include <string>

namespace accel::planner {

// One micro-batch on one rank. Sizes are elements; bytes come out.
struct ExecutorActivationShape {
  bool gpt2 = true;             // false: the Llama family (llama, mistral, qwen2)
  int64_t seq_len = 0;          // s
  int64_t micro_batch = 0;      // b
  int64_t hidden = 0;           // h
  int64_t heads = 0;            // a
  int64_t kv_heads = 0;         // Llama grouped-query attention; = heads for GPT-2
  int64_t ffn = 0;              // MLP inner size
  int64_t vocab = 0;            // padded vocabulary V
  bool bf16_compute = false;    // autocast to bf16 (else fp32 compute)
  bool bf16_params = false;     // parameters stored in bf16: the whole forward runs in bf16
};

// Bytes one transformer block keeps for backward, no recompute, with x = s·b·h, f = s·b·ffn,
// S = b·a·s² (attention scores), n = s·b:
//   GPT-2 fp32: 32x + 8f + 4S + 16n + s²    (input, LN-1 output, q/k/v, attention output,
//               residual, LN-2 output at 4 B; c_fc output and GELU output; softmax output;
//               two LayerNorms' mean and rstd; the causal mask)
//   GPT-2 bf16: 20x + 6f + 2S + 16n + s²    (fp32 input and residual; bf16 copies of the LN
//               outputs, q, k, v and the attention output; fp32 GELU input + bf16 GELU output)
//   Llama fp32: 48x + 16f + 4S + 8n + s²    (RMSNorm as composed ops, RoPE'd and repeated k/v,
//               gate, SiLU, up and their product)
//   Llama bf16: 42x + 8f + 2S + 8n + s²
// and with bf16 parameters (residual stream, norms and matmul operands all bf16, no casts):
//   GPT-2: 16x + 4f + 2S + 8n + s²,  Llama: 32x + 8f + 2S + 8n + s²
// plus, with bf16 compute over fp32 parameters, autocast's bf16 copy of the block's weight matrices for the step
// (GPT-2 4h² + 2h·ffn, Llama 2h² + 2h·kv·(h/a) + 3h·ffn elements, 2 B each).
int64_t ExecutorActivationBytesPerLayer(const ExecutorActivationShape& shape);

// Bytes of the output side for one micro-batch: final norm (GPT-2 fp32 8x + 8n, bf16 6x + 8n,
// bf16 parameters 4x; Llama fp32 16x, bf16 14x, bf16 parameters 12x), the fp32 log-probabilities the cross-entropy keeps (4·n·V), the
// targets (8n), with bf16 compute over fp32 parameters the bf16 copy of the output weight (2·V·h), and the backward
// of the loss, which holds two fp32 n·V gradients at once (log-softmax and logits).
int64_t ExecutorHeadBytes(const ExecutorActivationShape& shape);

// "x=s·b·h ..." with the numbers, for the plan's formula text.
std::string ExecutorActivationFormula(const ExecutorActivationShape& shape);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_EXECUTOR_ACTIVATIONS_H_
