// Callbacks a model makes around each shard unit's forward, so sharding stage 3 can gather a
// unit's parameters just before they are used and free them right after (FSDP's pre/post-forward
// hooks; Zhao et al. 2023). Units are numbered in forward order as in the plan:
// 0 = embeddings, 1 + i = transformer block i, num_layers + 1 = head (final norm, lm_head, loss).
#ifndef ACCEL_EXECUTOR_MODELS_UNIT_HOOKS_H_
#define ACCEL_EXECUTOR_MODELS_UNIT_HOOKS_H_

#include <ATen/core/Tensor.h>

namespace accel::exec {

class UnitHooks {
 public:
  virtual ~UnitHooks() = default;

  // Before unit `unit` runs its forward: its parameters must be usable when this returns.
  // Throws c10::Error (or std::exception) on a communication failure.
  virtual void BeforeForward(int unit) = 0;

  // After unit `unit`'s forward produced `output` (its activations, [batch, seq, ...]). Returns
  // the tensor the model continues with: `output` itself, possibly with a gradient hook that
  // prepares the unit's backward.
  virtual at::Tensor AfterForward(int unit, const at::Tensor& output) = 0;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_UNIT_HOOKS_H_
