// Causal attention over a sequence split by context parallelism: ring attention and
// DeepSpeed-Ulysses, as autograd graphs whose collectives run again, reversed, in backward.
#ifndef ACCEL_EXECUTOR_MODELS_CONTEXT_CONTEXT_ATTENTION_H_
#define ACCEL_EXECUTOR_MODELS_CONTEXT_CONTEXT_ATTENTION_H_

#include <ATen/core/Tensor.h>

#include "executor/models/context/context_parallel.h"

namespace accel::exec {

// Causal attention of this rank's queries over the whole sequence, which the ranks of cp.group
// hold in the chunks cp lays out. q: [b, heads, t, d]; k, v: [b, kv_heads, t, d] with t this
// rank's tokens (s / cp), kv_heads dividing heads (grouped-query attention: query head i reads
// key/value head i / (heads / kv_heads)). Returns [b, heads, t, d], this rank's rows of what
// CausalAttention returns for the whole sequence (equal up to fp32 summation order).
// - ring (Liu et al. 2023, "Ring Attention with Blockwise Transformers", arXiv 2310.01889): k
//   and v travel around the cp ring (cp − 1 send/recv of both per call); each local query chunk
//   attends to each key chunk before or at it — whole for an earlier chunk, causally masked for
//   its own, skipped for a later one — and the partial results merge by their log-sum-exps
//   (online softmax, Milakov & Gimelshein 2018). Backward sends the gradients of k and v back the
//   way they came. Keeps every key/value block it received (cp × this rank's k and v) and each
//   pair's probabilities [b, kv_heads, heads/kv_heads · t/2, t/2] for backward.
// - ulysses (Jacobs et al. 2023, "DeepSpeed Ulysses", arXiv 2309.14509 §3.1): an all-to-all turns
//   q, k, v into the whole sequence of heads / cp query heads and kv_heads / cp key/value heads,
//   CausalAttention(fused) runs on them, and an all-to-all turns the output back. Needs heads and
//   kv_heads divisible by cp; Ulysses' layout holds chunk c on cp rank c.
// The math path always for ring (a fused kernel gives no log-sum-exp through LibTorch's public
// API); `fused` is passed to CausalAttention by Ulysses. Every rank of cp.group must call it in
// the same order, and run backward. Throws c10::Error on shapes that do not match and with the
// communicator's message when a transfer fails.
at::Tensor ContextParallelAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const ContextParallel& cp, bool fused);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_CONTEXT_CONTEXT_ATTENTION_H_
