#include "executor/models/stage_span.h"

#include "ir/plan_access.h"

namespace accel::exec {

StageSpan StageSpanFromPlan(const ir::Plan& plan, int rank) {
  const ir::Pipeline& pipeline = plan.pipeline();
  if (pipeline.stages_size() <= 1) return {};
  const ir::PipelineStage& stage = pipeline.stages(plan.ranks(rank).stage());
  StageSpan span{stage.layer_begin(), stage.layer_end(), stage.has_embedding(), stage.has_lm_head(), {}};
  const std::vector<ir::ModelChunk> chunks = ir::StageChunks(stage);
  for (size_t c = 1; c < chunks.size(); ++c) span.later_chunks.emplace_back(chunks[c].layer_begin(), chunks[c].layer_end());
  return span;
}

}  // namespace accel::exec
