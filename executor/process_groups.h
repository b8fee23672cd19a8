// The plan's process groups, built once by name ("world", "dp", "dp_replicate", "dp_shard",
// "dp_shard_cp", "tp", "pp", "cp", and any the plan adds) — never looked up by position.
#ifndef ACCEL_EXECUTOR_PROCESS_GROUPS_H_
#define ACCEL_EXECUTOR_PROCESS_GROUPS_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "executor/communicator.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// This rank's communicator of every process-group set in the plan.
class ProcessGroups {
 public:
  // Collective over the world: every rank creates the sets in plan order. A set whose groups
  // have one rank gets no communicator; a set whose groups equal an earlier set's (dp and
  // dp_shard without replication, say) shares that set's communicator; "world" is `world`.
  // A rank in no group of a partial set (ir::ProcessGroupSet.partial, e.g. "embedding") takes
  // part in creating it and gets no communicator for it.
  // Errors: InvalidArgument when this rank is in no group of a set that is not partial; those
  // of CreateGroups.
  static absl::StatusOr<ProcessGroups> Create(const ir::Plan& plan, int rank, Rendezvous& rendezvous,
                                              std::shared_ptr<Communicator> world,
                                              CommBackend backend);

  // The communicator of set `name`, or nullptr when its groups have one rank or the plan has no
  // such set.
  std::shared_ptr<Communicator> Get(const std::string& name) const;

  // Size of this rank's group in set `name` (1 when absent).
  int SizeOf(const std::string& name) const;

  // Index of this rank in its group of set `name` (0 when absent).
  int RankIn(const std::string& name) const;

 private:
  std::map<std::string, std::shared_ptr<Communicator>> groups_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_PROCESS_GROUPS_H_
