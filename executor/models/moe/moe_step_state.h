// What a model's mixture-of-experts blocks share with the trainer over one optimizer step: the
// weight backward gives their load-balancing losses, and what they record for metrics.
#ifndef ACCEL_EXECUTOR_MODELS_MOE_MOE_STEP_STATE_H_
#define ACCEL_EXECUTOR_MODELS_MOE_MOE_STEP_STATE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

namespace accel::exec {

// The routing of one step on one rank, summed over its MoE blocks and micro-batches.
struct MoeStepStats {
  // Token slots each routed expert received from this rank's tokens (each token counted k
  // times), [E]; empty when no MoE block ran.
  std::vector<int64_t> expert_counts;
  // Σ of the blocks' load-balancing losses (unweighted, ir::MixtureOfExperts.aux_loss_coef not
  // applied) and how many there were: blocks × micro-batches.
  double aux_loss_sum = 0;
  int64_t aux_losses = 0;
};

// Shared (by pointer) between a model and its MoE blocks.
class MoeStepState {
 public:
  // The multiplier of the language-model loss in the scalar backward starts from (loss scale /
  // accumulation steps): AttachAuxLoss weights the load-balancing losses alike. The trainer sets
  // it before each step's first forward; it holds for the step (recomputes read it in backward).
  double objective_scale() const { return objective_scale_; }
  void set_objective_scale(double scale) { objective_scale_ = scale; }

  // Adds one block forward's routing: counts [E] int64 and its 0-dim load-balancing loss. A
  // recompute's replay of a forward must not call it (it would count the tokens twice).
  void Record(const at::Tensor& counts, const at::Tensor& aux_loss);

  // What was recorded since the last call, and starts over.
  MoeStepStats Take();

 private:
  double objective_scale_ = 1.0;
  at::Tensor counts_;    // [E] int64 on the blocks' device; undefined before the first Record
  at::Tensor aux_sum_;   // 0-dim fp64
  int64_t aux_losses_ = 0;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_MOE_MOE_STEP_STATE_H_
