// The machinery every sharding stage shares: gradient-ready hooks on each parameter's gradient
// accumulator, buckets launched strictly in plan order as soon as they are full (so
// communication overlaps backward, as PyTorch DDP's reducer does), at most two bucket buffers
// live (one reducing, one filling: DeepSpeed's overlap_comm double buffer), the optimizer tensors, the
// global gradient norm, and the per-unit all-gather that publishes updated shards. The stage
// classes in zero_sync.cc fill in the collective and the layout of bucket buffers.
#ifndef ACCEL_EXECUTOR_TRAIN_BUCKETED_SYNC_H_
#define ACCEL_EXECUTOR_TRAIN_BUCKETED_SYNC_H_

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "executor/train/grad_sync.h"

namespace accel::exec {

class BucketedGradSync : public GradSync {
 public:
  BucketedGradSync(std::vector<at::Tensor> params, ShardLayout layout, DataParallelGroups groups,
                   GradSyncOptions options);
  ~BucketedGradSync() override;

  const std::vector<at::Tensor>& OptimizerParams() const override { return opt_; }
  void BeginMicroStep(bool last) override;
  absl::Status EndMicroStep() override;
  absl::StatusOr<double> GradNormSquared() override;
  absl::Status AfterOptimizerStep() override;
  absl::Status GatherAll() override { return absl::OkStatus(); }
  UnitHooks* unit_hooks() override { return nullptr; }
  const ShardLayout& layout() const override { return layout_; }
  const GradSyncStats& stats() const override { return stats_; }

  // Creates the optimizer tensors (MakeOptimizerTensor) and registers the hooks. Called once by
  // MakeGradSync. Errors: InvalidArgument for a parameter/layout mismatch.
  virtual absl::Status Init();

 protected:
  struct BucketState {
    at::Tensor buffer;   // gradients in, reduce dtype (layout decided by the stage)
    at::Tensor output;   // reduce-scatter result (stages 2–3)
    int64_t ready = 0;
    bool launched = false;
    std::unique_ptr<PendingWork> work;
  };

  // Whether the hooks reduce in this micro-step (stages 0–1: the last one only).
  virtual bool ReducesOn(bool last) const = 0;
  // A zeroed buffer for bucket b's gradients.
  virtual at::Tensor NewBucketBuffer(const BucketLayout& bucket) = 0;
  // Copies parameter p's gradient into its place in the bucket buffer.
  virtual void CopyIn(int p, const at::Tensor& grad, at::Tensor& buffer) = 0;
  // Whether the module's full gradient is dropped once copied (stages 2–3).
  virtual bool DropsGradAfterCopy() const = 0;
  // Starts bucket b's collective; a null work means there is nothing to communicate.
  virtual absl::StatusOr<std::unique_ptr<PendingWork>> Launch(BucketState& state,
                                                              const BucketLayout& bucket) = 0;
  // After the collective: writes the averaged gradients where the optimizer reads them.
  virtual absl::Status Finish(BucketState& state, const BucketLayout& bucket) = 0;
  // The fp32 tensor the optimizer updates for parameter p (see GradSync::OptimizerParams).
  virtual at::Tensor MakeOptimizerTensor(int p) = 0;
  // Called once parameter p's gradient has been copied into its bucket (stage 3 frees units).
  virtual void OnGradCopied(int /*p*/) {}
  // Makes the module's parameters match the updated optimizer tensors.
  virtual absl::Status Publish() = 0;
  // After the last micro-step's buckets are finished: what the step does once on the
  // accumulated gradients (stages 2–3: the hybrid all-reduce over dp_replicate).
  virtual absl::Status AfterLastMicroStep() { return absl::OkStatus(); }

  // All-gathers, unit by unit over dp_shard ("ep_dp" for routed experts; one unit in flight
  // while the previous is written), the owned ranges of the parameters for which
  // `select` is true into the module's parameters (stages 1–3 after the update).
  absl::Status AllGatherUnits(const std::function<bool(const ParamSlot&)>& select);
  // The group a bucket or unit gather runs its collective over: dp_shard, or "ep_dp" for routed
  // experts when there is expert parallelism.
  Communicator* ShardGroup(bool routed_experts) const;
  // Whether routed experts are split over an "ep" group (else they follow dp like the rest).
  bool ExpertParallel() const { return groups_.ep != nullptr && groups_.ep->Size() > 1; }
  // Scales a routed-expert bucket's gradients by 1/ep before its collective: each rank's expert
  // gradient already sums the tokens of its whole ep group, so the average over the ep_dp (and
  // dp_replicate) ranks leaves a factor ep over the dp average every other gradient gets
  // (torchtitan divides expert gradients by the whole dp degree alike). Exact for ep a power of 2.
  void ScaleExpertGradients(const BucketLayout& bucket, at::Tensor& buffer) const;
  // Starts the all-gather of `gather`'s owned ranges into `output` (made here: [degree ·
  // gather.shard_numel]); a null work when its degree is 1 (output is then the input).
  absl::StatusOr<std::unique_ptr<PendingWork>> LaunchGather(const UnitGather& gather, at::Tensor& output);
  // Parameter p's whole flat tensor [numel] in a finished gather's output (a strided copy).
  at::Tensor GatheredWhole(const UnitGather& gather, const at::Tensor& output, int p) const;
  // Parameter p's owned flat range, as a view of its (whole) module tensor.
  at::Tensor OwnedView(int p) const;
  // True when the optimizer tensor of p is not the module parameter itself.
  bool IsMaster(int p) const { return !opt_[p].is_same(params_[p]); }

  std::vector<at::Tensor> params_;
  std::vector<at::Tensor> opt_;
  ShardLayout layout_;
  DataParallelGroups groups_;
  GradSyncOptions options_;
  GradSyncStats stats_;

 private:
  struct HookState;
  // Drops last step's gradients before the first micro-step of a new optimizer step.
  void OnNewStep();
  void OnGradReady(int p);
  void MarkReady(int p, const at::Tensor& grad);
  void LaunchReady(bool from_hook);
  // Waits for bucket b's collective, writes its result where the optimizer reads it (Finish,
  // skipped when `write` is false) and releases its buffers. Errors: the collective's or
  // Finish's; exceptions become Internal.
  absl::Status FinishBucket(int b, bool write);
  // Before a new bucket buffer is allocated: finishes every launched bucket but the newest, so
  // backward holds at most two buckets (the one reducing and the one filling) instead of every
  // gradient it has produced. Errors go to hook_error_ (a hook cannot return them).
  void FinishAllButNewestLaunched();

  std::shared_ptr<HookState> hook_state_;
  std::vector<std::shared_ptr<void>> accumulators_;  // keeps the hooked accumulators alive
  std::vector<BucketState> buckets_;
  std::vector<bool> ready_;
  std::mutex mu_;
  bool armed_ = false;
  bool last_ = false;  // the armed micro-step is the optimizer step's last
  bool new_step_ = true;
  int next_launch_ = 0;
  int next_finish_ = 0;       // buckets [0, next_finish_) are finished and released
  int64_t live_buckets_ = 0;  // buckets whose buffer is allocated and not yet released
  absl::Status hook_error_;   // the first launch or finish error raised inside a hook
  std::chrono::steady_clock::time_point backward_start_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_BUCKETED_SYNC_H_
