// schedule-pipeline: the ordered operations of each stage for one optimizer step (GPipe, 1F1B,
// interleaved 1F1B, ZB-H1 or ZBV as planner/pipeline_schedules.h writes them) and what travels
// between stages.
// Summary mode records the activations in flight without the op lists.
#include "ir/plan_access.h"
#include "planner/pass.h"
#include "planner/pipeline_schedules.h"

namespace accel::planner {
namespace {

class SchedulePipelinePass : public Pass {
 public:
  std::string_view name() const override { return "schedule-pipeline"; }

  void Run(PlanContext& context) override {
    ir::Pipeline* pipeline = context.plan().mutable_pipeline();
    ScheduleShape shape;
    shape.schedule = pipeline->schedule();
    shape.stages = pipeline->stages_size();
    shape.virtual_stages = ir::VirtualStages(*pipeline);
    shape.microbatches = static_cast<int32_t>(pipeline->microbatches());
    SetActivation(context.plan(), *pipeline);
    for (int32_t s = 0; s < shape.stages; ++s) {
      ir::PipelineStage* stage = pipeline->mutable_stages(s);
      if (context.summary_only()) {
        // Summary mode records the activations in flight without the op lists.
        stage->clear_ops();
        stage->set_max_inflight_microbatches(static_cast<int32_t>(InflightMicrobatches(shape, s)));
        stage->set_max_pending_weight_grads(static_cast<int32_t>(PendingWeightGrads(shape, s)));
        continue;
      }
      WriteStageOps(shape, s, *stage);
    }
  }

 private:
  // What travels between stages: the residual stream of one microbatch, this cp rank's s / cp
  // tokens under context parallelism, sequence-sharded under sequence parallelism, in the
  // parameter dtype.
  static void SetActivation(const ir::Plan& plan, ir::Pipeline& pipeline) {
    pipeline.clear_activation_shape();
    pipeline.clear_activation_dtype();
    if (pipeline.stages_size() < 2) return;
    const int64_t tp = ir::AxisSize(plan, ir::Axis::kTp);
    const int64_t seq = plan.batch().seq_len() / std::max<int64_t>(ir::AxisSize(plan, ir::Axis::kCp), 1);
    pipeline.add_activation_shape(plan.batch().micro_batch_size());
    pipeline.add_activation_shape(plan.mesh().sequence_parallel() && tp > 1 ? seq / tp : seq);
    pipeline.add_activation_shape(plan.model().hidden_size());
    pipeline.set_activation_dtype(plan.precision().param_dtype());
  }
};

}  // namespace

std::unique_ptr<Pass> MakeSchedulePipelinePass() {
  return std::make_unique<SchedulePipelinePass>();
}

}  // namespace accel::planner
