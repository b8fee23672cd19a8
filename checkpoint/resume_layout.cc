#include "checkpoint/resume_layout.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "ir/enum_names.h"
#include "ir/plan_access.h"

namespace accel::exec {
namespace {

using K = LayoutFieldKind;
using nlohmann::json;

json Str(std::string_view text) { return json(std::string(text)); }

// Whether the planner resolved data.global_batch_size from `auto` (it records every resolution).
bool GlobalBatchWasAuto(const ir::Plan& plan) {
  for (const ir::ResolvedValue& r : plan.resolved()) {
    if (r.field() == "data.global_batch_size") return true;
  }
  return false;
}

// The executor's Trainer::ShardedCheckpoint() from the plan: any sharding, model parallelism or
// 16-bit parameters make the workers write shard files.
bool WritesShards(const ir::Plan& plan) {
  return plan.sharding().stage() >= 1 || ir::AxisSize(plan, ir::Axis::kTp) > 1 ||
         ir::AxisSize(plan, ir::Axis::kPp) > 1 || plan.model().moe().expert_parallel() > 1 ||
         plan.precision().param_dtype() != ir::DTYPE_FP32;
}

// The training data as an absolute, normalized path: the plan's is joined to the spec's directory
// as given on the command line ("job.yaml" and "./job.yaml" must not look like two corpora).
std::string AbsoluteDataPath(const ir::Plan& plan) {
  if (plan.data().path().empty()) return "";
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(plan.data().path(), ec);
  return ec ? plan.data().path() : absolute.lexically_normal().string();
}

}  // namespace

const std::vector<LayoutField>& ResumeLayoutFields() {
  static const std::vector<LayoutField> kFields = {
      {"model.arch", K::kModel, [](const ir::Plan& p) { return Str(ir::Name(p.model().arch())); }},
      {"model.hidden_size", K::kModel, [](const ir::Plan& p) { return json(p.model().hidden_size()); }},
      {"model.num_layers", K::kModel, [](const ir::Plan& p) { return json(p.model().num_layers()); }},
      {"model.num_heads", K::kModel, [](const ir::Plan& p) { return json(p.model().num_heads()); }},
      {"model.num_kv_heads", K::kModel, [](const ir::Plan& p) { return json(p.model().num_kv_heads()); }},
      {"model.ffn_hidden_size", K::kModel, [](const ir::Plan& p) { return json(p.model().ffn_hidden_size()); }},
      {"model.vocab_size", K::kModel, [](const ir::Plan& p) { return json(p.model().vocab_size()); }},
      {"model.moe.num_experts", K::kModel, [](const ir::Plan& p) { return json(p.model().moe().num_experts()); }},
      {"model.moe.expert_ffn_size", K::kModel,
       [](const ir::Plan& p) { return json(p.model().moe().expert_ffn_size()); }},
      // Catches every other shape difference (tied head, biases, learned positions, shared experts).
      {"model", K::kModel, [](const ir::Plan& p) { return json(p.model().parameters().total_count()); }},
      {"parallel.data_replicate", K::kReshard,
       [](const ir::Plan& p) { return json(ir::AxisSize(p, ir::Axis::kDpReplicate)); }},
      {"parallel.data_shard", K::kReshard, [](const ir::Plan& p) { return json(ir::AxisSize(p, ir::Axis::kDpShard)); }},
      {"parallel.context", K::kReshard, [](const ir::Plan& p) { return json(ir::AxisSize(p, ir::Axis::kCp)); }},
      {"parallel.tensor", K::kReshard, [](const ir::Plan& p) { return json(ir::AxisSize(p, ir::Axis::kTp)); }},
      {"parallel.pipeline", K::kReshard, [](const ir::Plan& p) { return json(ir::AxisSize(p, ir::Axis::kPp)); }},
      {"parallel.expert", K::kReshard,
       [](const ir::Plan& p) { return json(std::max<int64_t>(1, p.model().moe().expert_parallel())); }},
      {"sharding.stage", K::kReshard, [](const ir::Plan& p) { return json(p.sharding().stage()); }},
      {"precision.params", K::kPrecision, [](const ir::Plan& p) { return Str(ir::Name(p.precision().param_dtype())); }},
      {"training.optimizer.name", K::kOptimizer,
       [](const ir::Plan& p) { return Str(ir::Name(p.training().optimizer().kind())); }},
      {"data.seq_len", K::kData, [](const ir::Plan& p) { return json(p.batch().seq_len()); }},
      {"data.train.path", K::kData, [](const ir::Plan& p) { return json(AbsoluteDataPath(p)); }},
      {"data.global_batch_size", K::kBatch, [](const ir::Plan& p) { return json(p.batch().global_batch_size()); }},
  };
  return kFields;
}

json ResumeLayoutOf(const ir::Plan& plan) {
  json layout = json::object();
  for (const LayoutField& f : ResumeLayoutFields()) layout[f.field] = f.value(plan);
  layout["data.global_batch_size_auto"] = GlobalBatchWasAuto(plan);
  layout["format"] = WritesShards(plan) ? "sharded" : "single";
  layout["padded_vocab_size"] = plan.model().padded_vocab_size();
  return layout;
}

std::string LayoutValueText(const json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace accel::exec
