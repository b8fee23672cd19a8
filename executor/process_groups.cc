#include "executor/process_groups.h"

#include <vector>

#include "absl/strings/str_cat.h"

namespace accel::exec {

absl::StatusOr<ProcessGroups> ProcessGroups::Create(const ir::Plan& plan, int rank,
                                                    Rendezvous& rendezvous,
                                                    std::shared_ptr<Communicator> world,
                                                    CommBackend backend) {
  ProcessGroups out;
  // Group lists already created, so an identical set reuses its communicator.
  std::map<std::vector<std::vector<int>>, std::string> created;
  for (const ir::ProcessGroupSet& set : plan.process_groups()) {
    std::vector<std::vector<int>> lists;
    int mine = -1;
    for (const ir::RankGroup& group : set.groups()) {
      lists.emplace_back(group.ranks().begin(), group.ranks().end());
      for (int32_t r : group.ranks()) {
        if (r == rank) mine = static_cast<int>(lists.size()) - 1;
      }
    }
    if (mine < 0 && !set.partial()) {
      return absl::InvalidArgumentError(
          absl::StrCat("rank ", rank, " is in no group of the plan's process-group set ", set.name()));
    }
    // Every group of a set has the same size, so every rank decides alike whether to create it.
    if (lists.empty() || lists.front().size() == 1) continue;
    if (static_cast<int>(lists.size()) == 1 && static_cast<int>(lists[0].size()) == world->Size()) {
      out.groups_[set.name()] = world;
      continue;
    }
    if (auto it = created.find(lists); it != created.end()) {
      if (mine >= 0) out.groups_[set.name()] = out.groups_[it->second];
      continue;
    }
    absl::StatusOr<std::vector<std::shared_ptr<Communicator>>> groups =
        rendezvous.CreateGroups(lists, backend);
    if (!groups.ok()) return groups.status();
    // A rank in no group of a partial set keeps no communicator for it (Get returns null).
    if (mine >= 0) out.groups_[set.name()] = (*groups)[mine];
    created[lists] = set.name();
  }
  return out;
}

std::shared_ptr<Communicator> ProcessGroups::Get(const std::string& name) const {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second;
}

int ProcessGroups::SizeOf(const std::string& name) const {
  std::shared_ptr<Communicator> comm = Get(name);
  return comm == nullptr ? 1 : comm->Size();
}

int ProcessGroups::RankIn(const std::string& name) const {
  std::shared_ptr<Communicator> comm = Get(name);
  return comm == nullptr ? 0 : comm->Rank();
}

}  // namespace accel::exec
