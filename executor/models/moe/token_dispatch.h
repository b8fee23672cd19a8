// Token permutation of a mixture-of-experts layer: routed token slots grouped by expert for the
// experts' matmuls, across the expert-parallel group when there is one, and put back.
#ifndef ACCEL_EXECUTOR_MODELS_MOE_TOKEN_DISPATCH_H_
#define ACCEL_EXECUTOR_MODELS_MOE_TOKEN_DISPATCH_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace accel::exec {

class Communicator;

// The expert-parallel group of a layer: rank q of `group` holds experts
// [q·E/P, (q+1)·E/P) of E (P = group size, which divides E); a null group holds them all.
struct ExpertParallel {
  Communicator* group = nullptr;
  // [first, end) of this rank's experts among num_experts.
  std::pair<int64_t, int64_t> LocalExperts(int64_t num_experts) const;
};

// One forward's routing plan. Slots are token·k + j (token t's j-th choice). Everything is done by
// index (at::argsort, index_select), never by a loop over tokens; the order is deterministic:
// slots sorted by expert, stable, so an expert's rows stay in token order.
// With expert parallelism the slots for rank q's experts travel to q (an all-to-all of the
// per-expert counts at construction, then of the rows in Dispatch and back in Combine), and each
// rank groups what it receives by its local experts, senders in rank order within an expert.
// Every rank of the group must construct, Dispatch and Combine in the same order.
//
// With a capacity C > 0 each expert takes at most C of this rank's slots, the first C in token
// order (Switch Transformer's capacity, Fedus et al. 2021 §2.2, position-based as Megatron-LM's
// drop policy "position"); the other slots are dropped: never dispatched, and Combine gives them
// a zero row, so the token keeps only its residual (and shared expert) for that choice.
class TokenDispatch {
 public:
  // experts: [T, k] int64 expert ids in [0, E); counts: [E] int64, the bincount of experts;
  // capacity: slots each expert takes from this rank's tokens, 0 for no limit (dropless).
  // Errors: c10::Error when the group's all-to-all fails.
  TokenDispatch(const at::Tensor& experts, const at::Tensor& counts, ExpertParallel ep, int64_t capacity = 0);

  // x: [T, h] → [R, h]: the rows for this rank's experts, grouped by expert in ascending order
  // (RowsPerExpert()); R = Σ RowsPerExpert(). Differentiable.
  at::Tensor Dispatch(const at::Tensor& x) const;

  // y: [R, h], the experts' outputs in Dispatch's row order → [T, k, h] by slot (zero rows for
  // dropped slots). Differentiable.
  at::Tensor Combine(const at::Tensor& y) const;

  // Slots dropped by the capacity (0 when dropless).
  int64_t dropped() const { return dropped_; }

  // Rows each local expert receives, in expert order (from every rank of the group).
  const std::vector<int64_t>& RowsPerExpert() const { return rows_per_expert_; }

 private:
  int64_t tokens_;
  int64_t top_k_;
  at::Tensor order_;          // [S] the kept slots sorted by expert (S = T·k when dropless)
  // [T·k] each slot's row among the kept sorted slots, S (a zero row) for a dropped one
  at::Tensor inverse_order_;
  int64_t dropped_ = 0;
  ExpertParallel ep_;
  std::vector<int64_t> send_splits_;  // rows to each group rank
  std::vector<int64_t> recv_splits_;  // rows from each group rank
  at::Tensor regroup_;                // [R] received row of each grouped row (undefined without ep)
  at::Tensor inverse_regroup_;
  std::vector<int64_t> rows_per_expert_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_MOE_TOKEN_DISPATCH_H_
