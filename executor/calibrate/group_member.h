// One forked member of a process group `accel calibrate` measures over (Gloo all-reduce samples,
// the tensor- and data-parallel reference steps): one intra-op and BLAS thread, joined through a
// rendezvous file. Included only by calibrate's .cc files.
#ifndef ACCEL_EXECUTOR_CALIBRATE_GROUP_MEMBER_H_
#define ACCEL_EXECUTOR_CALIBRATE_GROUP_MEMBER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "executor/communicator.h"

namespace accel::exec {

struct GroupMember {
  std::unique_ptr<Rendezvous> rendezvous;  // kept alive while the world is used
  std::shared_ptr<Communicator> world;     // Gloo, over every member
};

// Sets this process to one intra-op and one BLAS thread, then joins rank `rank` of
// `group_size` through `store_file` (60 s timeout) and creates the Gloo world. Errors: those of
// Rendezvous::Connect and CreateWorld.
absl::StatusOr<GroupMember> JoinGlooGroup(int rank, int group_size, const std::string& store_file);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_GROUP_MEMBER_H_
