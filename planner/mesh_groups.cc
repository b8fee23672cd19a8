#include "planner/mesh_groups.h"

#include <algorithm>
#include <array>
#include <numeric>

namespace accel::planner {
namespace {

constexpr int kAxes = 5;
constexpr std::array<const char*, kAxes> kAxisNames = {"pp", "dp_replicate", "dp_shard", "cp",
                                                       "tp"};
using Sizes = std::array<int64_t, kAxes>;

// Whether some base rank (coordinate 0 on the set's axes) has base mod per_node ≥ threshold:
// counts through the coordinates of the other axes like an odometer, innermost fastest.
bool SomeBaseReaches(const Sizes& sizes, const std::vector<int64_t>& strides,
                     const std::array<bool, kAxes>& in_set, int64_t per_node, int64_t threshold) {
  // An axis whose stride is a multiple of per_node moves a base by whole nodes: it cannot
  // change base mod per_node, so the odometer skips it.
  std::array<int, kAxes> free{};
  int n = 0;
  for (int a = 0; a < kAxes; ++a) {
    if (!in_set[a] && sizes[a] > 1 && strides[a] % per_node != 0) free[n++] = a;
  }
  // Likewise c · stride mod per_node repeats after per_node / gcd(stride, per_node) steps.
  std::array<int64_t, kAxes> limits{};
  for (int i = 0; i < n; ++i) {
    limits[i] = std::min(sizes[free[i]], per_node / std::gcd(strides[free[i]], per_node));
  }
  std::array<int64_t, kAxes> coords{};
  while (true) {
    int64_t base = 0;
    for (int i = 0; i < n; ++i) base += coords[i] * strides[free[i]];
    if (base % per_node >= threshold) return true;
    int i = n - 1;
    while (i >= 0 && ++coords[i] == limits[i]) coords[i--] = 0;
    if (i < 0) return false;
  }
}

}  // namespace

const std::vector<GroupSetAxes>& MeshGroupSets() {
  static const std::vector<GroupSetAxes> sets = {
      {"tp", {4}},       {"cp", {3}},
      {"dp_shard", {2}}, {"dp_replicate", {1}},
      {"dp", {1, 2}},    {"dp_shard_cp", {2, 3}},
      {"pp", {0}},       {"world", {0, 1, 2, 3, 4}},
  };
  return sets;
}

std::vector<int64_t> MeshStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (int i = static_cast<int>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= sizes[i];
  }
  return strides;
}

std::array<int64_t, 5> MeshAxisSizes(const ir::Mesh& mesh) {
  Sizes sizes;
  sizes.fill(1);
  for (const ir::MeshAxis& axis : mesh.axes()) {
    for (int i = 0; i < kAxes; ++i) {
      if (axis.name() == kAxisNames[i]) sizes[i] = std::max<int64_t>(axis.size(), 1);
    }
  }
  return sizes;
}

const GroupSetAxes* FindGroupSetAxes(std::string_view name) {
  for (const GroupSetAxes& set : MeshGroupSets()) {
    if (name == set.name) return &set;
  }
  return nullptr;
}

GroupSpan SpanOfGroupSet(const std::array<int64_t, 5>& sizes, int64_t devices_per_node,
                         const GroupSetAxes& set) {
  GroupSpan span;
  const std::vector<int64_t> strides = MeshStrides({sizes.begin(), sizes.end()});
  std::array<bool, kAxes> in_set{};
  int64_t reach = 0;  // M: the largest offset of a member from its group's base rank
  for (int a : set.axes) {
    in_set[a] = true;
    span.size *= sizes[a];
    reach += (sizes[a] - 1) * strides[a];
  }
  if (devices_per_node <= 0 || reach == 0) return span;
  span.inter_node =
      reach >= devices_per_node ||
      SomeBaseReaches(sizes, strides, in_set, devices_per_node, devices_per_node - reach);
  return span;
}

GroupSpan SpanOfGroupSet(const ir::Mesh& mesh, int64_t devices_per_node, std::string_view name) {
  const GroupSetAxes* set = FindGroupSetAxes(name);
  if (set == nullptr) return GroupSpan{};
  return SpanOfGroupSet(MeshAxisSizes(mesh), devices_per_node, *set);
}

namespace {

// The "ep" or "ep_dp" group key of `rank` and its index in the group (see ExpertGroups).
struct ExpertSlot {
  int64_t key = 0;
  int64_t index = 0;
};

ExpertSlot ExpertSlotOf(const Sizes& sizes, int64_t ep, int64_t rank, bool data_parallel) {
  const int64_t tp = sizes[4], cp = sizes[3], ds = sizes[2];
  const int64_t t = rank % tp;
  const int64_t j = (rank / tp) % (ds * cp);          // dp_shard · cp + cp coordinate
  const int64_t outer = rank / (tp * ds * cp);        // pp and dp_replicate coordinates
  const int64_t blocks = ds * cp / ep;
  if (data_parallel) return {(outer * ep + j % ep) * tp + t, j / ep};
  return {(outer * blocks + j / ep) * tp + t, j % ep};
}

}  // namespace

int64_t ExpertParallelRank(const std::array<int64_t, 5>& sizes, int64_t ep, int64_t rank) {
  return ExpertSlotOf(sizes, std::max<int64_t>(ep, 1), rank, false).index;
}

std::vector<std::vector<int32_t>> ExpertGroups(const std::array<int64_t, 5>& sizes, int64_t ep,
                                               bool data_parallel) {
  ep = std::max<int64_t>(ep, 1);
  int64_t world = 1;
  for (int64_t s : sizes) world *= s;
  const int64_t size = data_parallel ? sizes[2] * sizes[3] / ep : ep;
  std::vector<std::vector<int32_t>> groups(static_cast<size_t>(world / size));
  for (int64_t r = 0; r < world; ++r) {
    groups[static_cast<size_t>(ExpertSlotOf(sizes, ep, r, data_parallel).key)].push_back(
        static_cast<int32_t>(r));
  }
  // Keys ascend with the smallest member of each group only within one (pp, dp_replicate)
  // block, so order the groups by their first rank.
  std::sort(groups.begin(), groups.end());
  return groups;
}

GroupSpan SpanOfExpertGroups(const std::array<int64_t, 5>& sizes, int64_t devices_per_node,
                             int64_t ep, bool data_parallel) {
  ep = std::max<int64_t>(ep, 1);
  GroupSpan span;
  span.size = data_parallel ? sizes[2] * sizes[3] / ep : ep;
  if (devices_per_node <= 0 || span.size <= 1) return span;
  for (const std::vector<int32_t>& group : ExpertGroups(sizes, ep, data_parallel)) {
    if (group.front() / devices_per_node != group.back() / devices_per_node) {
      span.inter_node = true;
      break;
    }
  }
  return span;
}

}  // namespace accel::planner
