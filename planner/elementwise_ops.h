#ifndef ACCEL_PLANNER_ELEMENTWISE_OPS_H_
#define ACCEL_PLANNER_ELEMENTWISE_OPS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "ir/plan.pb.h"

// The elementwise kernels of accel's executor whose time is far from their bytes over memory
// bandwidth, so the step-time model times them from measured per-element costs
// (accel.ir.ElementwiseCost, written by `accel calibrate`). On one core of the build machine the
// tanh GELU alone took about 12 ns per element forward and backward, 35x its bytes at the
// measured copy bandwidth (torch 1.13 profiler, GPT-2 h 256, seq 128, micro batch 8); it was
// about 15% of the step. Each op is what the executor runs (executor/models/*.cc,
// executor/train/trainer.cc) and what calibrate times:
//   layer_norm     at::layer_norm over the hidden size; an element is one input value
//   rms_norm       exec::RmsNorm (fp32 mean of squares, rsqrt, scale); likewise
//   gelu_tanh      torch::gelu(x, "tanh") (gpt2 MLP; its input is fp32 under autocast, as c_fc's
//                  fp32 bias add promotes the 16-bit product); one input value
//   silu_mul       silu(gate) · up (llama MLP); one output value
//   causal_softmax scale, causal mask and softmax of the attention scores (the unfused
//                  attention path); one score
//   cross_entropy  fp32 upcast, log-softmax and NLL of the logits; one logit
//   rotary         exec::ApplyRotary, x·cos + rotate_half(x)·sin, on llama's queries and keys
//                  (16-bit under autocast, times fp32 tables: an fp32 result); one rotated value
//   residual_add   a block output added to the residual stream (fp32 stream + the projection's
//                  output, an fp32 sum under autocast); one summed value
//   bias_add       Conv1D's bias (fp32 [n]) added to a matmul output [t, n] (gpt2: c_attn,
//                  c_fc, and both c_proj after their tensor-parallel exit); backward sums the
//                  bias gradient over the tokens; one output value
// The last three are bandwidth-bound, yet each is a LibTorch operator with its own passes over
// memory and dispatch, which the roofline memory term (planner/step_compute.h, saved tensors
// only) does not count, so `accel calibrate` times them per element. A timed backward ends in the leaf inputs' gradient
// accumulation, which for the residual add stands in for the sum autograd forms where the
// stream forks into the block and the skip connection.
namespace accel::planner {

enum class ElementwiseOp {
  kLayerNorm, kRmsNorm, kGeluTanh, kSiluMul, kCausalSoftmax, kCrossEntropy,
  kRotary, kResidualAdd, kBiasAdd
};
inline constexpr int kElementwiseOpCount = 9;

// The op's name in profiles: "layer_norm", "rms_norm", "gelu_tanh", "silu_mul",
// "causal_softmax", "cross_entropy", "rotary", "residual_add", "bias_add".
std::string_view ElementwiseOpName(ElementwiseOp op);

// The op named `name`, or nullopt.
std::optional<ElementwiseOp> ElementwiseOpByName(std::string_view name);

// Elements of each op (indexed by ElementwiseOp) for one microbatch on one rank.
using ElementwiseElements = std::array<double, kElementwiseOpCount>;

// One block's elements for `micro_batch` sequences of `seq_len` tokens, tp/cp ranks, t = b·s/cp
// tokens: gpt2 2 layer norms of t·h (t/tp each with sequence parallelism), GELU of t·ffn/tp;
// llama 2 RMS norms likewise, silu_mul of t·ffn/tp; both the causal softmax of b·(a/tp)·(s/cp)·s
// scores and 2 residual adds of t·h (t/tp with sequence parallelism); llama the rotary of
// t·(a + kv·R)·d/tp query and key values (R = Model.kv_head_replicas); gpt2 the bias adds of
// c_attn (t·3h/tp) and c_fc (t·ffn/tp) and of both c_proj (t·h, t/tp with sequence parallelism).
ElementwiseElements BlockElementwiseElements(const ir::Model& model, int64_t seq_len,
                                             int64_t micro_batch, int64_t tp, int64_t cp,
                                             bool sequence_parallel);

// The head's elements: the final norm (t·h, t/tp with sequence parallelism) and the cross
// entropy of t·V_padded/tp logits.
ElementwiseElements HeadElementwiseElements(const ir::Model& model, int64_t seq_len,
                                            int64_t micro_batch, int64_t tp, int64_t cp,
                                            bool sequence_parallel);

// The profile's cost of `op` for activations in `dtype`, or nullptr.
const ir::ElementwiseCost* FindElementwiseCost(const ir::DeviceProfile& profile, ElementwiseOp op,
                                               ir::Dtype dtype);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_ELEMENTWISE_OPS_H_
