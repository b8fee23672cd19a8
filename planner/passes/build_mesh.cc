// build-mesh: strides of the mesh axes, the placement of every rank (node, local device, mesh
// coordinates, stage) and the process groups for every axis and combination the executor uses
// (planner/mesh_groups.h). Summary mode keeps the strides and skips the rank and group lists.
#include "common/diag_codes.h"
#include "ir/plan_access.h"
#include "planner/mesh_groups.h"
#include "planner/moe_layers.h"
#include "planner/pass.h"

namespace accel::planner {
namespace {

class BuildMeshPass : public Pass {
 public:
  std::string_view name() const override { return "build-mesh"; }

  void Run(PlanContext& context) override {
    ir::Plan& plan = context.plan();
    ir::Mesh* mesh = plan.mutable_mesh();
    const int n_axes = mesh->axes_size();
    std::vector<int64_t> sizes(n_axes);
    for (int i = 0; i < n_axes; ++i) sizes[i] = mesh->axes(i).size();
    // Row-major with tp innermost: stride(tp) = 1, stride(cp) = tp, ... (torchtitan's order; it
    // reproduces Megatron-LM's tp-dp-pp rank groups, docs/planner-facts.md §3).
    const std::vector<int64_t> strides = MeshStrides(sizes);
    for (int i = 0; i < n_axes; ++i) mesh->mutable_axes(i)->set_stride(strides[i]);
    const int64_t per_node = plan.topology().devices_per_node();
    WarnTensorParallelAcrossNodes(context, sizes[4], per_node);
    if (context.summary_only()) return;

    const int64_t world = n_axes > 0 ? strides[0] * sizes[0] : 1;
    AddRanks(sizes, strides, world, per_node, plan);
    plan.clear_process_groups();
    for (const GroupSetAxes& set : MeshGroupSets()) {
      BuildGroups(set, sizes, strides, world, plan.add_process_groups(), *mesh);
    }
    if (sizes[0] > 1 && plan.model().tie_word_embeddings()) {
      const ir::ProcessGroupSet* pp_set = nullptr;
      for (const ir::ProcessGroupSet& set : plan.process_groups()) {
        if (set.name() == "pp") pp_set = &set;
      }
      ir::ProcessGroupSet embedding = BuildEmbeddingGroups(*pp_set, sizes[0]);
      *plan.add_process_groups() = std::move(embedding);
    }
    if (HasMoe(plan.model())) AddExpertGroups(plan);
    const int64_t kv_replicas = plan.model().kv_head_replicas();
    if (kv_replicas > 1) {
      ir::ProcessGroupSet kv = BuildKvReplicaGroups(*ir::FindGroupSet(plan, "tp"), kv_replicas);
      *plan.add_process_groups() = std::move(kv);
    }
  }

 private:
  static void WarnTensorParallelAcrossNodes(PlanContext& context, int64_t tp, int64_t per_node) {
    if (tp <= 1 || (tp <= per_node && per_node % tp == 0)) return;
    const int64_t spans = tp > per_node ? (tp + per_node - 1) / per_node : 2;
    Diagnostic& d = context.Warning(
        codes::kTensorParallelCrossesNodes, "parallel.tensor",
        "tensor-parallel groups of " + std::to_string(tp) + " ranks span " +
            std::to_string(spans) + " nodes (devices_per_node is " + std::to_string(per_node) +
            "); tensor parallelism across nodes is bandwidth-bound");
    context.NoteField(d, "cluster.devices_per_node", "devices_per_node set here");
  }

  // Every rank's node, local device, mesh coordinates and stage (the pp coordinate).
  static void AddRanks(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                       int64_t world, int64_t per_node, ir::Plan& plan) {
    const int n_axes = static_cast<int>(sizes.size());
    auto* ranks = plan.mutable_ranks();
    ranks->Clear();
    ranks->Reserve(static_cast<int>(world));
    for (int64_t r = 0; r < world; ++r) {
      ir::RankPlacement* placement = ranks->Add();
      placement->set_rank(static_cast<int32_t>(r));
      placement->set_node(static_cast<int32_t>(r / per_node));
      placement->set_local_rank(static_cast<int32_t>(r % per_node));
      placement->mutable_coords()->Reserve(n_axes);
      for (int i = 0; i < n_axes; ++i) {
        placement->add_coords(static_cast<int32_t>((r / strides[i]) % sizes[i]));
      }
      placement->set_stage(placement->coords(0));
    }
  }

  // Mixture of experts: the "ep" and "ep_dp" sets (mesh_groups.h), each when its groups hold
  // more than one rank, and the routed experts each rank holds (ir::RankPlacement.expert_begin/expert_end).
  static void AddExpertGroups(ir::Plan& plan) {
    const std::array<int64_t, 5> sizes = MeshAxisSizes(plan.mesh());
    const int64_t ep = ExpertParallel(plan.model());
    const int64_t carved = sizes[2] * sizes[3];
    for (const bool data_parallel : {false, true}) {
      // A set of single-rank groups communicates nothing; like other partial sets it is left out.
      if ((data_parallel ? carved / ep : ep) < 2) continue;
      ir::ProcessGroupSet* set = plan.add_process_groups();
      set->set_name(data_parallel ? kExpertDataParallelSet : kExpertParallelSet);
      set->add_axes("dp_shard");
      set->add_axes("cp");
      // A group holds part of each dp_shard × cp combination: flagged partial like "tp_kv".
      set->set_partial(true);
      for (const std::vector<int32_t>& ranks : ExpertGroups(sizes, ep, data_parallel)) {
        ir::RankGroup* group = set->add_groups();
        for (int32_t r : ranks) group->add_ranks(r);
      }
    }
    const int64_t experts = plan.model().moe().num_experts();
    for (ir::RankPlacement& placement : *plan.mutable_ranks()) {
      const ExpertRange range =
          ExpertsOfRank(experts, ep, ExpertParallelRank(sizes, ep, placement.rank()));
      placement.set_expert_begin(static_cast<int32_t>(range.begin));
      placement.set_expert_end(static_cast<int32_t>(range.end));
    }
  }

  // The first and the last rank of every pipeline ("pp" group, ranks ascending by stage): the
  // tied word embedding and its copy on the last stage (Megatron-LM's embedding group).
  static ir::ProcessGroupSet BuildEmbeddingGroups(const ir::ProcessGroupSet& pp_set, int64_t pp) {
    ir::ProcessGroupSet out;
    out.set_name("embedding");
    out.add_axes("pp");
    out.set_partial(true);
    for (const ir::RankGroup& pipeline : pp_set.groups()) {
      ir::RankGroup* group = out.add_groups();
      group->add_ranks(pipeline.ranks(0));
      group->add_ranks(pipeline.ranks(static_cast<int>(pp) - 1));
    }
    return out;
  }

  // Each tp group cut into runs of `replicas` consecutive ranks: tp ranks R·j … R·j + R − 1
  // hold key/value head j (ir::Model.kv_head_replicas).
  static ir::ProcessGroupSet BuildKvReplicaGroups(const ir::ProcessGroupSet& tp_set,
                                                  int64_t replicas) {
    ir::ProcessGroupSet out;
    out.set_name("tp_kv");
    out.add_axes("tp");
    out.set_partial(true);
    for (const ir::RankGroup& tp : tp_set.groups()) {
      for (int begin = 0; begin < tp.ranks_size(); begin += static_cast<int>(replicas)) {
        ir::RankGroup* group = out.add_groups();
        for (int i = begin; i < begin + replicas && i < tp.ranks_size(); ++i) {
          group->add_ranks(tp.ranks(i));
        }
      }
    }
    return out;
  }

  // Enumerates the groups of one set: a group is the ranks that differ only in `set.axes`.
  // Groups are ordered by their smallest rank and ranks ascend within a group, because strides
  // decrease from outer to inner axes.
  static void BuildGroups(const GroupSetAxes& set, const std::vector<int64_t>& sizes,
                          const std::vector<int64_t>& strides, int64_t world,
                          ir::ProcessGroupSet* out, const ir::Mesh& mesh) {
    out->set_name(set.name);
    int64_t group_size = 1;
    std::vector<bool> in_set(sizes.size(), false);
    for (int a : set.axes) {
      out->add_axes(mesh.axes(a).name());
      group_size *= sizes[a];
      in_set[a] = true;
    }
    // Offsets of a group's members relative to its base rank, ascending.
    std::vector<int64_t> offsets = {0};
    for (int a : set.axes) {
      std::vector<int64_t> next;
      next.reserve(offsets.size() * sizes[a]);
      for (int64_t base : offsets) {
        for (int64_t c = 0; c < sizes[a]; ++c) next.push_back(base + c * strides[a]);
      }
      offsets = std::move(next);
    }
    std::sort(offsets.begin(), offsets.end());
    out->mutable_groups()->Reserve(static_cast<int>(world / group_size));
    for (int64_t r = 0; r < world; ++r) {
      bool is_base = true;
      for (size_t a = 0; a < sizes.size() && is_base; ++a) {
        if (in_set[a] && (r / strides[a]) % sizes[a] != 0) is_base = false;
      }
      if (!is_base) continue;
      ir::RankGroup* group = out->add_groups();
      group->mutable_ranks()->Reserve(static_cast<int>(group_size));
      for (int64_t off : offsets) group->add_ranks(static_cast<int32_t>(r + off));
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeBuildMeshPass() { return std::make_unique<BuildMeshPass>(); }

}  // namespace accel::planner
