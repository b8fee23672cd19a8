#include "planner/recompute_policy.h"

namespace accel::planner {

const std::vector<BlockOp>& BlockOpsOf(bool gpt2) {
  static const std::vector<BlockOp> kGpt2 = {
      {"attn.c_attn", true}, {"attn.core", false}, {"attn.c_proj", true}, {"mlp.c_fc", true}, {"mlp.c_proj", true}};
  static const std::vector<BlockOp> kLlama = {
      {"self_attn.q_proj", true}, {"self_attn.k_proj", true}, {"self_attn.v_proj", true},
      {"self_attn.core", false},  {"self_attn.o_proj", true}, {"mlp.gate_proj", true},
      {"mlp.up_proj", true},      {"mlp.down_proj", true}};
  return gpt2 ? kGpt2 : kLlama;
}

bool OpPolicyKeeps(bool gpt2, std::string_view op) {
  int matmuls = 0;
  for (const BlockOp& o : BlockOpsOf(gpt2)) {
    if (o.matmul) ++matmuls;
    if (op == o.name) return !o.matmul || matmuls % 2 == 1;
  }
  return false;
}

std::vector<std::string> OpPolicyKeptOutputs(bool gpt2) {
  std::vector<std::string> kept;
  for (const BlockOp& o : BlockOpsOf(gpt2)) {
    if (OpPolicyKeeps(gpt2, o.name)) kept.emplace_back(o.name);
  }
  return kept;
}

namespace {

// Output width per token of `op` (BlockOpsOf's names).
int64_t OutputWidth(std::string_view op, const BlockOpWidths& w) {
  if (op == "attn.c_attn") return 3 * w.q;
  if (op == "self_attn.k_proj" || op == "self_attn.v_proj") return w.kv;
  if (op == "mlp.c_fc" || op == "mlp.gate_proj" || op == "mlp.up_proj") return w.ffn;
  if (op == "attn.c_proj" || op == "mlp.c_proj" || op == "self_attn.o_proj" || op == "mlp.down_proj") return w.h;
  return w.q;  // q_proj and the attention cores
}

}  // namespace

int64_t OpPolicyKeptWidth(bool gpt2, const BlockOpWidths& widths) {
  int64_t width = 0;
  for (const std::string& op : OpPolicyKeptOutputs(gpt2)) width += OutputWidth(op, widths);
  return width;
}

}  // namespace accel::planner
