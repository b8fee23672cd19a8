#ifndef ACCEL_PLANNER_MESH_GROUPS_H_
#define ACCEL_PLANNER_MESH_GROUPS_H_

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/plan.pb.h"

// The process-group sets of the device mesh, defined once: which mesh axes each set spans. The
// build-mesh pass lists every group of every set from this table; the step-time estimate reads
// only a set's group size and whether its groups cross nodes, computed here from the axis sizes
// without listing a single group (the layout search plans thousands of meshes).
namespace accel::planner {

// A process-group set: its plan name and the mesh axes it spans, as indices into Mesh.axes
// (0 pp, 1 dp_replicate, 2 dp_shard, 3 cp, 4 tp; outermost first). A group of the set is the
// ranks that differ only in these axes.
struct GroupSetAxes {
  const char* name;
  std::vector<int> axes;
};

// The sets build-mesh lists, in plan order: tp, cp, dp_shard, dp_replicate, dp (dp_replicate ×
// dp_shard), dp_shard_cp, pp, world. (The partial "embedding" set is derived from "pp".)
const std::vector<GroupSetAxes>& MeshGroupSets();

// Row-major strides of a mesh with axis `sizes` (outermost first, tp innermost): stride of the
// last axis 1, of each other axis the product of the sizes inside it (torchtitan's order,
// docs/planner-facts.md §3). Sizes ≥ 1.
std::vector<int64_t> MeshStrides(const std::vector<int64_t>& sizes);

// The set called `name` in MeshGroupSets, or nullptr.
const GroupSetAxes* FindGroupSetAxes(std::string_view name);

// The sizes of the mesh axes pp, dp_replicate, dp_shard, cp, tp (GroupSetAxes' indices), found
// by name in `mesh`; a missing axis counts as 1.
std::array<int64_t, 5> MeshAxisSizes(const ir::Mesh& mesh);

// One process-group set as a ring collective sees it.
struct GroupSpan {
  int64_t size = 1;         // ranks per group (product of the set's axis sizes)
  bool inter_node = false;  // some group holds ranks of two nodes (node = rank / devices_per_node)
};

// The span of the set called `name` (MeshGroupSets) on `mesh` (axis sizes; missing axes count
// as 1) with `devices_per_node` consecutive ranks per node. A group is a base rank (coordinate
// 0 on the set's axes) plus offsets from 0 to M = Σ (size − 1) · stride over the set's axes,
// and nodes ascend with ranks, so the group crosses nodes exactly when
// base mod devices_per_node + M ≥ devices_per_node. O(world / size) integer steps, no
// allocation of groups (axes that move a base by whole nodes are skipped). An unknown name
// gives {1, false}; devices_per_node ≤ 0 gives {size, false}.
GroupSpan SpanOfGroupSet(const ir::Mesh& mesh, int64_t devices_per_node, std::string_view name);

// The same for `set` on a mesh with axis `sizes` (MeshAxisSizes), for callers that look up
// several sets of one mesh.
GroupSpan SpanOfGroupSet(const std::array<int64_t, 5>& sizes, int64_t devices_per_node,
                         const GroupSetAxes& set);

// Expert parallelism (docs/planner-facts.md §9; torchtitan ParallelDims._build_mesh_with_ep):
// the dp_shard × cp ranks of one (pp, dp_replicate, tp) coordinate, numbered j = dp_shard
// coordinate · cp + cp coordinate, are cut into dp_shard · cp / ep blocks of ep consecutive j.
// "ep" groups are the blocks (the ranks that exchange tokens by all-to-all; ep rank j mod ep);
// "ep_dp" groups are the ranks with the same j mod ep (they hold the same experts and shard and
// reduce their states; torchtitan's dp_shard_mod_ep). `ep` must divide dp_shard · cp.
inline constexpr const char* kExpertParallelSet = "ep";
inline constexpr const char* kExpertDataParallelSet = "ep_dp";

// Rank `rank`'s expert-parallel rank (j mod ep) on a mesh of axis `sizes` (MeshAxisSizes).
int64_t ExpertParallelRank(const std::array<int64_t, 5>& sizes, int64_t ep, int64_t rank);

// Every group of the "ep" (`data_parallel` false) or "ep_dp" (true) set, ordered by smallest
// rank, ranks ascending. O(world).
std::vector<std::vector<int32_t>> ExpertGroups(const std::array<int64_t, 5>& sizes, int64_t ep,
                                               bool data_parallel);

// The span of the "ep" or "ep_dp" set: group size ep or dp_shard · cp / ep, inter-node when some
// group holds ranks of two nodes. O(world).
GroupSpan SpanOfExpertGroups(const std::array<int64_t, 5>& sizes, int64_t devices_per_node,
                             int64_t ep, bool data_parallel);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_MESH_GROUPS_H_
