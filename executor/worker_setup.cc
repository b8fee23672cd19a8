#include "executor/worker_setup.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "data/plan_tokens.h"
#include "executor/models/stage_span.h"
#include "executor/plan_agreement.h"
#include "executor/plan_dtype.h"
#include "executor/worker_log.h"
#include "ir/enum_names.h"
#include "common/route_address.h"
#include "ir/plan_verifier.h"
#include "launcher/plan_support.h"

namespace accel::exec {
namespace {

RendezvousOptions RendezvousOptionsFor(const ir::Plan& plan, const WorkerEnv& env,
                                       const WorkerOptions& options) {
  RendezvousOptions rendezvous_options;
  rendezvous_options.master_addr = env.master_addr;
  rendezvous_options.master_port = env.master_port;
  rendezvous_options.world_size = env.world_size;
  rendezvous_options.rank = env.rank;
  rendezvous_options.timeout = CollectiveTimeout(plan, options);
  rendezvous_options.job_token = env.job_token;
  rendezvous_options.agent_store = env.agent_store;
  rendezvous_options.attempt = env.restart_count;
  rendezvous_options.store_file = env.store_file;
  // Multi-node: Gloo listens on the address the route to the master leaves from, not on whatever
  // the host name resolves to (127.0.1.1 on a default Debian install). Loopback masters keep
  // 127.0.0.1 (Rendezvous); where no route is found, LibTorch's default stays.
  if (env.store_file.empty()) {
    if (absl::StatusOr<std::string> local = LocalAddressToward(env.master_addr);
        local.ok() && !absl::StartsWith(*local, "127.") && *local != "::1") {
      rendezvous_options.gloo_hostname = *local;
    }
  }
  return rendezvous_options;
}

}  // namespace

absl::Status CheckPlanMatchesEnv(const ir::Plan& plan, const WorkerEnv& env) {
  if (plan.ir_version() != ir::IR_VERSION_CURRENT) {
    return absl::InvalidArgumentError(absl::StrCat("plan has ir_version ", plan.ir_version(),
                                                   "; this executor reads ",
                                                   ir::IR_VERSION_CURRENT));
  }
  if (plan.topology().world_size() != env.world_size ||
      plan.ranks_size() != env.world_size) {
    return absl::InvalidArgumentError(absl::StrCat("the plan has world size ",
                                                   plan.topology().world_size(),
                                                   " but WORLD_SIZE=", env.world_size));
  }
  const ir::RankPlacement& placement = plan.ranks(env.rank);
  if (placement.rank() != env.rank || placement.node() != env.node_rank ||
      placement.local_rank() != env.local_rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plan places rank ", env.rank, " on node ", placement.node(), " local rank ",
        placement.local_rank(), ", but NODE_RANK=", env.node_rank, " LOCAL_RANK=",
        env.local_rank));
  }
  return absl::OkStatus();
}

absl::Status CheckPlanRunnable(const ir::Plan& plan) {
  std::vector<std::string> problems = ir::VerifyPlan(plan);
  if (!problems.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan does not verify: ", absl::StrJoin(problems, "; ")));
  }
  std::vector<std::string> messages;
  for (const SupportIssue& issue : ExecutorSupportIssues(plan, ExecutorCapabilitiesOfThisBuild())) {
    messages.push_back(issue.message);
  }
  if (!messages.empty()) return absl::InvalidArgumentError(absl::StrJoin(messages, "; "));
  return absl::OkStatus();
}

absl::StatusOr<WorkerGroups> JoinGroups(const ir::Plan& plan, const WorkerEnv& env,
                                        const WorkerOptions& options, const c10::Device& device) {
  const CommBackend backend = plan.job().backend() == ir::BACKEND_NCCL ? CommBackend::kNccl
                                                            : CommBackend::kGloo;
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<Rendezvous> rendezvous,
                         Rendezvous::Connect(RendezvousOptionsFor(plan, env, options)));
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> world, rendezvous->CreateWorld(backend));
  ACCEL_RETURN_IF_ERROR(CheckSamePlanOnEveryRank(plan, *world, device));
  ACCEL_ASSIGN_OR_RETURN(ProcessGroups groups,
                         ProcessGroups::Create(plan, env.rank, *rendezvous, world, backend));
  const int dp_size = groups.SizeOf("dp");
  if (dp_size != plan.batch().data_parallel_size()) {
    return absl::InvalidArgumentError(absl::StrCat("the plan's dp groups have ", dp_size,
                                                   " ranks but batch.data_parallel_size is ",
                                                   plan.batch().data_parallel_size()));
  }
  return WorkerGroups{std::move(rendezvous), std::move(world), std::move(groups)};
}

TimedTensorParallel TimeTensorParallel(const ir::Plan& plan, const ProcessGroups& groups) {
  TimedTensorParallel out;
  out.tp = TensorParallel{groups.Get("tp"), plan.mesh().sequence_parallel()};
  out.tp_kv = groups.Get("tp_kv");
  // Every tp collective (the model's, the trainer's replicated gradients and gradient norm) is
  // timed for metrics.jsonl and the summary.
  if (out.tp.enabled()) {
    out.timer = std::make_shared<CollectiveTimer>();
    out.tp.group = WithTimer(out.tp.group, out.timer);
    if (out.tp_kv != nullptr) out.tp_kv = WithTimer(out.tp_kv, out.timer);
  }
  return out;
}

absl::StatusOr<std::shared_ptr<CausalLm>> BuildRankModel(const ir::Plan& plan, int rank,
                                                         const ModelConfig& config,
                                                         const TensorParallel& tp,
                                                         const c10::Device& device,
                                                         std::shared_ptr<Communicator> ep) {
  const uint64_t seed = static_cast<uint64_t>(plan.training().seed());
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<CausalLm> model,
                         BuildCausalLm(config, seed, tp, {}, StageSpanFromPlan(plan, rank), std::move(ep)));
  model->to(device, ScalarTypeOf(plan.precision().param_dtype(), torch::kFloat));
  return model;
}

absl::StatusOr<RankData> LoadRankData(const ir::Plan& plan, const ProcessGroups& groups) {
  // Text with a real tokenizer is encoded here, on this rank's intra-op threads
  // (data/plan_tokens.h says why in memory and why that is deterministic).
  ACCEL_ASSIGN_OR_RETURN(std::vector<uint32_t> tokens,
                         LoadPlanTokens(plan.data(), plan.model().vocab_size(), at::get_num_threads()));
  RankData data;
  data.token_count = tokens.size();
  WindowDatasetOptions data_options;
  data_options.seq_len = plan.batch().seq_len();
  data_options.seed = static_cast<uint64_t>(plan.training().seed());
  data_options.shuffle = plan.data().shuffle();
  data_options.dp_rank = groups.RankIn("dp");
  data_options.dp_size = groups.SizeOf("dp");
  ACCEL_ASSIGN_OR_RETURN(data.dataset,
                         WindowDataset::Create(std::move(tokens), data_options, plan.data().path()));
  return data;
}

void LogRankSetup(const ir::Plan& plan, const WorkerEnv& env, const Communicator& world,
                  const c10::Device& device, const RankData& data) {
  WorkerLog(absl::StrFormat(
      "rank %d/%d (node %d, local rank %d): %s on %s, intra-op threads %d; model %s with %d "
      "parameters; data %s: %d tokens, %d windows of %d, %d per rank per epoch",
      env.rank, env.world_size, env.node_rank, env.local_rank, world.BackendName(),
      device.str(), at::get_num_threads(), std::string(ir::Name(plan.model().arch())),
      plan.model().parameters().total_count(),
      plan.data().path(), data.token_count, data.dataset->NumWindows(), plan.batch().seq_len(),
      data.dataset->WindowsPerRank()));
}

}  // namespace accel::exec
