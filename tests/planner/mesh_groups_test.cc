// The process-group sets of the mesh (planner/mesh_groups.h): the group size and whether a set's
// groups cross nodes, computed from the axis sizes alone, against groups listed rank by rank
// (an independent oracle here) and against the groups the build-mesh pass writes.
#include "planner/mesh_groups.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "planner_test_util.h"

namespace accel::planner {
namespace {

ir::Mesh MeshOf(const std::array<int64_t, 5>& sizes) {
  static const char* kNames[] = {"pp", "dp_replicate", "dp_shard", "cp", "tp"};
  ir::Mesh mesh;
  for (int i = 0; i < 5; ++i) {
    ir::MeshAxis* axis = mesh.add_axes();
    axis->set_name(kNames[i]);
    axis->set_size(sizes[i]);
  }
  return mesh;
}

// Groups the ranks by their coordinates outside the set's axes, row-major with tp innermost, and
// reports the size and whether any group holds ranks of two nodes.
GroupSpan BruteForce(const std::array<int64_t, 5>& sizes, int64_t per_node,
                     const GroupSetAxes& set) {
  int64_t world = 1;
  for (int64_t s : sizes) world *= s;
  std::map<std::vector<int64_t>, std::vector<int64_t>> groups;
  for (int64_t r = 0; r < world; ++r) {
    std::vector<int64_t> key;
    int64_t rest = r;
    for (int a = 4; a >= 0; --a) {
      const int64_t coord = rest % sizes[a];
      rest /= sizes[a];
      bool in_set = false;
      for (int s : set.axes) in_set = in_set || s == a;
      key.push_back(in_set ? -1 : coord);
    }
    groups[key].push_back(r);
  }
  GroupSpan span;
  span.size = static_cast<int64_t>(groups.begin()->second.size());
  for (const auto& [key, ranks] : groups) {
    for (int64_t r : ranks)
      span.inter_node = span.inter_node || r / per_node != ranks[0] / per_node;
  }
  return span;
}

// Every ordered way to write `n` as a product of `parts` factors.
void Factorizations(int64_t n, int parts, std::vector<int64_t>& prefix,
                    std::vector<std::vector<int64_t>>& out) {
  if (parts == 1) {
    prefix.push_back(n);
    out.push_back(prefix);
    prefix.pop_back();
    return;
  }
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d != 0) continue;
    prefix.push_back(d);
    Factorizations(n / d, parts - 1, prefix, out);
    prefix.pop_back();
  }
}

TEST_CASE("mesh groups: span from the sizes equals the groups listed rank by rank") {
  int checked = 0, crossing = 0;
  for (int64_t world : {6, 8, 12, 16, 24}) {
    std::vector<std::vector<int64_t>> meshes;
    std::vector<int64_t> prefix;
    Factorizations(world, 5, prefix, meshes);
    for (const std::vector<int64_t>& m : meshes) {
      const std::array<int64_t, 5> sizes = {m[0], m[1], m[2], m[3], m[4]};
      for (int64_t per_node : {1, 2, 3, 4, 6, 8, 16}) {
        for (const GroupSetAxes& set : MeshGroupSets()) {
          const GroupSpan want = BruteForce(sizes, per_node, set);
          const GroupSpan got = SpanOfGroupSet(MeshOf(sizes), per_node, set.name);
          INFO("mesh " << m[0] << "x" << m[1] << "x" << m[2] << "x" << m[3] << "x" << m[4] << ", "
                       << per_node << " per node, set " << set.name);
          CHECK(got.size == want.size);
          CHECK(got.inter_node == want.inter_node);
          ++checked;
          crossing += want.inter_node;
        }
      }
    }
  }
  CHECK(checked > 10000);
  CHECK(crossing > 1000);  // both answers are exercised
}

TEST_CASE("mesh groups: the sets build-mesh writes are the table's, with the same spans") {
  for (const std::vector<std::string>& sets : std::vector<std::vector<std::string>>{
           {},
           {"parallel.tensor=4"},
           {"parallel.tensor=1", "parallel.pipeline=2", "cluster.devices_per_node=4",
            "cluster.nodes=4"},
           {"parallel.tensor=2", "parallel.data_shard=4", "sharding.stage=3"},
           {"parallel.tensor=4", "cluster.devices_per_node=2", "cluster.nodes=8"}}) {
    testing::Planned planned = testing::PlanYaml(testing::kBaseSpec, sets);
    INFO(planned.diagnostics);
    REQUIRE(planned.result.ok);
    const ir::Plan& plan = planned.result.plan;
    const int64_t per_node = plan.topology().devices_per_node();
    for (const ir::ProcessGroupSet& set : plan.process_groups()) {
      if (set.name() == "embedding") continue;  // partial, derived from pp
      REQUIRE(FindGroupSetAxes(set.name()) != nullptr);
      bool inter_node = false;
      for (const ir::RankGroup& g : set.groups()) {
        for (int32_t r : g.ranks())
          inter_node = inter_node || r / per_node != g.ranks(0) / per_node;
      }
      const GroupSpan span = SpanOfGroupSet(plan.mesh(), per_node, set.name());
      INFO("set " << set.name());
      CHECK(span.size == set.groups(0).ranks_size());
      CHECK(span.inter_node == inter_node);
    }
  }
}

TEST_CASE("mesh groups: strides are row-major with tp innermost") {
  CHECK(MeshStrides({4, 2, 2, 1, 8}) == std::vector<int64_t>{32, 16, 8, 8, 1});
  CHECK(SpanOfGroupSet(MeshOf({1, 1, 1, 1, 1}), 8, "no-such-set").size == 1);
}

}  // namespace
}  // namespace accel::planner
