// build-shard-groups: the shard units (embeddings, one unit per transformer block, the head,
// which holds a copy of a tied word embedding when it is on another pipeline stage) with their
// Hugging Face parameters, and the gradient buckets of each stage, filled in the
// order gradients become ready in backward (last parameter first) and closed once they reach
// the bucket size, as PyTorch DDP's reducer does.
#include "ir/plan_access.h"
#include "planner/memory_model.h"
#include "planner/model_params.h"
#include "planner/pass.h"

namespace accel::planner {
namespace {

class BuildShardGroupsPass : public Pass {
 public:
  std::string_view name() const override { return "build-shard-groups"; }

  void Run(PlanContext& context) override {
    ir::Plan& plan = context.plan();
    const int64_t tp = ir::AxisSize(plan, ir::Axis::kTp);
    const int64_t degree = std::max<int64_t>(1, plan.sharding().degree());
    const bool stage3 = plan.sharding().stage() == 3;
    const int64_t persistence = plan.sharding().param_persistence_threshold_elements();
    ModelParams params = BuildModelParams(plan.model(), tp);
    ir::Sharding* sharding = plan.mutable_sharding();
    sharding->clear_units();
    sharding->clear_buckets();

    auto add_unit = [&](const std::string& name, int32_t stage,
                        const std::vector<ParamInfo>& list) {
      ir::ShardUnit* unit = sharding->add_units();
      unit->set_name(name);
      unit->set_stage(stage);
      int64_t local = 0;
      int64_t shard = 0;
      for (const ParamInfo& p : list) {
        ir::Parameter* out = unit->add_parameters();
        out->set_name(p.name);
        for (int64_t d : p.shape) out->add_shape(d);
        out->set_count(p.count);
        out->set_tp_dim(p.tp_dim);
        if (p.tp_parts > 1) out->set_tp_parts(p.tp_parts);
        out->set_local_count(p.local_count);
        out->set_shard_count((p.local_count + degree - 1) / degree);
        out->set_persistent(stage3 && p.local_count <= persistence);
        local += p.local_count;
        shard += out->shard_count();
      }
      unit->set_local_count(local);
      unit->set_shard_count(shard);
    };

    const auto& stages = plan.pipeline().stages();
    const int32_t last = static_cast<int32_t>(stages.size()) - 1;
    add_unit("embeddings", 0, params.embedding);
    // Stage by stage (each stage's chunks in order when interleaved), so a stage's units are
    // consecutive and in the order its module registers them.
    for (const ir::PipelineStage& stage : stages) {
      for (const ir::ModelChunk& chunk : ir::StageChunks(stage)) {
        for (int64_t l = chunk.layer_begin(); l < chunk.layer_end(); ++l) {
          add_unit("layers." + std::to_string(l), stage.index(), params.layers[l]);
        }
      }
    }
    std::vector<ParamInfo> head = params.head;
    // A tied head on a last stage without the embedding holds its own copy of the word
    // embedding (Megatron-LM): same shape and split, summed gradients (Parameter.tied_to).
    const bool tied_copy = plan.model().tie_word_embeddings() && last > 0;
    if (tied_copy) {
      head.push_back(params.embedding.front());
      head.back().name = "lm_head.weight";
    }
    add_unit("head", last, head);
    if (tied_copy) {
      ir::ShardUnit* unit = sharding->mutable_units(sharding->units_size() - 1);
      unit->mutable_parameters(unit->parameters_size() - 1)->set_tied_to(params.embedding.front().name);
    }

    const int64_t cap = sharding->bucket_elements();
    // validate-spec wrote a known dtype name; fp32 if a hand-built plan left it empty.
    const int64_t bytes_per = DTypeBytesByName(plan.precision().reduce_dtype()).value_or(4);
    // The units were added in stage order (embeddings, blocks stage by stage, head), so one
    // walk from the last unit visits the stages last to first in linear time; a bucket never
    // spans two stages.
    int32_t index = 0;
    ir::Bucket* bucket = nullptr;
    for (int u = sharding->units_size() - 1; u >= 0; --u) {
      const ir::ShardUnit& unit = sharding->units(u);
      if (bucket != nullptr && bucket->stage() != unit.stage()) bucket = nullptr;
      for (int p = unit.parameters_size() - 1; p >= 0; --p) {
        const ir::Parameter& param = unit.parameters(p);
        if (bucket == nullptr) {
          bucket = sharding->add_buckets();
          bucket->set_index(index++);
          bucket->set_stage(unit.stage());
        }
        bucket->add_parameters(param.name());
        bucket->set_elements(bucket->elements() + param.local_count());
        bucket->set_bytes(bucket->elements() * bytes_per);
        if (bucket->elements() >= cap) bucket = nullptr;
      }
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeBuildShardGroupsPass() {
  return std::make_unique<BuildShardGroupsPass>();
}

}  // namespace accel::planner
