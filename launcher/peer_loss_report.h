// What a rank says about the peers it lost. A collective that fails because a peer went away
// ("Connection reset by peer") or fell silent (a timeout) does not say which peer; so each failing
// rank reports to the rendezvous store, waits a moment, and lists the ranks that did not report
// (executor/communicator.h, Rendezvous::RollCall). Ranks of a node that died or was cut off never
// report, so the job's error names that node, whichever surviving rank the launcher names.
// Torch-free.
#ifndef ACCEL_LAUNCHER_PEER_LOSS_REPORT_H_
#define ACCEL_LAUNCHER_PEER_LOSS_REPORT_H_

#include <string>
#include <vector>

namespace accel::exec {

// The outcome of a roll call.
struct RollCall {
  bool store_answered = true;     // false: the store did not answer within the wait
  std::vector<int> silent_ranks;  // ranks that did not report, ascending (store_answered only)
  double wait_seconds = 1;
};

// The clause appended to a failed rank's error, "" when every rank reported. rank_nodes[r] is
// rank r's node (plan.ranks); store names the rendezvous store ("10.0.0.1:29500"). E.g.
//   "; after the failure no word within 1 s from node 1 (ranks 2, 3): it is likely down or cut off"
//   "; the rendezvous store at 10.0.0.1:29500 (node 0) did not answer within 2 s either: this
//    node (node 1) is likely cut off from it"
std::string PeerLossReport(const std::vector<int>& rank_nodes, int self_rank, const std::string& store,
                           const RollCall& call);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_PEER_LOSS_REPORT_H_
