#include "ir/plan_access.h"

#include <algorithm>

namespace accel::ir {

std::string_view AxisName(Axis axis) {
  switch (axis) {
    case Axis::kPp: return "pp";
    case Axis::kDpReplicate: return "dp_replicate";
    case Axis::kDpShard: return "dp_shard";
    case Axis::kCp: return "cp";
    case Axis::kTp: return "tp";
  }
  return "";
}

int64_t AxisSize(const Plan& plan, Axis axis) {
  const std::string_view name = AxisName(axis);
  for (const MeshAxis& a : plan.mesh().axes()) {
    if (a.name() == name) return a.size();
  }
  return 1;
}

const ProcessGroupSet* FindGroupSet(const Plan& plan, std::string_view name) {
  for (const ProcessGroupSet& set : plan.process_groups()) {
    if (set.name() == name) return &set;
  }
  return nullptr;
}

std::vector<int> GroupOf(const Plan& plan, std::string_view name, int rank) {
  const ProcessGroupSet* set = FindGroupSet(plan, name);
  if (set == nullptr) return {};
  for (const RankGroup& group : set->groups()) {
    for (int32_t r : group.ranks()) {
      if (r == rank) return std::vector<int>(group.ranks().begin(), group.ranks().end());
    }
  }
  return {};
}

std::vector<ModelChunk> StageChunks(const PipelineStage& stage) {
  if (stage.chunks_size() > 0) return {stage.chunks().begin(), stage.chunks().end()};
  ModelChunk chunk;
  chunk.set_virtual_stage(stage.index());
  chunk.set_layer_begin(stage.layer_begin());
  chunk.set_layer_end(stage.layer_end());
  return {chunk};
}

int64_t StageLayerCount(const PipelineStage& stage) {
  int64_t layers = 0;
  for (const ModelChunk& c : StageChunks(stage)) layers += std::max<int64_t>(c.layer_end() - c.layer_begin(), 0);
  return layers;
}

int64_t LargestChunkLayers(const PipelineStage& stage) {
  int64_t layers = 0;
  for (const ModelChunk& c : StageChunks(stage)) layers = std::max(layers, c.layer_end() - c.layer_begin());
  return layers;
}

std::string StageLayersText(const PipelineStage& stage, std::string_view dash) {
  std::string text;
  for (const ModelChunk& c : StageChunks(stage)) {
    if (!text.empty()) text += ", ";
    text += std::to_string(c.layer_begin());
    if (c.layer_end() - 1 != c.layer_begin()) text += std::string(dash) + std::to_string(c.layer_end() - 1);
  }
  return text;
}

int32_t VirtualStages(const Pipeline& pipeline) { return std::max(pipeline.virtual_stages(), 1); }

int32_t ScheduledVirtualStage(PipelineSchedule schedule, int32_t p, int32_t stage, int32_t chunk) {
  const bool mirrored = schedule == PIPELINE_SCHEDULE_ZBV && chunk % 2 == 1;
  return chunk * p + (mirrored ? p - 1 - stage : stage);
}

int32_t ScheduledStageOf(PipelineSchedule schedule, int32_t p, int32_t vs) {
  const int32_t chunk = vs / p, offset = vs % p;
  return schedule == PIPELINE_SCHEDULE_ZBV && chunk % 2 == 1 ? p - 1 - offset : offset;
}

int64_t KvHeadReplicas(int64_t kv_heads, int64_t tp) {
  return kv_heads > 0 && tp > kv_heads && tp % kv_heads == 0 ? tp / kv_heads : 1;
}

Dtype ComputeDtype(const Precision& precision) {
  return precision.compute_dtype() == DTYPE_UNSPECIFIED ? precision.param_dtype()
                                                        : precision.compute_dtype();
}

int64_t VocabRows(const Model& model) {
  return model.padded_vocab_size() > 0 ? model.padded_vocab_size() : model.vocab_size();
}

int64_t KvHeads(const Model& model) { return model.num_kv_heads() > 0 ? model.num_kv_heads() : model.num_heads(); }

int64_t FfnSize(const Model& model) {
  return model.ffn_hidden_size() > 0 ? model.ffn_hidden_size() : 4 * model.hidden_size();
}

std::string ExpertRangeText(int64_t begin, int64_t end) {
  if (end <= begin) return "";
  if (end == begin + 1) return "expert " + std::to_string(begin);
  return "experts " + std::to_string(begin) + "\u2013" + std::to_string(end - 1);
}

}  // namespace accel::ir
