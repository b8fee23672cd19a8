#include "executor/models/ops/chunked_cross_entropy.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "executor/communicator.h"
#include "executor/models/tensor_parallel.h"
#include "executor/train/autocast.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void Check(const absl::Status& status) {
  if (!status.ok()) throw std::runtime_error(std::string(status.message()));
}

// Row ranges [begin, end) of `chunks` near-equal blocks of n rows.
std::pair<int64_t, int64_t> ChunkRows(int64_t n, int64_t chunks, int64_t c) {
  const int64_t size = (n + chunks - 1) / chunks;
  return {std::min(n, c * size), std::min(n, (c + 1) * size)};
}

// Where targets fall in this rank's vocabulary rows [begin, begin + v_local): their local index
// (0 outside) and the mask of those outside.
std::pair<at::Tensor, at::Tensor> LocalTargets(const at::Tensor& targets, int64_t begin, int64_t v_local) {
  const at::Tensor outside = (targets < begin).logical_or(targets >= begin + v_local);
  return {(targets - begin).masked_fill(outside, 0), outside};
}

// Gemma 2's final soft cap on fp32 logits z, in place: z becomes cap·tanh(z/cap); returns
// tanh(z/cap) for the backward's 1 − tanh² (undefined when cap is 0, z then unchanged).
at::Tensor SoftCap(at::Tensor& z, double cap) {
  if (cap <= 0) return at::Tensor();
  at::Tensor t = z.div_(cap).tanh_();
  z = t.mul(cap);
  return t;
}

// dz (the capped logits' gradient) times d cap·tanh(z/cap) / dz = 1 − tanh², in place (t too).
void SoftCapBackward(at::Tensor& dz, at::Tensor t) {
  if (t.defined()) dz.mul_(t.square_().neg_().add_(1.0));  // t is not needed after
}

struct ChunkedCrossEntropyFunction : torch::autograd::Function<ChunkedCrossEntropyFunction> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& hidden, const at::Tensor& weight,
                            const at::Tensor& targets, int64_t chunks, int64_t comm_handle, double softcap) {
    auto* comm = reinterpret_cast<Communicator*>(static_cast<intptr_t>(comm_handle));
    const int64_t n = hidden.size(0), v_local = weight.size(0);
    const at::ScalarType dtype = AutocastMatmulDtype(hidden);
    const at::Tensor h = hidden.to(dtype);
    const at::Tensor w = weight.to(dtype);
    const int64_t begin = comm != nullptr ? comm->Rank() * v_local : 0;
    auto [local, outside] = LocalTargets(targets, begin, v_local);
    const at::ScalarType acc = dtype == at::kDouble ? at::kDouble : at::kFloat;
    at::Tensor lse = at::empty({n}, hidden.options().dtype(acc));
    at::Tensor target_logit = at::empty({n}, lse.options());
    for (int64_t c = 0; c < chunks; ++c) {
      const auto [r0, r1] = ChunkRows(n, chunks, c);
      if (r0 == r1) continue;
      at::Tensor z = at::matmul(h.slice(0, r0, r1), w.t()).to(acc);
      SoftCap(z, softcap);
      lse.slice(0, r0, r1).copy_(at::logsumexp(z, 1));
      target_logit.slice(0, r0, r1).copy_(z.gather(1, local.slice(0, r0, r1).unsqueeze(1)).squeeze(1));
    }
    target_logit.masked_fill_(outside, 0.0);
    if (comm != nullptr) {
      // log Σ_ranks exp(lse_rank), shifted by the largest for range.
      at::Tensor max = lse.clone();
      Check(comm->AllReduce(max, ReduceOp::kMax));
      at::Tensor sum = (lse - max).exp_();
      Check(comm->AllReduce(sum, ReduceOp::kSum));
      lse = sum.log_().add_(max);
      Check(comm->AllReduce(target_logit, ReduceOp::kSum));
    }
    ctx->save_for_backward({h, weight, targets, lse});
    ctx->saved_data["chunks"] = chunks;
    ctx->saved_data["softcap"] = softcap;
    ctx->saved_data["begin"] = begin;
    ctx->saved_data["hidden_dtype"] = static_cast<int64_t>(hidden.scalar_type());
    return (lse - target_logit).mean();
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const variable_list saved = ctx->get_saved_variables();
    const at::Tensor& h = saved[0];
    const at::Tensor& weight = saved[1];
    const at::Tensor& lse = saved[3];
    const int64_t chunks = ctx->saved_data["chunks"].toInt();
    const int64_t n = h.size(0), v_local = weight.size(0);
    auto [local, outside] = LocalTargets(saved[2], ctx->saved_data["begin"].toInt(), v_local);
    const at::ScalarType acc = lse.scalar_type();
    const at::Tensor scale = grads[0].to(acc) / static_cast<double>(n);
    const double cap = ctx->saved_data["softcap"].toDouble();
    const LossGradients g = h.scalar_type() == acc
                                ? ByTokens(h, weight, lse, local, outside, scale, chunks, cap)
                                : ByVocabulary(h, weight, lse, local, outside, scale, chunks, cap);
    const auto hidden_dtype = static_cast<at::ScalarType>(ctx->saved_data["hidden_dtype"].toInt());
    return {g.hidden.to(hidden_dtype), g.weight, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }

  struct LossGradients {
    at::Tensor hidden;  // in the product's dtype, or fp32
    at::Tensor weight;  // in the weight's dtype
  };

  // fp32: a chunk of token rows at a time; each chunk's weight gradient is added in place.
  static LossGradients ByTokens(const at::Tensor& h, const at::Tensor& weight, const at::Tensor& lse,
                                const at::Tensor& local, const at::Tensor& outside, const at::Tensor& scale,
                                int64_t chunks, double cap) {
    const int64_t n = h.size(0);
    const at::Tensor inside = outside.logical_not().to(lse.scalar_type());
    const at::Tensor w = weight.to(h.scalar_type());
    at::Tensor grad_h = at::empty_like(h);
    at::Tensor grad_w = at::zeros(weight.sizes(), weight.options().dtype(h.scalar_type()));
    for (int64_t c = 0; c < chunks; ++c) {
      const auto [r0, r1] = ChunkRows(n, chunks, c);
      if (r0 == r1) continue;
      const at::Tensor rows = h.slice(0, r0, r1);
      // softmax − one-hot of the target (zero where it lies on another rank), times dL/dloss / n.
      at::Tensor dz = at::matmul(rows, w.t());
      const at::Tensor t = SoftCap(dz, cap);
      dz.sub_(lse.slice(0, r0, r1).unsqueeze(1)).exp_();
      dz.scatter_add_(1, local.slice(0, r0, r1).unsqueeze(1), -inside.slice(0, r0, r1).unsqueeze(1));
      dz.mul_(scale);
      SoftCapBackward(dz, t);
      grad_h.slice(0, r0, r1).copy_(at::matmul(dz, w));
      grad_w.addmm_(dz.t(), rows);  // in place: no weight-sized product per chunk
    }
    return {grad_h, grad_w.to(weight.scalar_type())};
  }

  // 16 bits: a block of ⌈V / chunks⌉ vocabulary rows at a time over every token, so the weight
  // gradient is written block by block in the weight's dtype, each block one product over all
  // tokens (no fp32 tensor of the weight's size), and the input gradient is summed over blocks in
  // fp32. Each block's logits need only the forward's log-sum-exp.
  static LossGradients ByVocabulary(const at::Tensor& h, const at::Tensor& weight, const at::Tensor& lse,
                                    const at::Tensor& local, const at::Tensor& outside, const at::Tensor& scale,
                                    int64_t chunks, double cap) {
    const int64_t v_local = weight.size(0);
    const at::ScalarType acc = lse.scalar_type();
    const at::Tensor w = weight.to(h.scalar_type());
    at::Tensor grad_h = at::zeros(h.sizes(), h.options().dtype(acc));
    at::Tensor grad_w = at::empty(weight.sizes(), weight.options());
    const int64_t block = (v_local + chunks - 1) / chunks;
    for (int64_t v0 = 0; v0 < v_local; v0 += block) {
      const int64_t v1 = std::min(v_local, v0 + block);
      const at::Tensor wv = w.slice(0, v0, v1);
      at::Tensor dz = at::matmul(h, wv.t()).to(acc);
      const at::Tensor t = SoftCap(dz, cap);
      dz.sub_(lse.unsqueeze(1)).exp_();
      const at::Tensor here = outside.logical_not().logical_and_(local >= v0).logical_and_(local < v1);
      dz.scatter_add_(1, (local - v0).clamp_(0, v1 - v0 - 1).unsqueeze(1), -here.to(acc).unsqueeze(1));
      dz.mul_(scale);
      SoftCapBackward(dz, t);
      const at::Tensor dz_c = dz.to(h.scalar_type());
      grad_h.add_(at::matmul(dz_c, wv));
      at::Tensor grad_block = grad_w.slice(0, v0, v1);
      if (grad_w.scalar_type() == dz_c.scalar_type()) {
        at::mm_out(grad_block, dz_c.t(), h);
      } else {
        grad_block.copy_(at::matmul(dz_c.t(), h));
      }
    }
    return {grad_h, grad_w};
  }
};

}  // namespace

at::Tensor ChunkedCrossEntropy(const at::Tensor& hidden, const at::Tensor& weight, const at::Tensor& targets,
                               int64_t chunks, const TensorParallel& tp, double softcap) {
  TORCH_CHECK(hidden.dim() == 2 && weight.dim() == 2 && hidden.size(1) == weight.size(1),
              "chunked cross-entropy: hidden ", hidden.sizes(), " and weight ", weight.sizes(),
              " are not [n, h] and [V, h]");
  TORCH_CHECK(targets.dim() == 1 && targets.size(0) == hidden.size(0), "chunked cross-entropy: targets ",
              targets.sizes(), " for ", hidden.size(0), " tokens");
  TORCH_CHECK(chunks >= 1, "chunked cross-entropy: ", chunks, " chunks");
  const int64_t handle = tp.enabled() ? reinterpret_cast<intptr_t>(tp.group.get()) : 0;
  return ChunkedCrossEntropyFunction::apply(hidden, weight, targets,
                                            std::min(chunks, std::max<int64_t>(hidden.size(0), 1)), handle, softcap);
}

int64_t DefaultLossChunks(int64_t v_local, int64_t h) {
  if (v_local <= 0 || h <= 0) return 1;
  return std::max<int64_t>(1, (v_local + h - 1) / h);
}

}  // namespace accel::exec
