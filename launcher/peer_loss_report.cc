#include "launcher/peer_loss_report.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace accel::exec {
namespace {

int NodeOf(const std::vector<int>& rank_nodes, int rank) {
  return rank >= 0 && rank < static_cast<int>(rank_nodes.size()) ? rank_nodes[rank] : 0;
}

}  // namespace

std::string PeerLossReport(const std::vector<int>& rank_nodes, int self_rank, const std::string& store,
                           const RollCall& call) {
  if (!call.store_answered) {
    return absl::StrFormat(
        "; the rendezvous store at %s (node %d) did not answer within %g s either: this node (node %d) is "
        "likely cut off from it",
        store, NodeOf(rank_nodes, 0), call.wait_seconds, NodeOf(rank_nodes, self_rank));
  }
  if (call.silent_ranks.empty()) return "";
  std::map<int, std::vector<int>> by_node;
  for (int r : call.silent_ranks) by_node[NodeOf(rank_nodes, r)].push_back(r);
  std::vector<std::string> parts;
  for (const auto& [node, ranks] : by_node) {
    parts.push_back(absl::StrCat("node ", node, " (", ranks.size() == 1 ? "rank " : "ranks ",
                                 absl::StrJoin(ranks, ", "), ")"));
  }
  return absl::StrFormat("; after the failure no word within %g s from %s: %s likely down or cut off",
                         call.wait_seconds, absl::StrJoin(parts, " and "), parts.size() == 1 ? "it is" : "they are");
}

}  // namespace accel::exec
