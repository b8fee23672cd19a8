#include "executor/models/context/context_attention.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "executor/communicator.h"
#include "executor/models/causal_lm.h"
#include "executor/models/ops/all_to_all.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void CpCheckOk(const absl::Status& status) { TORCH_CHECK(status.ok(), std::string(status.message())); }

// Sends `send` to group rank dst and returns what src sent (same shape and dtype): the send is
// posted first so that a ring of these never waits on itself.
at::Tensor SendRecv(const at::Tensor& send, int dst, int src, Communicator& group) {
  at::Tensor out = at::empty_like(send, at::MemoryFormat::Contiguous);
  absl::StatusOr<std::unique_ptr<PendingWork>> pending = group.SendAsync(send.contiguous(), dst, /*tag=*/0);
  CpCheckOk(pending.status());
  CpCheckOk(group.Recv(out, src, /*tag=*/0));
  CpCheckOk((*pending)->Wait());
  return out;
}

// One step of the ring: k and v (stacked) go to the next cp rank and the previous one's come in;
// backward sends their gradient back to the previous rank and takes the next one's.
struct RingShiftFunction : torch::autograd::Function<RingShiftFunction> {
  // The group travels as its address: AutogradContext holds IValues only, and the model keeps its
  // ContextParallel (and so the group) alive past backward.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& kv, int64_t group) {
    ctx->saved_data["group"] = group;
    auto& g = *reinterpret_cast<Communicator*>(group);
    const int n = g.Size(), r = g.Rank();
    return SendRecv(kv, (r + 1) % n, (r + n - 1) % n, g);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto& g = *reinterpret_cast<Communicator*>(ctx->saved_data["group"].toInt());
    const int n = g.Size(), r = g.Rank();
    return {SendRecv(grads[0], (r + n - 1) % n, (r + 1) % n, g), at::Tensor()};
  }
};

// One query chunk against one key/value chunk: the probability-weighted values (normalized within
// the pair) and the rows' log-sum-exps, the pieces an online softmax merges. q: [b, kv, g·c, d]
// (a key/value head's g query heads stacked along the rows, as CausalAttention does); k, v: [b,
// kv, c, d]. causal: the chunks are the same positions (mask the future); else k precedes q.
struct Partial {
  at::Tensor out;  // [b, kv, g·c, d]
  at::Tensor lse;  // [b, kv, g·c, 1]
};

Partial AttendChunk(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t group, bool causal) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
  at::Tensor scores = at::matmul(q, k.transpose(-2, -1)) * scale;
  if (causal) {
    const int64_t c = k.size(-2);
    at::Tensor future = at::ones({c, c}, q.options().dtype(at::kBool)).triu(/*diagonal=*/1);
    scores = scores.view({q.size(0), q.size(1), group, c, c})
                 .masked_fill(future, -std::numeric_limits<double>::infinity())
                 .view(scores.sizes());
  }
  at::Tensor lse = at::logsumexp(scores, -1, /*keepdim=*/true);
  return {at::matmul(at::exp(scores - lse), v), lse};
}

// Σ_i exp(lse_i − lse) · out_i with lse = log Σ_i exp(lse_i): softmax over the union of the keys.
at::Tensor MergePartials(const std::vector<Partial>& parts) {
  if (parts.size() == 1) return parts.front().out;
  std::vector<at::Tensor> lses;
  for (const Partial& p : parts) lses.push_back(p.lse);
  const at::Tensor total = at::logsumexp(at::stack(lses), 0);
  at::Tensor out;
  for (const Partial& p : parts) {
    at::Tensor term = at::exp(p.lse - total) * p.out;
    out = out.defined() ? out + term : term;
  }
  return out;
}

at::Tensor RingAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const ContextParallel& cp) {
  const int64_t b = q.size(0), heads = q.size(1), t = q.size(2), d = q.size(3), kv = k.size(1);
  TORCH_CHECK(kv > 0 && heads % kv == 0, "query heads ", heads, " are not a multiple of key/value heads ", kv);
  const int64_t group = heads / kv;
  const std::vector<int64_t>& mine = cp.local_chunks();
  const auto per_rank = static_cast<int64_t>(mine.size());
  TORCH_CHECK(t % per_rank == 0, t, " local tokens do not divide into ", per_rank, " chunks");
  const int64_t c = t / per_rank;
  // Each local query chunk with its key/value heads' query heads stacked: [b, kv, g·c, d].
  std::vector<at::Tensor> queries;
  for (int64_t i = 0; i < per_rank; ++i) queries.push_back(q.narrow(2, i * c, c).reshape({b, kv, group * c, d}));
  std::vector<std::vector<Partial>> parts(static_cast<size_t>(per_rank));
  at::Tensor block = at::stack({k, v});  // [2, b, kv, t, d]: one message per ring step
  const int64_t n = cp.size(), r = cp.rank();
  for (int64_t step = 0; step < n; ++step) {
    if (step > 0) block = RingShiftFunction::apply(block, reinterpret_cast<int64_t>(cp.group.get()));
    const std::vector<int64_t>& theirs = cp.rank_chunks[static_cast<size_t>((r - step + n) % n)];
    for (size_t j = 0; j < theirs.size(); ++j) {
      const at::Tensor kj = block[0].narrow(2, static_cast<int64_t>(j) * c, c);
      const at::Tensor vj = block[1].narrow(2, static_cast<int64_t>(j) * c, c);
      for (int64_t i = 0; i < per_rank; ++i) {
        if (theirs[j] > mine[static_cast<size_t>(i)]) continue;  // entirely in the future
        parts[static_cast<size_t>(i)].push_back(
            AttendChunk(queries[static_cast<size_t>(i)], kj, vj, group, theirs[j] == mine[static_cast<size_t>(i)]));
      }
    }
  }
  std::vector<at::Tensor> outs;
  for (int64_t i = 0; i < per_rank; ++i) outs.push_back(MergePartials(parts[static_cast<size_t>(i)]).view({b, heads, c, d}));
  return at::cat(outs, 2);
}

// [b, h, t, d] sequence shards of every head → [b, h/cp, cp·t, d] head shards of the whole
// sequence (chunk j from cp rank j), or back when `inverse`.
at::Tensor UlyssesExchange(const at::Tensor& x, const ContextParallel& cp, bool inverse) {
  const int64_t n = cp.size();
  const std::vector<int64_t> ones(static_cast<size_t>(n), 1);
  if (!inverse) {
    const int64_t b = x.size(0), h = x.size(1), t = x.size(2), d = x.size(3);
    TORCH_CHECK(h % n == 0, "context_method ulysses: ", h, " heads do not divide by cp ", n);
    at::Tensor send = x.reshape({b, n, h / n, t, d}).transpose(0, 1).contiguous().view({n, -1});
    at::Tensor got = AllToAllRows(send, ones, ones, *cp.group);  // row j: sequence chunk j
    return got.view({n, b, h / n, t, d}).permute({1, 2, 0, 3, 4}).reshape({b, h / n, n * t, d});
  }
  const int64_t b = x.size(0), hn = x.size(1), s = x.size(2), d = x.size(3), t = s / n;
  at::Tensor send = x.reshape({b, hn, n, t, d}).permute({2, 0, 1, 3, 4}).contiguous().view({n, -1});
  at::Tensor got = AllToAllRows(send, ones, ones, *cp.group);  // row j: head group j
  return got.view({n, b, hn, t, d}).transpose(0, 1).reshape({b, n * hn, t, d});
}

}  // namespace

at::Tensor ContextParallelAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                                    const ContextParallel& cp, bool fused) {
  if (!cp.enabled()) return CausalAttention(q, k, v, fused);
  if (cp.method == ContextMethod::kRing) return RingAttention(q, k, v, cp);
  const at::Tensor out = CausalAttention(UlyssesExchange(q, cp, false), UlyssesExchange(k, cp, false),
                                         UlyssesExchange(v, cp, false), fused);
  return UlyssesExchange(out, cp, /*inverse=*/true);
}

}  // namespace accel::exec
