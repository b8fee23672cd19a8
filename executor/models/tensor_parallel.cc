#include "executor/models/tensor_parallel.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "executor/communicator.h"

namespace accel::exec {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Autograd nodes keep the communicator as an integer (saved_data holds IValues); the model owns
// the group's shared_ptr for longer than any graph it builds.
int64_t Handle(const TensorParallel& tp) { return reinterpret_cast<intptr_t>(tp.group.get()); }
Communicator& FromHandle(AutogradContext* ctx) {
  return *reinterpret_cast<Communicator*>(static_cast<intptr_t>(ctx->saved_data["comm"].toInt()));
}

void Check(const absl::Status& status) {
  if (!status.ok()) throw std::runtime_error(std::string(status.message()));
}

at::Tensor AllReduceSum(const at::Tensor& x, Communicator& comm) {
  at::Tensor out = x.contiguous().clone();
  Check(comm.AllReduce(out, ReduceOp::kSum));
  return out;
}

// [b, s_local, h] from every rank → [b, s, h], rank r's chunk at seq rows r·s_local.
at::Tensor GatherSeq(const at::Tensor& x, Communicator& comm) {
  at::Tensor in = x.transpose(0, 1).contiguous();
  std::vector<int64_t> sizes = in.sizes().vec();
  sizes[0] *= comm.Size();
  at::Tensor out = at::empty(sizes, in.options());
  Check(comm.AllGather(in, out));
  return out.transpose(0, 1);
}

// Σ over ranks of [b, s, h], keeping this rank's seq chunk → [b, s/tp, h].
at::Tensor ReduceScatterSeq(const at::Tensor& x, Communicator& comm) {
  at::Tensor in = x.transpose(0, 1).contiguous();
  TORCH_CHECK(in.size(0) % comm.Size() == 0, "sequence length ", in.size(0),
              " does not divide by the tensor-parallel degree ", comm.Size());
  std::vector<int64_t> sizes = in.sizes().vec();
  sizes[0] /= comm.Size();
  at::Tensor out = at::empty(sizes, in.options());
  Check(comm.ReduceScatter(in, out, ReduceOp::kSum));
  return out.transpose(0, 1);
}

struct Enter : torch::autograd::Function<Enter> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t comm, bool sp) {
    ctx->saved_data["comm"] = comm;
    ctx->saved_data["sp"] = sp;
    return sp ? GatherSeq(x, FromHandle(ctx)) : x;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    Communicator& comm = FromHandle(ctx);
    at::Tensor g = ctx->saved_data["sp"].toBool() ? ReduceScatterSeq(grads[0], comm)
                                                  : AllReduceSum(grads[0], comm);
    return {g, at::Tensor(), at::Tensor()};
  }
};

struct Exit : torch::autograd::Function<Exit> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, int64_t comm, bool sp) {
    ctx->saved_data["comm"] = comm;
    ctx->saved_data["sp"] = sp;
    return sp ? ReduceScatterSeq(x, FromHandle(ctx)) : AllReduceSum(x, FromHandle(ctx));
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    at::Tensor g = ctx->saved_data["sp"].toBool() ? GatherSeq(grads[0], FromHandle(ctx)) : grads[0];
    return {g, at::Tensor(), at::Tensor()};
  }
};

struct CrossEntropy : torch::autograd::Function<CrossEntropy> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& logits, const at::Tensor& targets,
                            int64_t handle) {
    Communicator& comm = *reinterpret_cast<Communicator*>(static_cast<intptr_t>(handle));
    const int64_t vl = logits.size(1);
    const int64_t begin = comm.Rank() * vl;
    at::Tensor max = std::get<0>(logits.max(1));
    Check(comm.AllReduce(max, ReduceOp::kMax));
    at::Tensor shifted = logits - max.unsqueeze(1);
    at::Tensor outside = (targets < begin).logical_or(targets >= begin + vl);
    at::Tensor local = (targets - begin).masked_fill(outside, 0);
    at::Tensor target_logit = shifted.gather(1, local.unsqueeze(1)).squeeze(1).masked_fill(outside, 0.0);
    Check(comm.AllReduce(target_logit, ReduceOp::kSum));
    at::Tensor exp = shifted.exp();
    at::Tensor sum_exp = exp.sum(1);
    Check(comm.AllReduce(sum_exp, ReduceOp::kSum));
    ctx->save_for_backward({exp.div_(sum_exp.unsqueeze(1)), local, outside});
    return sum_exp.log() - target_logit;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    variable_list saved = ctx->get_saved_variables();
    at::Tensor g = saved[0].clone();
    at::Tensor inside = saved[2].logical_not().to(g.scalar_type());
    g.scatter_add_(1, saved[1].unsqueeze(1), -inside.unsqueeze(1));
    return {g.mul_(grads[0].unsqueeze(1)), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

int64_t TensorParallel::size() const { return group == nullptr ? 1 : group->Size(); }
int64_t TensorParallel::rank() const { return group == nullptr ? 0 : group->Rank(); }

at::Tensor TpSlice(const at::Tensor& full, TpSplit split, int64_t rank, int64_t size) {
  if (split.replicas > 1) {
    TORCH_CHECK(size % split.replicas == 0, "tensor-parallel degree ", size, " is not a multiple of ",
                split.replicas, " replicas");
    rank /= split.replicas;
    size /= split.replicas;
  }
  if (split.dim < 0 || size <= 1) return full;
  std::vector<at::Tensor> pieces;
  for (const at::Tensor& block : full.chunk(split.parts, split.dim)) {
    TORCH_CHECK(block.size(split.dim) % size == 0, "dimension ", split.dim, " block of ",
                block.size(split.dim), " does not divide by the tensor-parallel degree ", size);
    const int64_t n = block.size(split.dim) / size;
    pieces.push_back(block.narrow(split.dim, rank * n, n));
  }
  return at::cat(pieces, split.dim).contiguous();
}

at::Tensor TpMerge(const std::vector<at::Tensor>& slices, TpSplit split) {
  if (split.dim < 0 || slices.size() <= 1) return slices.front();
  std::vector<std::vector<at::Tensor>> blocks;  // [distinct slice][part]
  const size_t step = static_cast<size_t>(std::max(split.replicas, 1));
  for (size_t r = 0; r < slices.size(); r += step) blocks.push_back(slices[r].chunk(split.parts, split.dim));
  std::vector<at::Tensor> ordered;
  for (int part = 0; part < split.parts; ++part) {
    for (const auto& rank_blocks : blocks) ordered.push_back(rank_blocks[part]);
  }
  return at::cat(ordered, split.dim);
}

at::Tensor EnterTensorParallel(const at::Tensor& x, const TensorParallel& tp) {
  if (!tp.enabled()) return x;
  return Enter::apply(x, Handle(tp), tp.sequence_parallel);
}

at::Tensor ExitTensorParallel(const at::Tensor& partial, const TensorParallel& tp) {
  if (!tp.enabled()) return partial;
  return Exit::apply(partial, Handle(tp), tp.sequence_parallel);
}

at::Tensor VocabParallelEmbedding(const at::Tensor& tokens, const at::Tensor& weight_local,
                                  const TensorParallel& tp) {
  if (!tp.enabled()) return at::embedding(weight_local, tokens);
  const int64_t vl = weight_local.size(0);
  const int64_t begin = tp.rank() * vl;
  at::Tensor outside = (tokens < begin).logical_or(tokens >= begin + vl);
  at::Tensor rows = at::embedding(weight_local, (tokens - begin).masked_fill(outside, 0));
  return rows.masked_fill(outside.unsqueeze(-1), 0.0);
}

at::Tensor VocabParallelCrossEntropy(const at::Tensor& logits_local, const at::Tensor& targets,
                                     const TensorParallel& tp) {
  if (!tp.enabled()) {
    return torch::nn::functional::cross_entropy(
        logits_local, targets, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
  }
  return CrossEntropy::apply(logits_local, targets, Handle(tp));
}

at::Tensor GatherVocabParallel(const at::Tensor& logits_local, const TensorParallel& tp) {
  if (!tp.enabled()) return logits_local;
  torch::NoGradGuard no_grad;
  const int64_t last = logits_local.dim() - 1;
  at::Tensor in = logits_local.movedim(last, 0).contiguous();
  std::vector<int64_t> sizes = in.sizes().vec();
  sizes[0] *= tp.size();
  at::Tensor out = at::empty(sizes, in.options());
  Check(tp.group->AllGather(in, out));
  return out.movedim(0, last);
}

}  // namespace accel::exec
