#include "executor/calibrate/group_member.h"

#include <ATen/Parallel.h>

#include <chrono>
#include <utility>

#include "executor/blas_threads.h"

namespace accel::exec {

absl::StatusOr<GroupMember> JoinGlooGroup(int rank, int group_size, const std::string& store_file) {
  at::set_num_threads(1);
  SetBlasThreads(1);
  RendezvousOptions options;
  options.world_size = group_size;
  options.rank = rank;
  options.store_file = store_file;
  options.timeout = std::chrono::seconds(60);
  absl::StatusOr<std::unique_ptr<Rendezvous>> rendezvous = Rendezvous::Connect(options);
  if (!rendezvous.ok()) return rendezvous.status();
  absl::StatusOr<std::shared_ptr<Communicator>> world = (*rendezvous)->CreateWorld(CommBackend::kGloo);
  if (!world.ok()) return world.status();
  return GroupMember{std::move(*rendezvous), std::move(*world)};
}

}  // namespace accel::exec
