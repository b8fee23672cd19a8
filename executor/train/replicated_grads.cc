#include "executor/train/replicated_grads.h"

#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>  // at::NoGradGuard: ATen.h no longer brings it in LibTorch 2.x

#include <exception>

#include "absl/strings/str_cat.h"

namespace accel::exec {
namespace {

bool SummedOverSequence(const ParamSlot& slot) { return !slot.tp_split; }
bool SummedOverKv(const ParamSlot& slot) { return slot.tp_replicas > 1; }
bool SummedOverTensor(const ParamSlot& slot) { return slot.tp_partial_grad; }

// One all-reduce over `group` of the gradients of the parameters `selected` picks.
absl::Status SumOver(Communicator& group, bool (*selected)(const ParamSlot&), const ShardLayout& layout,
                     const std::vector<at::Tensor>& params, const at::Device& device) {
  std::vector<at::Tensor> grads, flat;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!selected(layout.params[i])) continue;
    at::Tensor p = params[i];
    if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
    grads.push_back(p.grad());
    flat.push_back(p.grad().reshape({-1}));
  }
  if (grads.empty()) return absl::OkStatus();
  at::Tensor buffer = at::cat(flat).to(device);
  if (absl::Status s = group.AllReduce(buffer, ReduceOp::kSum); !s.ok()) return s;
  int64_t offset = 0;
  for (at::Tensor& g : grads) {
    g.copy_(buffer.narrow(0, offset, g.numel()).view(g.sizes()));
    offset += g.numel();
  }
  return absl::OkStatus();
}

// Every gradient averaged over the cp group, in place (through a device copy when the gradient
// lives in host memory and the group runs on a device).
absl::Status AverageOverContext(Communicator& group, const std::vector<at::Tensor>& params, const at::Device& device) {
  for (at::Tensor p : params) {
    if (!p.grad().defined()) p.mutable_grad() = at::zeros_like(p);
    at::Tensor grad = p.grad();
    at::Tensor on_device = grad.device() == device && grad.is_contiguous() ? grad : grad.contiguous().to(device);
    if (absl::Status s = group.AllReduce(on_device, ReduceOp::kAvg); !s.ok()) return s;
    if (!on_device.is_same(grad)) grad.copy_(on_device);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckReplicatedGradGroups(const ShardLayout& layout, const ReplicatedGradGroups& groups) {
  for (const ParamSlot& slot : layout.params) {
    if (!SummedOverKv(slot) || (groups.kv != nullptr && groups.kv->Size() == slot.tp_replicas)) continue;
    return absl::InvalidArgumentError(absl::StrCat("parameter ", slot.name, " is replicated on ", slot.tp_replicas,
                                                   " tensor-parallel ranks, but the tp_kv group has ",
                                                   groups.kv == nullptr ? 0 : groups.kv->Size()));
  }
  return absl::OkStatus();
}

absl::Status SumReplicatedGradients(const ShardLayout& layout, const std::vector<at::Tensor>& optimizer_params,
                                    const ReplicatedGradGroups& groups, const at::Device& device) {
  if (optimizer_params.size() != layout.params.size()) {
    return absl::InternalError("replicated gradients: the optimizer's tensors do not match the layout");
  }
  try {
    at::NoGradGuard no_grad;
    if (groups.sequence != nullptr && groups.sequence->Size() > 1) {
      if (absl::Status s = SumOver(*groups.sequence, SummedOverSequence, layout, optimizer_params, device);
          !s.ok()) {
        return s;
      }
    }
    if (groups.partial != nullptr && groups.partial->Size() > 1) {
      if (absl::Status s = SumOver(*groups.partial, SummedOverTensor, layout, optimizer_params, device);
          !s.ok()) {
        return s;
      }
    }
    if (groups.kv != nullptr && groups.kv->Size() > 1) {
      if (absl::Status s = SumOver(*groups.kv, SummedOverKv, layout, optimizer_params, device); !s.ok()) return s;
    }
    if (groups.context != nullptr && groups.context->Size() > 1) {
      return AverageOverContext(*groups.context, optimizer_params, device);
    }
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("summing replicated gradients failed: ", e.what()));
  }
}

}  // namespace accel::exec
