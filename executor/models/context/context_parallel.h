// Context parallelism (cp): the ranks of a "cp" group each hold some chunks of every sequence, as
// the plan's ir::ContextParallel lays them out, and attention spans them (context_attention.h).
// Everything outside attention is per token, so it runs on the local chunks unchanged.
#ifndef ACCEL_EXECUTOR_MODELS_CONTEXT_CONTEXT_PARALLEL_H_
#define ACCEL_EXECUTOR_MODELS_CONTEXT_CONTEXT_PARALLEL_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace accel::exec {

class Communicator;

// ir::ContextParallelMethod, without the IR in model code.
enum class ContextMethod { kRing, kUlysses };

// One rank's view of the plan's context parallelism. A null group (or one of size 1) means none:
// every function below is then the identity.
struct ContextParallel {
  std::shared_ptr<Communicator> group;  // the plan's "cp" group
  ContextMethod method = ContextMethod::kRing;
  // The sequence is cut into `chunks` equal chunks; cp rank c holds rank_chunks[c], concatenated
  // in that order (ir::ContextParallel.ranks).
  int64_t chunks = 1;
  std::vector<std::vector<int64_t>> rank_chunks;

  int64_t size() const;
  int64_t rank() const;
  bool enabled() const { return size() > 1; }
  // This rank's chunk indices.
  const std::vector<int64_t>& local_chunks() const;
};

// The context parallelism a module's forward runs under: `cp` when it is enabled and the module
// is training (eval, e.g. sampling, runs the whole sequence on every rank), else null.
inline const ContextParallel* ActiveContext(const ContextParallel* cp, bool training) {
  return cp != nullptr && training && cp->enabled() ? cp : nullptr;
}

// This rank's chunks of x along dim 1 ([b, s, ...] → [b, s · |local| / chunks, ...]), concatenated
// in order; x itself when cp is not enabled. s must divide by cp.chunks (c10::Error otherwise).
at::Tensor LocalChunks(const at::Tensor& x, const ContextParallel& cp);

// Positions in the whole sequence (int64, [local_tokens]) of the `local_tokens` tokens of cp rank
// `rank` (cp.rank_chunks[rank]), or of this rank when rank < 0: arange(local_tokens) when cp is
// then not enabled.
at::Tensor LocalPositions(int64_t local_tokens, const ContextParallel& cp, const at::TensorOptions& options,
                          int64_t rank = -1);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_CONTEXT_CONTEXT_PARALLEL_H_
