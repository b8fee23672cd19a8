// assign-stages: splits the transformer blocks across pipeline stages as evenly as possible
// (the first L mod p stages take one extra block, keeping the last stage, which also holds the
// head and the logits, the lightest), and counts each stage's parameters. Interleaved (v model
// chunks per stage): the blocks are split so over the p·v virtual stages, and stage s holds
// virtual stages s, p + s, …, (v − 1)·p + s (Megatron-LM's virtual pipeline layout); under zbv
// s and 2p − 1 − s (the V, ir::ScheduledVirtualStage), so stage 0 holds the head too.
#include <algorithm>

#include "ir/plan_access.h"
#include "planner/model_params.h"
#include "planner/moe_layers.h"
#include "planner/pass.h"

namespace accel::planner {
namespace {

class AssignStagesPass : public Pass {
 public:
  std::string_view name() const override { return "assign-stages"; }

  void Run(PlanContext& context) override {
    ir::Plan& plan = context.plan();
    const int64_t pp = ir::AxisSize(plan, ir::Axis::kPp);
    ir::Pipeline* pipeline = plan.mutable_pipeline();
    const int64_t v = ir::VirtualStages(*pipeline);
    const int64_t layers = plan.model().num_layers();
    const ir::ParameterCount& count = plan.model().parameters();
    // Virtual stage k (chunk c of stage s, ir::ScheduledVirtualStage) takes the k-th run of blocks.
    const int64_t parts = pp * v, base = layers / parts, extra = layers % parts;
    auto begin_of = [&](int64_t k) { return k * base + std::min(k, extra); };
    const ir::PipelineSchedule schedule = pipeline->schedule();
    const int64_t head_stage =
        ir::ScheduledStageOf(schedule, static_cast<int32_t>(pp), static_cast<int32_t>(parts - 1));

    pipeline->clear_stages();
    for (int64_t s = 0; s < pp; ++s) {
      ir::PipelineStage* stage = pipeline->add_stages();
      stage->set_index(static_cast<int32_t>(s));
      int64_t blocks = 0, moe_blocks = 0;
      for (int64_t c = 0; c < v; ++c) {
        const int64_t k = ir::ScheduledVirtualStage(schedule, static_cast<int32_t>(pp),
                                                    static_cast<int32_t>(s), static_cast<int32_t>(c));
        if (c == 0) {
          stage->set_layer_begin(begin_of(k));
          stage->set_layer_end(begin_of(k + 1));
        }
        if (v > 1) {
          ir::ModelChunk* chunk = stage->add_chunks();
          chunk->set_virtual_stage(static_cast<int32_t>(k));
          chunk->set_layer_begin(begin_of(k));
          chunk->set_layer_end(begin_of(k + 1));
        }
        blocks += begin_of(k + 1) - begin_of(k);
        moe_blocks += MoeBlocksIn(plan.model(), begin_of(k), begin_of(k + 1));
      }
      stage->set_has_embedding(s == 0);
      stage->set_has_lm_head(s == head_stage);
      // In a mixture-of-experts model per_layer_count is an MoE block's, the dense blocks have
      // their own count.
      int64_t params = HasMoe(plan.model())
                           ? moe_blocks * count.per_layer_count() +
                                 (blocks - moe_blocks) * count.dense_per_layer_count()
                           : blocks * count.per_layer_count();
      if (s == 0) params += count.embedding_count() + count.position_embedding_count();
      if (s == head_stage) params += count.final_norm_count() + count.lm_head_count();
      stage->set_parameter_count(params);
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeAssignStagesPass() { return std::make_unique<AssignStagesPass>(); }

}  // namespace accel::planner
