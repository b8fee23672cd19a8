// The mixture-of-experts MLP of a llama-family block: a router, routed SwiGLU experts and an
// optional shared expert, with Hugging Face parameter names (Mixtral or Qwen-MoE).
#ifndef ACCEL_EXECUTOR_MODELS_MOE_MOE_LAYER_H_
#define ACCEL_EXECUTOR_MODELS_MOE_MOE_LAYER_H_

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "executor/models/model_config.h"
#include "executor/models/moe/router.h"
#include "executor/models/moe/token_dispatch.h"

namespace accel::exec {

// What one MoE layer's forward returns besides its output.
struct MoeOutput {
  at::Tensor y;          // [b, s, h], x's dtype
  at::Tensor aux_loss;   // 0-dim fp32 LoadBalancingLoss of this layer's routing (differentiable)
  at::Tensor counts;     // [E] int64: token slots routed to each expert from this rank's tokens
};

// The block registers it as "mlp", its parameters named as the plan's (planner/model_params.cc):
// gate.weight [E, h] (the router, no bias); the routed experts this rank holds
// (ExpertParallel::LocalExperts, El of them) grouped as experts.gate_proj and experts.up_proj
// [El, fe, h] and experts.down_proj [El, h, fe] (torchtitan's GroupedExperts; checkpoints convert
// to Hugging Face's per-expert tensors); with a shared expert of total width fs,
// shared_expert.{gate,up}_proj.weight [fs, h], shared_expert.down_proj.weight [h, fs] and, when
// gated, shared_expert_gate.weight [1, h].
class MoeLayer : public torch::nn::Module {
 public:
  // config.moe.num_experts > 0 and, with a group, divisible by its size. ep.group must outlive
  // the layer's forwards and backwards. Under tensor parallelism of degree tp_size every expert's
  // inner width (and the shared expert's) is split as the dense MLP's (torchtitan's expert
  // tensor parallelism: gate/up column-parallel, down row-parallel): Forward then returns this
  // rank's partial sum, which the block reduces with ExitTensorParallel, and the router's and
  // shared gate's gradients are partial too (summed over tp by the trainer: ir::Parameter.
  // tp_partial_grad). Errors: c10::Error when tp_size does not divide the widths.
  MoeLayer(const ModelConfig& config, ExpertParallel ep, int64_t tp_size = 1);

  // x: [b, s, h] (the post-attention norm's output, in the matmuls' dtype) → MoeOutput.
  // y = Σ_j p_j · expert_{e_j}(x) over the k chosen experts (+ the shared expert); with
  // moe.capacity_factor > 0 a choice beyond its expert's capacity contributes nothing. The experts run
  // as one matmul per local expert over its contiguous rows (TokenDispatch, GroupedExperts), never
  // a loop over tokens. Keeps for backward: the router's input and fp32 scores [T, E], the k
  // probabilities, the dispatched rows [R, h], the gate and up products [R, fe] each
  // (GroupedExperts) and the experts' outputs by slot [T·k, h] (for the probabilities' gradient),
  // plus the shared expert's dense-MLP tensors.
  // With expert parallelism every rank of the group must call Forward and backward in lockstep.
  MoeOutput Forward(const at::Tensor& x);

  // The experts this rank holds, [first, end) of E.
  std::pair<int64_t, int64_t> local_experts() const { return local_; }

 private:
  at::Tensor SharedExpert(const at::Tensor& x) const;
  // Slots each expert takes from `tokens` tokens: ceil(capacity_factor · tokens · k / E), 0
  // (no limit) when dropless.
  int64_t Capacity(int64_t tokens) const;

  MoeConfig moe_;
  ExpertParallel ep_;
  std::pair<int64_t, int64_t> local_;
  at::Tensor router_;
  at::Tensor gate_, up_, down_;  // grouped local experts
  // Undefined without a shared expert (or its gate).
  at::Tensor shared_gate_proj_, shared_up_proj_, shared_down_proj_, shared_gate_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_MODELS_MOE_MOE_LAYER_H_
