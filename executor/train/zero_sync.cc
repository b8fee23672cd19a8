#include "executor/train/zero_sync.h"

#include <torch/torch.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace accel::exec {

at::Tensor OwnedOptimizerTensor(const at::Tensor& owned_view, bool stays_whole, bool offload) {
  if (!offload) {
    if (stays_whole && owned_view.scalar_type() == at::kFloat) return owned_view;
    return owned_view.to(at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  }
  at::Tensor host = owned_view.to(at::kCPU, at::kFloat, /*non_blocking=*/false, /*copy=*/true);
  return owned_view.is_cuda() ? host.pin_memory() : host;
}

namespace {

// `reduced` as a new fp32 gradient on the optimizer tensor's device (the host when offloaded).
at::Tensor OptimizerGrad(const at::Tensor& reduced, const at::Tensor& optimizer_tensor) {
  return reduced.to(optimizer_tensor.device(), at::kFloat, /*non_blocking=*/false, /*copy=*/true);
}

}  // namespace

// ---- stage 0 ----------------------------------------------------------------------------------

at::Tensor AllReduceSync::NewBucketBuffer(const BucketLayout& bucket) {
  return at::zeros({bucket.numel}, params_[bucket.params.front()].options().dtype(options_.reduce_dtype));
}

void AllReduceSync::CopyIn(int p, const at::Tensor& grad, at::Tensor& buffer) {
  const ParamSlot& slot = layout_.params[p];
  buffer.narrow(0, slot.bucket_offset, slot.numel).copy_(grad.reshape({-1}));
}

absl::StatusOr<std::unique_ptr<PendingWork>> AllReduceSync::Launch(BucketState& state,
                                                                   const BucketLayout& bucket) {
  // Routed experts with expert parallelism: over "ep_dp" here, then "dp_replicate" in Finish.
  const bool experts = bucket.routed_experts && ExpertParallel();
  ScaleExpertGradients(bucket, state.buffer);
  Communicator* group = experts ? groups_.ep_dp.get() : groups_.dp.get();
  if (group == nullptr || group->Size() == 1) return std::unique_ptr<PendingWork>();
  return group->AllReduceAsync(state.buffer, ReduceOp::kAvg);
}

absl::Status AllReduceSync::Finish(BucketState& state, const BucketLayout& bucket) {
  if (bucket.routed_experts && ExpertParallel() && groups_.dp_replicate != nullptr &&
      groups_.dp_replicate->Size() > 1) {
    ACCEL_RETURN_IF_ERROR(groups_.dp_replicate->AllReduce(state.buffer, ReduceOp::kAvg));
  }
  for (int p : bucket.params) {
    const ParamSlot& slot = layout_.params[p];
    TakeReduced(p, state.buffer.narrow(0, slot.bucket_offset, slot.numel).view(params_[p].sizes()));
  }
  return absl::OkStatus();
}

void AllReduceSync::TakeReduced(int p, const at::Tensor& reduced) {
  if (IsMaster(p)) {
    opt_[p].mutable_grad() = OptimizerGrad(reduced, opt_[p]);
    params_[p].mutable_grad().reset();
    return;
  }
  at::Tensor& grad = params_[p].mutable_grad();
  if (grad.defined()) {
    grad.copy_(reduced);
  } else {
    grad = reduced.to(params_[p].scalar_type(), false, /*copy=*/true);
  }
}

at::Tensor AllReduceSync::MakeOptimizerTensor(int p) {
  if (params_[p].scalar_type() == at::kFloat) return params_[p];
  return params_[p].detach().to(at::kFloat, false, /*copy=*/true);
}

absl::Status AllReduceSync::Publish() {
  for (size_t p = 0; p < params_.size(); ++p) {
    if (IsMaster(static_cast<int>(p))) params_[p].detach().copy_(opt_[p]);
  }
  return absl::OkStatus();
}

// ---- stage 1 ----------------------------------------------------------------------------------

at::Tensor OptimizerShardSync::MakeOptimizerTensor(int p) {
  return OwnedOptimizerTensor(OwnedView(p), /*stays_whole=*/true, options_.offload_optimizer);
}

void OptimizerShardSync::TakeReduced(int p, const at::Tensor& reduced) {
  const ParamSlot& slot = layout_.params[p];
  at::Tensor owned = reduced.reshape({-1}).narrow(0, slot.owned_begin, slot.owned_numel());
  opt_[p].mutable_grad() = OptimizerGrad(owned, opt_[p]);
  params_[p].mutable_grad().reset();
}

absl::Status OptimizerShardSync::Publish() {
  return AllGatherUnits([](const ParamSlot&) { return true; });
}

// ---- stage 2 ----------------------------------------------------------------------------------

at::Tensor GradShardSync::NewBucketBuffer(const BucketLayout& bucket) {
  return at::zeros({layout_.DegreeOf(bucket.routed_experts) * bucket.shard_numel},
                   params_[bucket.params.front()].options().dtype(options_.reduce_dtype));
}

void GradShardSync::CopyIn(int p, const at::Tensor& grad, at::Tensor& buffer) {
  // Rank-major: rank r's block holds element range [r·shard, (r+1)·shard) of every parameter.
  const ParamSlot& slot = layout_.params[p];
  const BucketLayout& bucket = layout_.buckets[slot.bucket];
  at::Tensor flat = grad.reshape({-1});
  const int64_t degree = layout_.DegreeOf(bucket.routed_experts);
  at::Tensor blocks = buffer.view({degree, bucket.shard_numel});
  for (int64_t r = 0; r < degree; ++r) {
    const int64_t begin = r * slot.shard_numel;
    const int64_t len = std::clamp<int64_t>(slot.numel - begin, 0, slot.shard_numel);
    if (len > 0) blocks[r].narrow(0, slot.bucket_shard_offset, len).copy_(flat.narrow(0, begin, len));
  }
}

absl::StatusOr<std::unique_ptr<PendingWork>> GradShardSync::Launch(BucketState& state,
                                                                   const BucketLayout& bucket) {
  ScaleExpertGradients(bucket, state.buffer);
  if (layout_.DegreeOf(bucket.routed_experts) == 1) {
    state.output = state.buffer;
    return std::unique_ptr<PendingWork>();
  }
  state.output = at::empty({bucket.shard_numel}, state.buffer.options());
  return ShardGroup(bucket.routed_experts)->ReduceScatterAsync(state.buffer, state.output, ReduceOp::kAvg);
}

absl::Status GradShardSync::Finish(BucketState& state, const BucketLayout& bucket) {
  for (int p : bucket.params) {
    const ParamSlot& slot = layout_.params[p];
    at::Tensor piece = state.output.narrow(0, slot.bucket_shard_offset, slot.owned_numel());
    at::Tensor& grad = opt_[p].mutable_grad();
    if (grad.defined()) {
      grad.add_(piece.to(grad.device()));
    } else {
      grad = OptimizerGrad(piece, opt_[p]);
    }
  }
  return absl::OkStatus();
}

absl::Status GradShardSync::AfterLastMicroStep() {
  if (groups_.dp_replicate == nullptr || groups_.dp_replicate->Size() == 1) return absl::OkStatus();
  // The shards live where the optimizer steps (the host when offloaded); the collective runs on
  // the parameters' device, as the buckets' do.
  const at::Device device = params_.front().device();
  for (const BucketLayout& bucket : layout_.buckets) {
    std::vector<at::Tensor> pieces;
    for (int p : bucket.params) pieces.push_back(opt_[p].grad().reshape({-1}).to(device));
    at::Tensor flat = at::cat(pieces);
    ACCEL_RETURN_IF_ERROR(groups_.dp_replicate->AllReduce(flat, ReduceOp::kAvg));
    int64_t offset = 0;
    for (int p : bucket.params) {
      at::Tensor& grad = opt_[p].mutable_grad();
      grad.view({-1}).copy_(flat.narrow(0, offset, grad.numel()));
      offset += grad.numel();
    }
  }
  return absl::OkStatus();
}

at::Tensor GradShardSync::MakeOptimizerTensor(int p) {
  return OwnedOptimizerTensor(OwnedView(p), /*stays_whole=*/true, options_.offload_optimizer);
}

absl::Status GradShardSync::Publish() {
  return AllGatherUnits([](const ParamSlot&) { return true; });
}

// ---- factory ----------------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<GradSync>> MakeGradSync(std::vector<at::Tensor> params,
                                                       ShardLayout layout,
                                                       DataParallelGroups groups,
                                                       GradSyncOptions options) {
  if (layout.degree > 1 && (groups.dp_shard == nullptr || groups.dp_shard->Size() != layout.degree)) {
    return absl::InvalidArgumentError(absl::StrCat("sharding over ", layout.degree,
                                                   " ranks needs a dp_shard group of that size"));
  }
  const bool experts = std::any_of(layout.params.begin(), layout.params.end(),
                                   [](const ParamSlot& slot) { return slot.routed_expert; });
  if (experts && groups.ep_dp != nullptr && groups.ep_dp->Size() != layout.expert_degree) {
    return absl::InvalidArgumentError(absl::StrCat("sharding routed experts over ", layout.expert_degree,
                                                   " ranks needs an ep_dp group of that size, not ",
                                                   groups.ep_dp->Size()));
  }
  const bool expert_parallel = groups.ep != nullptr && groups.ep->Size() > 1;
  if (experts && layout.expert_degree > 1 && expert_parallel && groups.ep_dp == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("sharding routed experts over ", layout.expert_degree,
                                                   " ranks needs an ep_dp group"));
  }
  if (experts && !expert_parallel && layout.expert_degree != layout.degree) {
    return absl::InvalidArgumentError(absl::StrCat("routed experts sharded over ", layout.expert_degree,
                                                   " ranks, not dp_shard's ", layout.degree,
                                                   ", need an ep group"));
  }
  if (params.empty()) return absl::InvalidArgumentError("no parameters to synchronize");
  std::unique_ptr<BucketedGradSync> sync;
  switch (layout.stage) {
    case 0: sync = std::make_unique<AllReduceSync>(std::move(params), std::move(layout), std::move(groups), options); break;
    case 1: sync = std::make_unique<OptimizerShardSync>(std::move(params), std::move(layout), std::move(groups), options); break;
    case 2: sync = std::make_unique<GradShardSync>(std::move(params), std::move(layout), std::move(groups), options); break;
    case 3: sync = MakeParamShardSync(std::move(params), std::move(layout), std::move(groups), options); break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("sharding stage ", layout.stage, " does not exist (0-3)"));
  }
  if (absl::Status s = sync->Init(); !s.ok()) return s;
  return std::unique_ptr<GradSync>(std::move(sync));
}

}  // namespace accel::exec
