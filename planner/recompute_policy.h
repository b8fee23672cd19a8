// Per-op selective recompute (`training.recompute: op`): which ops of a transformer block keep
// their outputs while the rest of the block is recomputed in backward. torchtitan's rule
// (`selective_ac_option = "op"`, torchtitan/distributed/activation_checkpoint.py, `_save_list`
// and its custom policy): the outputs of the matrix multiplies are kept except every second one
// (counted in forward order from 1: the 1st, 3rd, … are kept), and the attention's output is kept;
// norms, rotary, activations and residual adds are recomputed. The executor keeps what the plan
// lists (ir::Training.recompute_kept_outputs; executor/train/kept_outputs.h); the memory and
// step-time models count the same ops.
#ifndef ACCEL_PLANNER_RECOMPUTE_POLICY_H_
#define ACCEL_PLANNER_RECOMPUTE_POLICY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace accel::planner {

// One op of a block whose output per-op recompute may keep, named as the executor's blocks name
// it (relative to the block; CausalLm::BlockOps).
struct BlockOp {
  const char* name;
  bool matmul;  // a matrix multiply (else the attention core)
};

// The ops of one block in forward order: GPT-2 attn.c_attn, attn.core, attn.c_proj, mlp.c_fc,
// mlp.c_proj; the Llama family self_attn.{q,k,v}_proj, self_attn.core, self_attn.o_proj,
// mlp.{gate,up,down}_proj.
const std::vector<BlockOp>& BlockOpsOf(bool gpt2);

// Whether per-op recompute keeps `op`'s output: the attention core, or an odd-numbered matmul.
bool OpPolicyKeeps(bool gpt2, std::string_view op);

// The names OpPolicyKeeps accepts, in forward order: GPT-2 attn.c_attn, attn.core, mlp.c_fc;
// Llama self_attn.q_proj, self_attn.v_proj, self_attn.core, mlp.gate_proj, mlp.down_proj.
std::vector<std::string> OpPolicyKeptOutputs(bool gpt2);

// Output widths of a block's ops on one rank of a tensor-parallel group, elements per token:
// q = query heads × head_dim / t, kv = key/value heads × head_dim / t (replicated heads counted),
// h the hidden size (a row-parallel product's output is whole before its reduction), ffn / t.
struct BlockOpWidths {
  int64_t q = 0;
  int64_t kv = 0;
  int64_t h = 0;
  int64_t ffn = 0;
};

// Elements per token of the outputs per-op recompute keeps: GPT-2 3q (c_attn) + q (the attention
// output) + ffn (c_fc); Llama q + kv + q + ffn + h (q_proj, v_proj, attention, gate_proj, down_proj).
int64_t OpPolicyKeptWidth(bool gpt2, const BlockOpWidths& widths);

// The share of `op`'s matmul FLOPs that per-op recompute runs again: 0 when kept, 1 otherwise.
inline double OpPolicyRecomputedShare(bool gpt2, std::string_view op) { return OpPolicyKeeps(gpt2, op) ? 0.0 : 1.0; }

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_RECOMPUTE_POLICY_H_
