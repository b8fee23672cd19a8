// The sharding stages as GradSync implementations (see plan.proto's Sharding for what each MUST
// do). Internal to executor/train: use MakeGradSync (grad_sync.h).
#ifndef ACCEL_EXECUTOR_TRAIN_ZERO_SYNC_H_
#define ACCEL_EXECUTOR_TRAIN_ZERO_SYNC_H_

#include "executor/train/bucketed_sync.h"

namespace accel::exec {

// Stage 0: every bucket all-reduced (average) over dp on the last micro-step; every rank updates
// every parameter (PyTorch DDP; Li et al. 2020).
class AllReduceSync : public BucketedGradSync {
 public:
  using BucketedGradSync::BucketedGradSync;

 protected:
  bool ReducesOn(bool last) const override { return last; }
  at::Tensor NewBucketBuffer(const BucketLayout& bucket) override;
  void CopyIn(int p, const at::Tensor& grad, at::Tensor& buffer) override;
  bool DropsGradAfterCopy() const override { return false; }
  absl::StatusOr<std::unique_ptr<PendingWork>> Launch(BucketState& state,
                                                      const BucketLayout& bucket) override;
  absl::Status Finish(BucketState& state, const BucketLayout& bucket) override;
  at::Tensor MakeOptimizerTensor(int p) override;
  absl::Status Publish() override;
  // Hands parameter p's reduced full gradient to the optimizer.
  virtual void TakeReduced(int p, const at::Tensor& reduced);
};

// Stage 1: as stage 0, then each rank updates only the range it owns and every unit is
// all-gathered over dp_shard (ZeRO-1, Rajbhandari et al. 2020 §5.1).
class OptimizerShardSync : public AllReduceSync {
 public:
  using AllReduceSync::AllReduceSync;

 protected:
  at::Tensor MakeOptimizerTensor(int p) override;
  absl::Status Publish() override;
  void TakeReduced(int p, const at::Tensor& reduced) override;
};

// Stage 2: every micro-step each bucket is reduce-scattered (average) over dp_shard into the
// owners' gradient ranges, which accumulate; full gradients are dropped once copied (ZeRO-2 §5.2;
// FSDP SHARD_GRAD_OP). Hybrid: after the last micro-step the accumulated ranges are all-reduced
// over dp_replicate (AfterLastMicroStep).
class GradShardSync : public BucketedGradSync {
 public:
  using BucketedGradSync::BucketedGradSync;

 protected:
  bool ReducesOn(bool /*last*/) const override { return true; }
  at::Tensor NewBucketBuffer(const BucketLayout& bucket) override;
  void CopyIn(int p, const at::Tensor& grad, at::Tensor& buffer) override;
  bool DropsGradAfterCopy() const override { return true; }
  absl::StatusOr<std::unique_ptr<PendingWork>> Launch(BucketState& state,
                                                      const BucketLayout& bucket) override;
  absl::Status Finish(BucketState& state, const BucketLayout& bucket) override;
  at::Tensor MakeOptimizerTensor(int p) override;
  absl::Status Publish() override;
  // Hybrid (dp_replicate > 1): averages the accumulated fp32 gradient shards over dp_replicate,
  // one all-reduce per bucket, once per optimizer step (FSDP HYBRID_SHARD under no_sync).
  absl::Status AfterLastMicroStep() override;
};

// The fp32 optimizer tensor of parameter p's owned range: a view of the parameter when it is
// fp32, stays whole (no copy) and is not offloaded, else an fp32 copy (master weights), in host
// memory when offload (pinned when owned_view is on CUDA).
at::Tensor OwnedOptimizerTensor(const at::Tensor& owned_view, bool stays_whole, bool offload);

// Builds stage 3 (zero3_sync.cc).
std::unique_ptr<BucketedGradSync> MakeParamShardSync(std::vector<at::Tensor> params,
                                                     ShardLayout layout, DataParallelGroups groups,
                                                     GradSyncOptions options);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_ZERO_SYNC_H_
