#include "planner/step_time_estimator.h"

#include <algorithm>

#include "common/status_macros.h"
#include "planner/device_profiles.h"
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
  const double forward = static_cast<double>(plan.model().num_layers()) *
                             LayerForwardFlops(plan.model(), b.seq_len(), micro, 1, 1).Total() +
                         HeadForwardFlops(plan.model(), b.seq_len(), micro, 1, 1);
  return executions * (forward + BackwardFlops(forward));
}

}  // namespace

absl::StatusOr<ir::StepTimeEstimate> EstimateStepTime(const ir::Plan& plan,
                                                      const ir::DeviceProfile& profile) {
  ir::StepTimeEstimate out;
  *out.mutable_profile() = profile;
  ACCEL_ASSIGN_OR_RETURN(std::vector<ir::StageComputeTime> stages,
                         StageComputeTimes(plan, profile));
  const double m = static_cast<double>(std::max<int64_t>(plan.batch().grad_accum_steps(), 1));
  double worst = -1;
  std::vector<ir::CommunicationTime> worst_terms;
  for (const ir::StageComputeTime& st : stages) {
    const double flops = st.forward_flops() + st.backward_flops() + st.recompute_flops();
    const double backward_share = flops > 0 ? (st.backward_flops() + st.recompute_flops()) / flops : 0;
    const double backward_per_microstep = st.seconds() * backward_share / m;
    ACCEL_ASSIGN_OR_RETURN(std::vector<ir::CommunicationTime> terms,
                           StageCommunication(plan, profile, st.stage(), backward_per_microstep));
    const double total = st.seconds() + ExposedSeconds(terms);
    if (total > worst) {
      worst = total;
      out.set_slowest_stage(st.stage());
      out.set_compute_seconds(st.seconds());
      worst_terms = std::move(terms);
    }
    *out.add_stages() = st;
  }
  double communication = 0;
  for (ir::CommunicationTime& t : worst_terms) {
    communication += t.seconds();
    *out.add_communication() = std::move(t);
  }
  out.set_communication_seconds(communication);
  out.set_exposed_communication_seconds(ExposedSeconds({out.communication().begin(), out.communication().end()}));
  const double stage_seconds = out.compute_seconds() + out.exposed_communication_seconds();
  const double f = plan.pipeline().stages_size() > 1 ? plan.pipeline().bubble_fraction() : 0.0;
  out.set_bubble_seconds(f > 0 && f < 1 ? f / (1 - f) * stage_seconds : 0.0);
  out.set_step_seconds(stage_seconds + out.bubble_seconds());
  if (out.step_seconds() > 0) {
    out.set_tokens_per_second(static_cast<double>(plan.batch().tokens_per_step()) / out.step_seconds());
  }
  out.set_model_flops_per_step(ModelFlopsPerStep(plan));
  const double peak = MatmulPeakFlopsPerSecond(profile, plan.precision().compute_dtype()) *
                      WorkerShare(profile, plan.topology().devices_per_node());
  const double world = static_cast<double>(std::max<int64_t>(plan.topology().world_size(), 1));
  if (out.step_seconds() > 0 && peak > 0) {
    out.set_mfu(out.model_flops_per_step() / (out.step_seconds() * world * peak));
  }
  return out;
}

}  // namespace accel::planner
