// The language-model head and its cross-entropy in chunks of tokens, never holding the whole
// vocabulary-sized logits (the fused linear cross-entropy of Liger-Kernel, Hsu et al. 2024,
// "Liger Kernel: Efficient Triton Kernels for LLM Training", §3.2, written with ATen ops).
#ifndef ACCEL_EXECUTOR_MODELS_OPS_CHUNKED_CROSS_ENTROPY_H_
#define ACCEL_EXECUTOR_MODELS_OPS_CHUNKED_CROSS_ENTROPY_H_

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace accel::exec {

struct TensorParallel;

// Mean over n tokens of log Σ_v exp(z_v) − z_target with z = hidden · weightᵀ, as
// cross_entropy(hidden · weightᵀ, targets) but computed `chunks` row blocks at a time.
// hidden: [n, h] (the final norm's output); weight: [V_local, h], this rank's vocabulary rows
// (all of them without tensor parallelism; Megatron-LM's vocabulary-parallel head under it);
// targets: [n] int64 in [0, V_local · tp). chunks: 1..n (clamped to n). Returns a 0-dim fp32
// tensor, identical on every tensor-parallel rank.
// Precision: the product runs in autocast's dtype when autocast is on for hidden's device (else
// in hidden's dtype), the softmax in fp32, as autocast runs matmul and cross_entropy.
// Memory: keeps hidden in the product's dtype, targets and one fp32 log-sum-exp per token
// (12 B per token besides hidden); no logits. Forward and backward each hold one chunk's fp32
// logits and their gradient at a time, plus a compute-dtype copy of the weight when it differs.
// Backward recomputes each chunk's logits and gives the weight gradient accumulated over chunks in
// fp32; in 16 bits each chunk's weight-gradient product is made and added per block of ⌈V_local /
// chunks⌉ vocabulary rows, so no product of the weight's size exists. Under tensor parallelism two all-reduces of [n] (max, then Σ exp of the local
// log-sum-exps) and one of the target logits run in forward; none in backward.
// softcap > 0: the logits are cap·tanh(z/cap) (Gemma 2's final_logit_softcapping, transformers'
// Gemma2ForCausalLM) in fp32 before the softmax; backward multiplies each logit's gradient by
// 1 − tanh²(z/cap), recomputed per chunk (one more chunk of fp32 logits at a time). 0: no cap.
// Throws c10::Error on shapes that do not match.
at::Tensor ChunkedCrossEntropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                               int64_t chunks, const TensorParallel& tp, double softcap = 0.0);

// The default chunk count for a vocabulary of v_local rows per rank and hidden size h: ⌈v_local / h⌉,
// so that one chunk's logits hold about as many values as the hidden states (Liger-Kernel's rule,
// Hsu et al. 2024 §3.2); at least 1. The planner's choice (ir::Training.loss_chunks) uses the same.
int64_t DefaultLossChunks(int64_t v_local, int64_t h);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_OPS_CHUNKED_CROSS_ENTROPY_H_
