#include "executor/models/moe/token_dispatch.h"

#include <torch/torch.h>

#include "executor/communicator.h"
#include "executor/models/ops/all_to_all.h"

namespace accel::exec {
namespace {

std::vector<int64_t> ToVector(const at::Tensor& t) {
  const at::Tensor c = t.to(at::kLong).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

// The inverse of a permutation p (p[inverse[i]] = i).
at::Tensor Inverse(const at::Tensor& p) {
  at::Tensor inverse = at::empty_like(p);
  inverse.index_put_({p}, at::arange(p.numel(), p.options()));
  return inverse;
}

// Received rows come sender by sender, each sender's by expert (from: [sender, local expert]
// row counts); the index that takes them expert by expert, senders in rank order.
at::Tensor ExpertMajor(const at::Tensor& from) {
  const int64_t senders = from.size(0), local = from.size(1);
  const std::vector<int64_t> n = ToVector(from.reshape({-1}));
  std::vector<int64_t> start(n.size());
  int64_t offset = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    start[i] = offset;
    offset += n[i];
  }
  std::vector<at::Tensor> pieces;
  for (int64_t e = 0; e < local; ++e) {
    for (int64_t q = 0; q < senders; ++q) {
      const size_t i = static_cast<size_t>(q * local + e);
      pieces.push_back(at::arange(start[i], start[i] + n[i], from.options()));
    }
  }
  return at::cat(pieces);
}

// Keeps the first `capacity` slots of each expert in the expert-sorted `order` (counts: [E] slots
// per expert): the kept slots' order, each slot's row among them (kept.numel() for a dropped
// one), and the kept count per expert.
struct KeptSlots {
  at::Tensor order;
  at::Tensor row_of_slot;
  at::Tensor counts;
};

KeptSlots KeepWithinCapacity(const at::Tensor& order, const at::Tensor& counts, int64_t capacity) {
  // Position of each sorted slot within its expert: its index less the expert's first index.
  const at::Tensor starts = at::cumsum(counts, 0) - counts;
  const at::Tensor expert_of_sorted = at::repeat_interleave(at::arange(counts.numel(), counts.options()), counts);
  const at::Tensor position = at::arange(order.numel(), order.options()) - starts.index_select(0, expert_of_sorted);
  const at::Tensor keep = position < capacity;
  KeptSlots out;
  out.order = order.masked_select(keep);
  out.counts = counts.clamp_max(capacity);
  // Kept sorted slot i is row (cumulative kept count − 1); dropped ones the zero row.
  const at::Tensor row_of_sorted = at::where(keep, at::cumsum(keep.to(at::kLong), 0) - 1,
                                             at::full({}, out.order.numel(), order.options()));
  out.row_of_slot = at::empty_like(order);
  out.row_of_slot.index_put_({order}, row_of_sorted);
  return out;
}

}  // namespace

std::pair<int64_t, int64_t> ExpertParallel::LocalExperts(int64_t num_experts) const {
  if (group == nullptr) return {0, num_experts};
  const int64_t per_rank = num_experts / group->Size();
  return {group->Rank() * per_rank, (group->Rank() + 1) * per_rank};
}

TokenDispatch::TokenDispatch(const at::Tensor& experts, const at::Tensor& counts_in, ExpertParallel ep,
                             int64_t capacity)
    : tokens_(experts.size(0)), top_k_(experts.size(1)), ep_(ep) {
  const at::Tensor flat = experts.reshape({-1});
  order_ = std::get<1>(flat.sort(c10::optional<bool>(true), /*dim=*/0, /*descending=*/false));
  at::Tensor counts = counts_in;
  if (capacity > 0) {
    KeptSlots kept = KeepWithinCapacity(order_, counts_in, capacity);
    dropped_ = order_.numel() - kept.order.numel();
    order_ = std::move(kept.order);
    inverse_order_ = std::move(kept.row_of_slot);
    counts = std::move(kept.counts);
  } else {
    inverse_order_ = Inverse(order_);
  }
  const int64_t num_experts = counts.numel();
  if (ep_.group == nullptr) {
    rows_per_expert_ = ToVector(counts);
    return;
  }
  const int64_t size = ep_.group->Size();
  const int64_t local = num_experts / size;
  // Every rank tells every other how many of its rows go to each of that rank's experts.
  const std::vector<int64_t> per_rank(static_cast<size_t>(size), local);
  const at::Tensor received = AllToAllRows(counts, per_rank, per_rank, *ep_.group);
  const at::Tensor from = received.view({size, local});  // [sender, local expert]
  send_splits_ = ToVector(counts.view({size, local}).sum(1));
  recv_splits_ = ToVector(from.sum(1));
  rows_per_expert_ = ToVector(from.sum(0));
  regroup_ = ExpertMajor(from);
  inverse_regroup_ = Inverse(regroup_);
}

at::Tensor TokenDispatch::Dispatch(const at::Tensor& x) const {
  const at::Tensor sorted = x.index_select(0, at::floor_divide(order_, top_k_));
  if (ep_.group == nullptr) return sorted;
  return AllToAllRows(sorted, send_splits_, recv_splits_, *ep_.group).index_select(0, regroup_);
}

at::Tensor TokenDispatch::Combine(const at::Tensor& y) const {
  at::Tensor sorted = y;
  if (ep_.group != nullptr) {
    sorted = AllToAllRows(y.index_select(0, inverse_regroup_), recv_splits_, send_splits_, *ep_.group);
  }
  if (dropped_ > 0) sorted = at::cat({sorted, at::zeros({1, sorted.size(1)}, sorted.options())});
  return sorted.index_select(0, inverse_order_).view({tokens_, top_k_, y.size(-1)});
}

}  // namespace accel::exec
