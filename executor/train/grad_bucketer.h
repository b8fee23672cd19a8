// Data-parallel gradient averaging in buckets launched from autograd hooks, so communication of
// late layers overlaps the backward pass of early layers (the scheme of PyTorch DDP; Li et al.,
// "PyTorch Distributed", VLDB 2020).
#ifndef ACCEL_EXECUTOR_TRAIN_GRAD_BUCKETER_H_
#define ACCEL_EXECUTOR_TRAIN_GRAD_BUCKETER_H_

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/communicator.h"

namespace accel::exec {

// What the last synchronized backward did, for logs and overlap checks.
struct GradSyncStats {
  // Buckets reduced.
  int64_t buckets = 0;
  // Buckets whose all-reduce was launched from a gradient hook, i.e. while backward still ran.
  int64_t launched_during_backward = 0;
  // Seconds from BeginBackward to the first launch, and from BeginBackward to FinishBackward's
  // start (the end of backward).
  double first_launch_seconds = 0;
  double backward_seconds = 0;
  // Seconds FinishBackward spent waiting for outstanding all-reduces after backward ended.
  double wait_seconds = 0;
};

// Owns the buckets of one model replica and their hooks. Parameters are assigned to buckets in
// reverse registration order (the order gradients become ready in backward), each bucket holding
// consecutive parameters of one dtype and device up to bucket_bytes (at least one parameter).
// Buckets are launched strictly in bucket order so every rank issues the same collective sequence.
class GradBucketer {
 public:
  // params: the trainable parameters in registration order (model->parameters()); comm: the
  // data-parallel group (Size() > 1). Registers one gradient hook per parameter.
  // Errors: InvalidArgument for bucket_bytes < 1 or no parameters.
  static absl::StatusOr<std::unique_ptr<GradBucketer>> Create(std::vector<at::Tensor> params,
                                                              std::shared_ptr<Communicator> comm,
                                                              int64_t bucket_bytes);
  ~GradBucketer();
  GradBucketer(const GradBucketer&) = delete;
  GradBucketer& operator=(const GradBucketer&) = delete;

  // Arms the hooks for the next backward when sync is true (the last micro-step of an
  // accumulation); with sync false the hooks do nothing and gradients only accumulate locally.
  void BeginBackward(bool sync);

  // After a synchronized backward: launches buckets not launched yet (parameters that received no
  // gradient contribute their current .grad or zeros), waits for all, and writes the rank-average
  // of the accumulated gradients into every parameter's .grad. No-op after an unsynchronized
  // backward. Errors: those of the communicator (timeouts, peer failures).
  absl::Status FinishBackward();

  // Statistics of the last synchronized backward.
  const GradSyncStats& stats() const { return stats_; }
  // Number of buckets and the parameter indices (into params) of bucket b.
  int64_t num_buckets() const { return static_cast<int64_t>(buckets_.size()); }
  std::vector<int64_t> BucketParams(int64_t b) const;

 private:
  struct Slot {
    int64_t param = 0;   // index into params_
    int64_t offset = 0;  // element offset in the bucket buffer
  };
  struct Bucket {
    std::vector<Slot> slots;
    at::Tensor buffer;  // flat, dtype and device of its parameters
    int64_t ready = 0;
    bool launched = false;
    std::unique_ptr<PendingWork> work;
  };

  GradBucketer(std::vector<at::Tensor> params, std::shared_ptr<Communicator> comm);
  void OnGrad(int64_t param, const at::Tensor& grad);
  void LaunchReady(bool from_hook);
  void CopyIntoBucket(int64_t param, const at::Tensor* incoming);

  std::vector<at::Tensor> params_;
  std::shared_ptr<Communicator> comm_;
  std::vector<Bucket> buckets_;
  std::vector<int64_t> bucket_of_;  // param index -> bucket
  std::vector<int64_t> slot_of_;    // param index -> slot within its bucket
  std::vector<bool> param_ready_;
  std::vector<unsigned> hook_handles_;
  std::mutex mu_;
  bool sync_ = false;
  int64_t next_launch_ = 0;
  absl::Status launch_error_;
  std::chrono::steady_clock::time_point backward_start_;
  GradSyncStats stats_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_GRAD_BUCKETER_H_
