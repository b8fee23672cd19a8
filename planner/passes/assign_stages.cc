// assign-stages: splits the transformer blocks across pipeline stages as evenly as possible
// (the first L mod p stages take one extra block, keeping the last stage, which also holds the
// head and the logits, the lightest), and counts each stage's parameters.
#include "ir/plan_access.h"
#include "planner/model_params.h"
#include "planner/pass.h"

namespace accel::planner {
namespace {

class AssignStagesPass : public Pass {
 public:
  std::string_view name() const override { return "assign-stages"; }

  void Run(PlanContext& context) override {
    ir::Plan& plan = context.plan();
    const int64_t pp = ir::AxisSize(plan, ir::Axis::kPp);
    const int64_t layers = plan.model().num_layers();
    const ir::ParameterCount& count = plan.model().parameters();
    const int64_t base = layers / pp, extra = layers % pp;

    ir::Pipeline* pipeline = plan.mutable_pipeline();
    pipeline->clear_stages();
    int64_t begin = 0;
    for (int64_t s = 0; s < pp; ++s) {
      const int64_t n = base + (s < extra ? 1 : 0);
      ir::PipelineStage* stage = pipeline->add_stages();
      stage->set_index(static_cast<int32_t>(s));
      stage->set_layer_begin(begin);
      stage->set_layer_end(begin + n);
      stage->set_has_embedding(s == 0);
      stage->set_has_lm_head(s == pp - 1);
      int64_t params = n * count.per_layer_count();
      if (s == 0) params += count.embedding_count() + count.position_embedding_count();
      if (s == pp - 1) params += count.final_norm_count() + count.lm_head_count();
      stage->set_parameter_count(params);
      begin += n;
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeAssignStagesPass() { return std::make_unique<AssignStagesPass>(); }

}  // namespace accel::planner
