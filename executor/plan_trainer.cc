#include "executor/plan_trainer.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "executor/models/model_config.h"
#include "executor/plan_dtype.h"
#include "executor/train/pipeline_schedule.h"
#include "executor/train/shard_layout.h"

namespace accel::exec {
namespace {

// The model's tensor-parallel layers must split every parameter as the plan says
// (ir::Parameter.tp_dim, tp_parts): the plan is the contract the checkpoints and estimates use.
absl::Status CheckTensorParallelSplits(const CausalLm& model, const ShardLayout& layout) {
  for (const ParamSlot& slot : layout.params) {
    const TpSplit split = model.TensorParallelSplit(slot.name);
    const int parts = split.dim < 0 ? 1 : split.parts;
    const int replicas = split.dim < 0 ? 1 : split.replicas;
    if (split.dim != slot.tp_dim || (slot.tp_dim >= 0 && (parts != slot.tp_parts || replicas != slot.tp_replicas))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter ", slot.name, ": the plan splits dim ", slot.tp_dim, " in ", slot.tp_parts,
          " part(s) held by ", slot.tp_replicas, " tensor-parallel rank(s) each, but the executor's ",
          ModelArchName(model.config().arch), " model splits dim ", split.dim, " in ", parts, " held by ",
          replicas));
    }
  }
  return absl::OkStatus();
}

// The routed experts the model holds must be the ones the plan places on this rank
// (ir::RankPlacement.expert_begin/expert_end).
absl::Status CheckLocalExperts(const ir::Plan& plan, int rank, const CausalLm& model) {
  if (plan.model().moe().num_experts() == 0) return absl::OkStatus();
  const ir::RankPlacement& placement = plan.ranks(rank);
  const auto [first, end] = model.LocalExperts();
  if (first == placement.expert_begin() && end == placement.expert_end()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("rank ", rank, " holds routed experts [", first, ", ", end,
                                                 ") but the plan places [", placement.expert_begin(), ", ",
                                                 placement.expert_end(), ") on it"));
}

}  // namespace

absl::StatusOr<ContextParallel> ContextParallelFromPlan(const ir::Plan& plan, std::shared_ptr<Communicator> group) {
  const ir::ContextParallel& planned = plan.mesh().context_parallel();
  ContextParallel cp;
  if (group == nullptr || group->Size() <= 1) return cp;
  if (planned.ranks_size() != group->Size() || planned.chunks() <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("the plan's context parallelism lays out chunks for ",
                                                   planned.ranks_size(), " ranks, but the cp group has ",
                                                   group->Size()));
  }
  cp.method = planned.method() == ir::CONTEXT_PARALLEL_METHOD_ULYSSES ? ContextMethod::kUlysses : ContextMethod::kRing;
  cp.chunks = planned.chunks();
  for (const ir::CpRankChunks& r : planned.ranks()) cp.rank_chunks.emplace_back(r.chunks().begin(), r.chunks().end());
  cp.group = std::move(group);
  return cp;
}

absl::StatusOr<std::unique_ptr<Trainer>> CreateTrainer(const ir::Plan& plan,
                                                       const std::shared_ptr<CausalLm>& model,
                                                       const TrainerOptions& options,
                                                       const ProcessGroups& groups, int rank,
                                                       const TensorParallel& tp,
                                                       std::shared_ptr<Communicator> tp_kv) {
  const auto& recompute = plan.training().recompute_modules();
  const auto& kept = plan.training().recompute_kept_outputs();
  ACCEL_RETURN_IF_ERROR(model->SetRecomputeModules({recompute.begin(), recompute.end()}, {kept.begin(), kept.end()}));
  model->set_loss_chunks(plan.training().loss_chunks());
  ACCEL_ASSIGN_OR_RETURN(ContextParallel cp, ContextParallelFromPlan(plan, groups.Get("cp")));
  model->set_context_parallel(std::move(cp));
  std::vector<std::pair<std::string, int64_t>> names;
  for (const auto& item : model->named_parameters()) names.emplace_back(item.key(), item.value().numel());
  ACCEL_ASSIGN_OR_RETURN(ShardLayout layout,
                         ShardLayout::FromPlan(plan.sharding(), plan.ranks(rank).stage(), names,
                                               groups.RankIn("dp_shard"), groups.RankIn("ep_dp")));
  ACCEL_RETURN_IF_ERROR(CheckLocalExperts(plan, rank, *model));
  ACCEL_RETURN_IF_ERROR(CheckTensorParallelSplits(*model, layout));
  DataParallelGroups dp;
  dp.dp = groups.Get("dp");
  dp.dp_shard = groups.Get("dp_shard");
  dp.dp_replicate = groups.Get("dp_replicate");
  dp.ep = groups.Get("ep");
  dp.ep_dp = groups.Get("ep_dp");
  dp.tp = tp.group;
  dp.replicated.sequence = tp.sequence_sharded() ? tp.group : nullptr;
  dp.replicated.kv = std::move(tp_kv);
  dp.replicated.partial = tp.sequence_sharded() ? nullptr : tp.group;
  dp.replicated.context = model->context_parallel().group;
  GradSyncOptions sync;
  sync.reduce_dtype = ScalarTypeOf(plan.precision().reduce_dtype(), torch::kFloat);
  // With pp > 1 the head reads its own copy of a tied embedding, not the embeddings unit.
  const bool pipeline = plan.pipeline().stages_size() > 1;
  sync.tied_embeddings = plan.model().tie_word_embeddings() && !pipeline;
  const ir::Offload offload = plan.sharding().offload();
  sync.offload_optimizer = offload != ir::OFFLOAD_UNSPECIFIED && offload != ir::OFFLOAD_NONE;
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                         Trainer::Create(model, CausalLmLoss(), options, std::move(layout), std::move(dp), sync));
  if (pipeline) {
    ACCEL_ASSIGN_OR_RETURN(PipelineContext context,
                           PipelineContextFromPlan(plan, rank, groups.Get("pp"), groups.Get("embedding")));
    ACCEL_RETURN_IF_ERROR(trainer->SetPipeline(std::move(context)));
  }
  return trainer;
}

}  // namespace accel::exec
