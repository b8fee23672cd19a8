#include "executor/checkpoint/plan_metadata.h"

#include <algorithm>

#include "checkpoint/hf_config.h"
#include "checkpoint/tp_layout.h"
#include "common/status_macros.h"
#include "executor/models/model_config.h"
#include "ir/plan_access.h"

namespace accel::exec {

absl::StatusOr<std::string> ConfigJsonFor(const ir::Plan& plan) {
  ACCEL_ASSIGN_OR_RETURN(ModelConfig c, ModelConfigFromPlan(plan.model()));
  HfModelDims dims;
  dims.arch = c.arch == ModelArch::kLlama ? HfArch::kLlama : HfArch::kGpt2;
  dims.hidden_size = c.hidden_size;
  dims.num_layers = c.num_layers;
  dims.num_heads = c.num_heads;
  dims.num_kv_heads = c.num_kv_heads;
  dims.ffn_hidden_size = c.ffn_size;
  dims.vocab_size = c.vocab_size;
  dims.max_seq_len = c.max_seq_len;
  dims.tie_word_embeddings = c.tie_embeddings;
  dims.norm_eps = c.norm_eps;
  dims.rope_theta = c.rope_theta;
  dims.qkv_bias = c.qkv_bias;
  const ir::Dtype dtype = plan.precision().param_dtype();
  dims.torch_dtype = dtype == ir::DTYPE_BF16   ? "bfloat16"
                     : dtype == ir::DTYPE_FP16 ? "float16"
                                               : "float32";
  return HuggingFaceConfigJson(dims);
}

std::string TpLayoutJsonFor(const ir::Plan& plan) {
  TpLayoutRecord record;
  record.degree = ir::AxisSize(plan, ir::Axis::kTp);
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) {
      if (p.tp_dim() >= 0) {
        record.parameters[p.name()] = {p.tp_dim(), std::max(1, p.tp_parts()), std::max(1, p.tp_replicas())};
      }
    }
  }
  return TpLayoutJson(record);
}

}  // namespace accel::exec
