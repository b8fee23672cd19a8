// What a Recompute region (executor/train/recompute.h) keeps besides its inputs under per-op
// selective checkpointing (executor/train/kept_outputs.h): the outputs of the ops marked kept,
// stored in order as the region's forward makes them and handed back in the same order while its
// backward recomputes it. The model of PyTorch's selective-checkpoint contexts
// (torch/utils/checkpoint.py, create_selective_checkpoint_contexts), which LibTorch 1.13 lacks.
// Internal to executor/train: recompute.cc owns the store, kept_outputs.cc fills and reads it.
#ifndef ACCEL_EXECUTOR_TRAIN_REGION_OUTPUTS_H_
#define ACCEL_EXECUTOR_TRAIN_REGION_OUTPUTS_H_

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <vector>

#include "executor/train/recompute.h"

namespace accel::exec {

// One region's kept outputs.
class RegionOutputs {
 public:
  // In the region's forward: appends `output` (its tensors stay alive until Take hands them back).
  void Store(std::vector<at::Tensor> output) { outputs_.push_back(std::move(output)); }
  // In the region's recompute: the next stored output, moved out so that its memory goes with
  // the recomputed graph. Throws c10::Error when none is left: a second backward through the
  // region (they are used once), or a recompute that asks for more than its forward kept.
  std::vector<at::Tensor> Take();
  // Throws c10::Error when the recompute left stored outputs unused (it differs from the forward).
  void CheckAllTaken() const;

 private:
  std::vector<std::vector<at::Tensor>> outputs_;
  size_t next_ = 0;
};

// Where kept ops on the calling thread store and find their outputs: the innermost Recompute
// region running now, in its forward (replay false) or its recompute (replay true); outputs is
// nullptr outside every region, and kept ops then run plainly.
struct ActiveRegion {
  RegionOutputs* outputs = nullptr;
  bool replay = false;
};
ActiveRegion CurrentRegion();

// Makes `outputs` the calling thread's active region for its lifetime and restores the previous
// one after (regions nest).
class ActiveRegionScope {
 public:
  ActiveRegionScope(RegionOutputs* outputs, bool replay);
  ~ActiveRegionScope();
  ActiveRegionScope(const ActiveRegionScope&) = delete;
  ActiveRegionScope& operator=(const ActiveRegionScope&) = delete;

 private:
  ActiveRegion previous_;
};

// RecomputeMany whose forward does not run fn: `outputs` (what fn returned in the enclosing
// region's forward) are returned, with one autograd node whose backward re-runs fn on `inputs` and
// backpropagates through it, as RecomputeMany's does. With grad mode off returns outputs.
std::vector<at::Tensor> RecomputeFromOutputs(const RecomputeManyFn& fn, const std::vector<at::Tensor>& inputs,
                                             std::vector<at::Tensor> outputs);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_REGION_OUTPUTS_H_
