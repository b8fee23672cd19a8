// Tensor parallelism (Megatron-LM, Shoeybi et al. 2019) and sequence parallelism (Korthikanti et
// al. 2022) as autograd-aware collectives over the plan's "tp" group, plus the split of a full
// parameter into the slice one tensor-parallel rank holds.
//
// Activations are [batch, seq, hidden]; sequence parallelism shards dim 1 (seq) into tp equal
// chunks, rank r holding chunk r. Every collective here runs on every rank of the tp group in the
// same order (the ranks run the same graph), so groups never mismatch. A failed collective throws
// std::runtime_error with the communicator's message (the trainer turns it into a status).
#ifndef ACCEL_EXECUTOR_MODELS_TENSOR_PARALLEL_H_
#define ACCEL_EXECUTOR_MODELS_TENSOR_PARALLEL_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>

namespace accel::exec {

class Communicator;

// The tensor-parallel group a model is split over. A null group (or one of size 1) means no
// tensor parallelism: every function below is then the identity or the plain single-rank op.
struct TensorParallel {
  std::shared_ptr<Communicator> group;
  // Norms and residuals work on sequence shards; regions are entered by an all-gather over seq
  // and left by a reduce-scatter over seq instead of an all-reduce (Korthikanti et al. 2022 §4.2.2).
  bool sequence_parallel = false;

  int64_t size() const;
  int64_t rank() const;
  bool enabled() const { return size() > 1; }
  bool sequence_sharded() const { return enabled() && sequence_parallel; }
};

// How a full parameter is split across tensor-parallel ranks (ir::Parameter.tp_dim, tp_parts).
// dim −1: replicated. Otherwise dim `dim` consists of `parts` equal blocks laid end to end (gpt2's
// fused c_attn holds q, k, v: parts 3), and rank r holds block-slice r of every block, in order.
// replicas R > 1 (ir::Parameter.tp_replicas: key/value heads when tp exceeds them): only tp / R
// distinct slices, rank r holding slice r div R, so R consecutive ranks hold the same one.
struct TpSplit {
  int dim = -1;
  int parts = 1;
  int replicas = 1;
};

// Rank `rank`'s slice of `full` under `split` among `size` ranks (a contiguous copy; `full`
// itself for replicated parameters or size 1): slice rank div R of size / R with split.replicas
// R. Each block's extent along dim must divide by size / R.
at::Tensor TpSlice(const at::Tensor& full, TpSplit split, int64_t rank, int64_t size);

// Inverse of TpSlice: the full tensor from the slices of ranks 0..size−1 (slices[r] from rank r;
// with split.replicas R only every R-th slice is read).
at::Tensor TpMerge(const std::vector<at::Tensor>& slices, TpSplit split);

// Entering a tensor-parallel region (the input of column-parallel layers): without sequence
// parallelism identity forward, all-reduce (sum) of the gradient backward (Megatron's f);
// with it, all-gather over seq forward, reduce-scatter backward. x: [b, s_local, h] → [b, s, h].
at::Tensor EnterTensorParallel(const at::Tensor& x, const TensorParallel& tp);

// Leaving a tensor-parallel region (the partial sums of row-parallel layers): all-reduce (sum)
// forward, identity backward (Megatron's g); with sequence parallelism, reduce-scatter over seq
// forward, all-gather backward. partial: [b, s, h] → [b, s_local, h].
at::Tensor ExitTensorParallel(const at::Tensor& partial, const TensorParallel& tp);

// Vocabulary-parallel embedding lookup (Megatron's VocabParallelEmbedding): weight_local holds
// rows [rank·Vl, (rank+1)·Vl) of the (padded) table; tokens outside them give zero rows. Returns
// the partial [b, s, h] the caller reduces with ExitTensorParallel.
at::Tensor VocabParallelEmbedding(const at::Tensor& tokens, const at::Tensor& weight_local,
                                  const TensorParallel& tp);

// Per-token cross-entropy over vocabulary-parallel logits without gathering them (Megatron's
// vocab_parallel_cross_entropy): logits_local [n, Vl] (fp32) holds columns [rank·Vl, (rank+1)·Vl)
// of the (padded) vocabulary, targets [n] int64. Returns [n] losses, log Σ_v exp(z_v) − z_target,
// identical on every tp rank; backward gives softmax − one-hot restricted to the local columns.
// Three all-reduces of [n] (max, Σ exp, target logit) in forward; none in backward.
at::Tensor VocabParallelCrossEntropy(const at::Tensor& logits_local, const at::Tensor& targets,
                                     const TensorParallel& tp);

// The full logits [.., V] from vocabulary-parallel ones [.., Vl] (all-gather; no gradient). For
// sampling and tests, never in training.
at::Tensor GatherVocabParallel(const at::Tensor& logits_local, const TensorParallel& tp);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_TENSOR_PARALLEL_H_
