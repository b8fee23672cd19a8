#include "planner/step_time_estimator.h"

#include <algorithm>

#include "common/status_macros.h"
#include "ir/plan_access.h"
#include "planner/device_profiles.h"
#include "planner/moe_layers.h"
#include "planner/step_communication.h"
#include "planner/step_compute.h"
#include "planner/step_flops.h"

namespace accel::planner {
namespace {

// Forward + backward FLOPs of the whole global batch at tp = cp = 1 (no recompute).
double ModelFlopsPerStep(const ir::Plan& plan) {
  const ir::Batch& b = plan.batch();
  const int64_t micro = std::max<int64_t>(b.micro_batch_size(), 1);
  const double executions = static_cast<double>(b.global_batch_size()) / static_cast<double>(micro);
  const ir::Model& model = plan.model();
  const int64_t moe = MoeBlocksIn(model, 0, model.num_layers());
  const double forward = static_cast<double>(moe) * LayerForwardFlops(model, b.seq_len(), micro, 1, 1).Total() +
                         static_cast<double>(model.num_layers() - moe) *
                             LayerForwardFlops(model, b.seq_len(), micro, 1, 1, /*moe_block=*/false).Total() +
                         HeadForwardFlops(model, b.seq_len(), micro, 1, 1);
  return executions * (forward + BackwardFlops(forward));
}

// The stage that sets the step: the largest compute + exposed communication (the first on
// ties), and the backward compute per micro-step its gradient buckets hide behind.
struct SlowestStage {
  int32_t stage = 0;
  double compute_seconds = 0;
  double backward_per_microstep = 0;
};

// True when the node's workers share its cores (a CPU device): each worker runs as many compute
// threads as its share of the cores (executor/blas_threads.h), so none is left idle.
bool BusyCores(const ir::DeviceProfile& profile) { return profile.shared_cores_per_node() > 0; }

SlowestStage FindSlowestStage(const ir::Plan& plan, const ir::DeviceProfile& profile,
                              const GroupLinks& links,
                              const ShardTotals& shards,
                              const std::vector<ir::StageComputeTime>& stages) {
  const double m = static_cast<double>(std::max<int64_t>(plan.batch().grad_accum_steps(), 1));
  double worst = -1;
  SlowestStage slowest;
  for (const ir::StageComputeTime& st : stages) {
    const double flops = st.forward_flops() + st.backward_flops() + st.recompute_flops();
    const double backward_share = flops > 0 ? (st.backward_flops() + st.recompute_flops()) / flops : 0;
    // The host optimizer step (offload) runs after backward: it hides no gradient bucket. Nor
    // does backward when the workers occupy every core they share (a CPU device): Gloo's copies
    // and reductions then run on the cores backward is using, so only the part of the buckets
    // the profile measured as hidden there hides (GroupLinks::shared_core_bucket_overlap).
    const double backward_per_microstep =
        BusyCores(profile) ? 0.0
                           : (st.seconds() - st.host_seconds() - st.optimizer_seconds()) *
                                 backward_share / m;
    const double total = st.seconds() + StageExposedSeconds(plan, links, shards.Stage(st.stage()),
                                                            st.stage(), backward_per_microstep);
    if (total > worst) {
      worst = total;
      slowest = {st.stage(), st.seconds(), backward_per_microstep};
    }
  }
  return slowest;
}

}  // namespace

double BubbleHiddenOnSharedCores(const ir::Plan& plan, const ir::DeviceProfile& profile) {
  const int64_t cores = profile.shared_cores_per_node();
  const int64_t workers = plan.topology().devices_per_node();
  const int64_t stages = plan.pipeline().stages_size();
  if (cores <= 0 || workers <= cores || stages <= 1) return 0.0;
  const int64_t per_stage = std::max<int64_t>(plan.topology().world_size() / stages, 1);
  const int64_t stage_on_node = std::min(workers, per_stage);
  return std::min(1.0, static_cast<double>(workers - stage_on_node) / static_cast<double>(cores));
}

absl::StatusOr<ir::StepTimeEstimate> EstimateStepTime(const ir::Plan& plan,
                                                      const ir::DeviceProfile& profile) {
  ir::StepTimeEstimate out;
  ACCEL_RETURN_IF_ERROR(EstimateStepTimeInto(plan, profile, ShardTotalsFromPlan(plan), true, out));
  return out;
}

absl::Status EstimateStepTimeInto(const ir::Plan& plan, const ir::DeviceProfile& profile,
                                  const ShardTotals& shards, bool explain,
                                  ir::StepTimeEstimate& out) {
  out.Clear();
  // The layout search (explain false) reads the times, not the profile they came from.
  if (explain) *out.mutable_profile() = profile;
  ACCEL_ASSIGN_OR_RETURN(std::vector<ir::StageComputeTime> stages,
                         StageComputeTimes(plan, profile, shards));
  const GroupLinks links(plan, profile);
  const SlowestStage slowest = FindSlowestStage(plan, profile, links, shards, stages);
  ACCEL_ASSIGN_OR_RETURN(std::vector<ir::CommunicationTime> terms,
                         StageCommunication(plan, links, shards.Stage(slowest.stage), slowest.stage,
                                            slowest.backward_per_microstep, explain));
  out.set_slowest_stage(slowest.stage);
  out.set_compute_seconds(slowest.compute_seconds);
  for (ir::StageComputeTime& st : stages) *out.add_stages() = std::move(st);
  double communication = 0;
  const double exposed = ExposedSeconds(terms);
  for (ir::CommunicationTime& t : terms) {
    communication += t.seconds();
    *out.add_communication() = std::move(t);
  }
  out.set_communication_seconds(communication);
  out.set_exposed_communication_seconds(exposed);
  const double stage_seconds = out.compute_seconds() + out.exposed_communication_seconds();
  const double f = plan.pipeline().stages_size() > 1 ? plan.pipeline().bubble_fraction() : 0.0;
  const double shown = 1.0 - BubbleHiddenOnSharedCores(plan, profile);
  out.set_bubble_seconds(f > 0 && f < 1 ? shown * f / (1 - f) * stage_seconds : 0.0);
  out.set_step_seconds(stage_seconds + out.bubble_seconds());
  if (out.step_seconds() > 0) {
    out.set_tokens_per_second(static_cast<double>(plan.batch().tokens_per_step()) / out.step_seconds());
  }
  out.set_model_flops_per_step(ModelFlopsPerStep(plan));
  const double peak = MatmulPeakFlopsPerSecond(profile, ir::ComputeDtype(plan.precision())) *
                      CoreShare(profile, plan.topology().devices_per_node());
  const double world = static_cast<double>(std::max<int64_t>(plan.topology().world_size(), 1));
  if (out.step_seconds() > 0 && peak > 0) {
    out.set_mfu(out.model_flops_per_step() / (out.step_seconds() * world * peak));
  }
  return absl::OkStatus();
}

}  // namespace accel::planner
