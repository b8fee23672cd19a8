// build-shard-groups: the shard units (embeddings, one unit per transformer block, the head,
// which holds a copy of a tied word embedding when it is on another pipeline stage) with their
// Hugging Face parameters, and the gradient buckets of each stage, filled in the
// order gradients become ready in backward (last parameter first) and closed once they reach
// the bucket size, as PyTorch DDP's reducer does (planner/shard_layout.h). In summary mode the
// units and buckets are not written; the context keeps their per-stage totals instead.
#include "ir/enum_names.h"
#include "ir/plan_access.h"
#include "planner/memory_model.h"
#include "planner/model_params.h"
#include "planner/pass.h"
#include "planner/shard_layout.h"

namespace accel::planner {
namespace {

class BuildShardGroupsPass : public Pass {
 public:
  std::string_view name() const override { return "build-shard-groups"; }

  void Run(PlanContext& context) override {
    ir::Plan& plan = context.plan();
    const int64_t tp = ir::AxisSize(plan, ir::Axis::kTp);
    const ModelParams& params = context.ModelParamsFor(tp);
    const ir::Sharding& sharding = plan.sharding();
    const int64_t degree = std::max<int64_t>(1, sharding.degree());
    const int64_t expert_degree = sharding.expert_shard_degree();
    const bool stage3 = sharding.stage() == 3;
    const int64_t persistence = sharding.param_persistence_threshold_elements();
    // validate-spec wrote the dtype; fp32 if a hand-built plan left it unspecified.
    const int bytes = ir::DtypeBytes(plan.precision().reduce_dtype());
    const int64_t bytes_per = bytes > 0 ? bytes : 4;
    const bool tied = plan.model().tie_word_embeddings();
    if (context.summary_only()) {
      ShardTotalsCache* cache = context.shard_totals_cache();
      std::vector<int64_t> key;
      if (cache != nullptr) {
        // Everything the totals are computed from: the parameter table (one per model and tp
        // in the shared ModelParamsCache, so its address names it), the stages' blocks and
        // the sharding numbers.
        key = {reinterpret_cast<int64_t>(&params), degree, expert_degree, stage3, persistence,
               sharding.bucket_elements(), bytes_per, tied};
        for (const ir::PipelineStage& st : plan.pipeline().stages()) {
          key.insert(key.end(), {st.index(), st.layer_begin(), st.layer_end(), st.has_embedding(),
                                 st.has_lm_head(), st.chunks_size()});
          for (const ir::ModelChunk& c : st.chunks()) {
            key.insert(key.end(), {c.virtual_stage(), c.layer_begin(), c.layer_end()});
          }
        }
        if (std::optional<ShardTotals> hit = cache->Find(key)) {
          context.set_shard_totals(std::move(*hit));
          return;
        }
      }
      const ShardLayout layout = LayOutUnits(params, plan.pipeline().stages(), tied);
      ShardTotals totals =
          ShardTotalsFromLayout(layout, degree, stage3, persistence, sharding.bucket_elements(),
                                bytes_per, tied, expert_degree);
      if (cache != nullptr) cache->Put(std::move(key), totals);
      context.set_shard_totals(std::move(totals));
      return;
    }
    const ShardLayout layout = LayOutUnits(params, plan.pipeline().stages(), tied);
    ir::Sharding* out = plan.mutable_sharding();
    out->clear_units();
    out->clear_buckets();
    for (const UnitLayout& unit : layout.units) {
      AddUnit(layout, unit, degree, expert_degree, stage3, persistence, *out->add_units());
    }
    AddBuckets(layout, bytes_per, *out);
  }

 private:
  static void AddUnit(const ShardLayout& layout, const UnitLayout& unit, int64_t degree,
                      int64_t expert_degree, bool stage3, int64_t persistence,
                      ir::ShardUnit& out) {
    out.set_name(unit.Name());
    out.set_stage(unit.stage);
    int64_t local = 0;
    int64_t shard = 0;
    for (int64_t i = 0; i < layout.Size(unit); ++i) {
      const ParamInfo& p = layout.Param(unit, i);
      ir::Parameter* param = out.add_parameters();
      param->set_name(p.name);
      for (int64_t d : p.shape) param->add_shape(d);
      param->set_count(p.count);
      param->set_tp_dim(p.tp_dim);
      if (p.tp_parts > 1) param->set_tp_parts(p.tp_parts);
      if (p.tp_replicas > 1) param->set_tp_replicas(p.tp_replicas);
      param->set_local_count(p.local_count);
      param->set_shard_count(ShardCount(p, degree, expert_degree));
      param->set_routed_expert(p.routed_expert);
      param->set_tp_partial_grad(p.tp_partial_grad);
      param->set_persistent(stage3 && p.local_count <= persistence);
      local += p.local_count;
      shard += param->shard_count();
    }
    if (unit.tied_copy) {
      // The copy's gradients are summed with the embedding's (Parameter.tied_to).
      out.mutable_parameters(out.parameters_size() - 1)
          ->set_tied_to(layout.units.front().params->front().name);
    }
    out.set_local_count(local);
    out.set_shard_count(shard);
  }

  static void AddBuckets(const ShardLayout& layout, int64_t bytes_per, ir::Sharding& sharding) {
    ir::Bucket* bucket = nullptr;
    WalkBuckets(layout, sharding.bucket_elements(),
                [&](const ParamInfo& param, int32_t stage, bool opens) {
                  if (opens) {
                    bucket = sharding.add_buckets();
                    bucket->set_index(sharding.buckets_size() - 1);
                    bucket->set_stage(stage);
                    bucket->set_routed_experts(param.routed_expert);
                  }
                  bucket->add_parameters(param.name);
                  bucket->set_elements(bucket->elements() + param.local_count);
                  bucket->set_bytes(bucket->elements() * bytes_per);
                });
  }
};

}  // namespace

std::unique_ptr<Pass> MakeBuildShardGroupsPass() {
  return std::make_unique<BuildShardGroupsPass>();
}

}  // namespace accel::planner
