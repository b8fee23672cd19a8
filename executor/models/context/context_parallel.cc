#include "executor/models/context/context_parallel.h"

#include <ATen/ATen.h>

#include "executor/communicator.h"

namespace accel::exec {

int64_t ContextParallel::size() const { return group == nullptr ? 1 : group->Size(); }

int64_t ContextParallel::rank() const { return group == nullptr ? 0 : group->Rank(); }

const std::vector<int64_t>& ContextParallel::local_chunks() const {
  TORCH_CHECK(static_cast<int64_t>(rank_chunks.size()) == size(), "context parallelism over ", size(),
              " ranks has chunk lists for ", rank_chunks.size());
  return rank_chunks[static_cast<size_t>(rank())];
}

at::Tensor LocalChunks(const at::Tensor& x, const ContextParallel& cp) {
  if (!cp.enabled()) return x;
  const int64_t s = x.size(1);
  TORCH_CHECK(cp.chunks > 0 && s % cp.chunks == 0, "sequence length ", s, " does not divide into ", cp.chunks,
              " context-parallel chunks");
  const int64_t len = s / cp.chunks;
  std::vector<at::Tensor> parts;
  for (int64_t c : cp.local_chunks()) parts.push_back(x.narrow(1, c * len, len));
  return parts.size() == 1 ? parts.front().contiguous() : at::cat(parts, 1);
}

at::Tensor LocalPositions(int64_t local_tokens, const ContextParallel& cp, const at::TensorOptions& options,
                          int64_t rank) {
  const at::TensorOptions longs = options.dtype(at::kLong);
  if (rank < 0 && !cp.enabled()) return at::arange(local_tokens, longs);
  const std::vector<int64_t>& chunks = rank < 0 ? cp.local_chunks() : cp.rank_chunks.at(static_cast<size_t>(rank));
  const auto count = static_cast<int64_t>(chunks.size());
  TORCH_CHECK(count > 0 && local_tokens % count == 0, local_tokens, " tokens do not divide into ", count,
              " context-parallel chunks");
  const int64_t len = local_tokens / count;
  std::vector<at::Tensor> parts;
  for (int64_t c : chunks) parts.push_back(at::arange(c * len, (c + 1) * len, longs));
  return at::cat(parts);
}

}  // namespace accel::exec
