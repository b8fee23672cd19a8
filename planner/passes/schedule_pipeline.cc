// schedule-pipeline: the ordered operations of each stage for one optimizer step.
// GPipe (Huang et al. 2019): all forwards, then all backwards; every microbatch's activations
// stay alive until its backward, so m are in flight. 1F1B (PipeDream-Flush, Narayanan et al.
// 2021; Megatron-LM's default): stage s runs min(p − s − 1, m) warm-up forwards, then alternates
// one forward and one backward, then drains the remaining backwards, so at most p − s
// microbatches are in flight. Receives precede the compute that needs them; sends follow the
// compute that produced them and are asynchronous (isend), receives block. Summary mode records
// the in-flight microbatches without the op lists.
#include "ir/plan_access.h"
#include "planner/pass.h"

namespace accel::planner {
namespace {

class SchedulePipelinePass : public Pass {
 public:
  std::string_view name() const override { return "schedule-pipeline"; }

  void Run(PlanContext& context) override {
    ir::Pipeline* pipeline = context.plan().mutable_pipeline();
    const int32_t p = pipeline->stages_size();
    const int32_t m = static_cast<int32_t>(pipeline->microbatches());
    const bool gpipe = pipeline->schedule() == "gpipe";
    SetActivation(context.plan(), *pipeline);
    for (int32_t s = 0; s < p; ++s) {
      ir::PipelineStage* stage = pipeline->mutable_stages(s);
      stage->clear_ops();
      stage->set_max_inflight_microbatches(MaxInflight(p, s, m, gpipe));
      if (context.summary_only()) continue;
      auto forward = [&](int32_t mb) {
        if (s > 0) Add(stage, ir::RECV_ACTIVATION, mb, s - 1);
        Add(stage, ir::FORWARD, mb, -1);
        if (s < p - 1) Add(stage, ir::SEND_ACTIVATION, mb, s + 1);
      };
      auto backward = [&](int32_t mb) {
        if (s < p - 1) Add(stage, ir::RECV_GRAD, mb, s + 1);
        Add(stage, ir::BACKWARD, mb, -1);
        if (s > 0) Add(stage, ir::SEND_GRAD, mb, s - 1);
      };
      if (p == 1) {
        // No pipeline: gradient accumulation, one microbatch alive at a time.
        for (int32_t mb = 0; mb < m; ++mb) {
          forward(mb);
          backward(mb);
        }
      } else if (gpipe) {
        for (int32_t mb = 0; mb < m; ++mb) forward(mb);
        for (int32_t mb = 0; mb < m; ++mb) backward(mb);
      } else {
        const int32_t warmup = std::min(p - s - 1, m);
        for (int32_t mb = 0; mb < warmup; ++mb) forward(mb);
        for (int32_t i = 0; i < m - warmup; ++i) {
          forward(warmup + i);
          backward(i);
        }
        for (int32_t mb = m - warmup; mb < m; ++mb) backward(mb);
      }
    }
  }

 private:
  // Microbatches whose activations stage `s` of `p` holds at once with `m` microbatches: 1
  // without pipelining, m for GPipe, min(p − s, m) for 1F1B (see the file comment).
  static int32_t MaxInflight(int32_t p, int32_t s, int32_t m, bool gpipe) {
    if (p == 1) return 1;
    return gpipe ? m : std::min(p - s, m);
  }

  // What travels between stages: the residual stream of one microbatch, sequence-sharded under
  // sequence parallelism, in the parameter dtype.
  static void SetActivation(const ir::Plan& plan, ir::Pipeline& pipeline) {
    pipeline.clear_activation_shape();
    pipeline.clear_activation_dtype();
    if (pipeline.stages_size() < 2) return;
    const int64_t tp = ir::AxisSize(plan, ir::Axis::kTp);
    const int64_t seq = plan.batch().seq_len();
    pipeline.add_activation_shape(plan.batch().micro_batch_size());
    pipeline.add_activation_shape(plan.mesh().sequence_parallel() && tp > 1 ? seq / tp : seq);
    pipeline.add_activation_shape(plan.model().hidden_size());
    pipeline.set_activation_dtype(plan.precision().param_dtype());
  }

  static void Add(ir::PipelineStage* stage, ir::OpKind kind, int32_t microbatch, int32_t peer) {
    ir::PipelineOp* op = stage->add_ops();
    op->set_kind(kind);
    op->set_microbatch(microbatch);
    op->set_peer_stage(peer);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeSchedulePipelinePass() {
  return std::make_unique<SchedulePipelinePass>();
}

}  // namespace accel::planner
