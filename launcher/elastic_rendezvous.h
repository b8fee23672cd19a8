// The rendezvous of the surviving nodes' launchers after a failure of a multi-node job run with
// `accel run --min-nodes M` (elastic restarts): which nodes go on, in which order, and who is the
// new master. Torch-free.
//
// It is a directory in checkpoint.dir, which every node of a multi-node job must already share
// (checkpoint/checkpoint_store.h), rather than a store on one node, so that losing any node,
// node 0 included, leaves a rendezvous the others can still use. torchrun's elastic agent meets
// the same way through its rendezvous backend (c10d store or etcd) with a "last call" timeout;
// here the timeout is --rejoin-timeout.
//
// Round R (the R-th restart) lives in DIR/round<R>: each launcher that takes part writes
// node<ID> (its member record, written atomically), then polls the directory. The round closes
// when every node of the previous round has joined, or when `timeout` has passed since this
// launcher joined and at least min_nodes have: the first launcher to close it publishes the
// member list as DIR/round<R>/closed with link(2), which fails for every later one (EEXIST), so
// all read one list. A launcher that finds a closed round without itself in it was left behind.
#ifndef ACCEL_LAUNCHER_ELASTIC_RENDEZVOUS_H_
#define ACCEL_LAUNCHER_ELASTIC_RENDEZVOUS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace accel::exec {

// One node's launcher at a round.
struct ElasticMember {
  int node_id = 0;       // its --node-rank at launch: stable across rounds
  std::string address;   // where the others reach it (the local end of its route to the master)
  std::string host;      // host name, for messages
  int64_t pid = 0;       // the launcher's pid, for messages
};

// One round, as the launcher that joins it sees it.
struct ElasticRoundRequest {
  std::string dir;                  // the rendezvous directory (created when missing)
  int round = 1;                    // 1 for the first restart
  std::vector<int> expected;        // node ids of the previous round (or of the launch)
  int min_nodes = 1;                // the round fails with fewer members
  std::chrono::milliseconds timeout{60000};  // how long to wait for the expected nodes
  std::chrono::milliseconds poll{100};
  ElasticMember self;
};

// The members of a closed round, ascending by node_id: member i is node i of the new world.
struct ElasticRound {
  std::vector<ElasticMember> members;
  // Index of the caller in members.
  int self_index = 0;
};

// Joins round request.round and waits until it closes. Errors: FailedPrecondition "only K of the
// N nodes rejoined within S s (node ids 0, 2); --min-nodes is M" when the round closed with fewer
// than min_nodes; FailedPrecondition "restart R went on without node ID: the other nodes had
// stopped waiting for it (members: node ids 0, 1)" when the caller was left out; Internal for
// file errors.
absl::StatusOr<ElasticRound> JoinElasticRound(const ElasticRoundRequest& request);

// The member record as one line of JSON, and back (InvalidArgument for a malformed record).
std::string ElasticMemberJson(const ElasticMember& member);
absl::StatusOr<ElasticMember> ElasticMemberFromJson(const std::string& text);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_ELASTIC_RENDEZVOUS_H_
