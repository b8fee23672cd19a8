#include "launcher/executor_support.h"

#include <initializer_list>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/enum_names.h"
#include "ir/plan_access.h"
#include "planner/model_params.h"

namespace accel::exec {
namespace {

void Unsupported(const std::string& field, const std::string& value, const std::string& supported,
                 std::vector<SupportIssue>& out) {
  out.push_back({field, absl::StrCat(field, " ", value,
                                     " is not supported by the executor yet (supported: ",
                                     supported, ")")});
}

// UNSPECIFIED (a hand-built plan) counts as the default.
bool OneOf(ir::Dtype value, std::initializer_list<ir::Dtype> allowed) {
  if (value == ir::DTYPE_UNSPECIFIED) return true;
  for (ir::Dtype a : allowed) {
    if (value == a) return true;
  }
  return false;
}

void UnsupportedDtype(const std::string& field, ir::Dtype value, const std::string& supported,
                      std::vector<SupportIssue>& out) {
  Unsupported(field, std::string(ir::Name(value)), supported, out);
}

// Gemma's scaled, soft-capped or windowed scores are not in context-parallel attention (ring or
// Ulysses).
void AddVariantIssues(const ir::Plan& plan, std::vector<SupportIssue>& out) {
  const ir::Model& model = plan.model();
  const int64_t cp = ir::AxisSize(plan, ir::Axis::kCp);
  const bool scores = model.query_pre_attn_scalar() > 0 || model.attn_logit_softcapping() > 0 ||
                      model.sliding_window_layers_size() > 0;
  if (scores && cp > 1) {
    out.push_back({"parallel.context", absl::StrCat("parallel.context ", cp, " with ", model.model_type(),
                                                    "'s attention scores (query_pre_attn_scalar, soft-capping, "
                                                    "sliding window) is not supported by the executor yet "
                                                    "(supported: context 1)")});
  }
}

}  // namespace

std::vector<SupportIssue> ExecutorSupportIssues(const ir::Plan& plan,
                                                const ExecutorCapabilities& capabilities) {
  std::vector<SupportIssue> out;
  // Context parallelism runs dense models; a router's load-balancing loss over sequence chunks
  // is not averaged over cp yet.
  const int64_t cp = ir::AxisSize(plan, ir::Axis::kCp);
  if (cp > 1 && plan.model().moe().num_experts() > 0) {
    out.push_back({"parallel.context", absl::StrCat("parallel.context ", cp,
                                                    " with a mixture-of-experts model is not supported by "
                                                    "the executor yet (supported: context 1 with MoE)")});
  }
  // Zero-bubble schedules split each backward into B and W, and every B and W accumulates into
  // the gradients: the executor reduces them once, after the last (sharding stages 0 and 1);
  // stages 2 and 3 reduce every micro-step, which a split backward does not delimit.
  const ir::PipelineSchedule schedule = plan.pipeline().schedule();
  if (plan.pipeline().stages_size() > 1 && plan.sharding().stage() >= 2 &&
      (schedule == ir::PIPELINE_SCHEDULE_ZB_H1 || schedule == ir::PIPELINE_SCHEDULE_ZBV)) {
    out.push_back({"parallel.pipeline_schedule",
                   absl::StrCat("parallel.pipeline_schedule ", std::string(ir::Name(schedule)), " with sharding.stage ",
                                plan.sharding().stage(),
                                " is not supported by the executor yet (supported: sharding.stage 0 or 1)")});
  }
  // Phi-3's fused projections: per-op recompute names q_proj, gate_proj, … (planner/
  // recompute_policy.h), which a fused block does not have; and tensor parallelism splits
  // qkv_proj as three equal blocks, so k and v must be as wide as q.
  const ir::Model& model = plan.model();
  if (planner::FusedProjections(model)) {
    if (plan.training().recompute() == ir::RECOMPUTE_OP) {
      out.push_back({"training.recompute",
                     "training.recompute op with phi3's fused qkv_proj and gate_up_proj is not supported by the "
                     "executor yet (supported: none, selective, full)"});
    }
    if (ir::AxisSize(plan, ir::Axis::kTp) > 1 && ir::KvHeads(model) != model.num_heads()) {
      out.push_back({"parallel.tensor",
                     absl::StrCat("parallel.tensor ", ir::AxisSize(plan, ir::Axis::kTp), " with phi3's fused qkv_proj and ",
                                  ir::KvHeads(model), " key/value heads of ", model.num_heads(),
                                  " is not supported by the executor yet (supported: tensor 1, or "
                                  "num_kv_heads = num_heads)")});
    }
  }
  AddVariantIssues(plan, out);
  const bool cuda = plan.topology().device_type() == ir::DEVICE_TYPE_CUDA;
  if (cuda && !capabilities.cuda) {
    out.push_back({"cluster.device",
                   "cluster.device cuda is not supported by this build of the executor (LibTorch "
                   "without CUDA; supported: cpu)"});
  }
  const ir::AttentionKernel kernel = plan.model().attention_kernel();
  if (kernel == ir::ATTENTION_KERNEL_SDPA && !capabilities.sdpa) {
    out.push_back({"cluster.device",
                   absl::StrCat("the plan's attention kernel (sdpa, chosen for cluster.device ",
                                std::string(ir::Name(plan.topology().device_type())),
                                ") needs LibTorch's scaled_dot_product_attention (2.0 and later), "
                                "which this build of the executor lacks")});
  } else if (kernel != ir::ATTENTION_KERNEL_SDPA && kernel != ir::ATTENTION_KERNEL_MATH) {
    out.push_back({"cluster.device", "the plan names no attention kernel (model.attention_kernel)"});
  }
  const ir::Precision& precision = plan.precision();
  if (!OneOf(precision.param_dtype(), {ir::DTYPE_FP32, ir::DTYPE_BF16})) {
    UnsupportedDtype("precision.params", precision.param_dtype(), "fp32, bf16", out);
  }
  if (precision.compute_dtype() == ir::DTYPE_FP16 && !cuda) {
    out.push_back({"precision.compute",
                   "precision.compute fp16 needs a CUDA device: LibTorch's CPU kernels have no "
                   "fp16 matrix multiply (supported on cpu: fp32, bf16)"});
  } else if (!OneOf(precision.compute_dtype(), {ir::DTYPE_FP32, ir::DTYPE_BF16, ir::DTYPE_FP16})) {
    UnsupportedDtype("precision.compute", precision.compute_dtype(), "fp32, bf16, fp16", out);
  }
  if (!OneOf(precision.reduce_dtype(), {ir::DTYPE_FP32, ir::DTYPE_BF16})) {
    UnsupportedDtype("precision.reduce", precision.reduce_dtype(), "fp32, bf16", out);
  }
  return out;
}

}  // namespace accel::exec
