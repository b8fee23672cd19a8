// Which workers this `accel run` process starts and how they find each other: single node,
// multi-node by hand (--node-rank), or under SLURM (one task per node, or one per device).
// Torch-free.
#ifndef ACCEL_LAUNCHER_LAUNCH_LAYOUT_H_
#define ACCEL_LAUNCHER_LAUNCH_LAYOUT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "launcher/slurm_env.h"
#include "launcher/worker_env.h"

namespace accel::exec {

// Where one global rank runs (from the plan's RankPlacement).
struct RankSlot {
  int rank = 0;
  int node = 0;
  int local_rank = 0;
};

// The inputs of ResolveLaunchLayout: the plan's topology and the launcher's flags/environment.
struct LaunchRequest {
  // plan.topology.nodes, >= 1.
  int nodes = 1;
  // Every rank's placement, one per rank (plan.ranks); its size is the world size.
  std::vector<RankSlot> slots;
  // --node-rank; nullopt when not given.
  std::optional<int> node_rank;
  // --master-addr (else env MASTER_ADDR); "" when neither is given.
  std::string master_addr;
  // --master-port (else env MASTER_PORT); nullopt when neither is given.
  std::optional<int> master_port;
  // SLURM variables when running under srun.
  std::optional<SlurmEnv> slurm;
  // Passed through to every worker (WorkerEnv fields of the same names).
  std::string run_dir;
  int num_threads = 1;
  int64_t launch_unix_ns = 0;
};

// The resolved launch of this process.
struct LaunchLayout {
  // "single-node", "multi-node", "slurm: one task per node" or "slurm: one task per device".
  std::string mode;
  // This node's index.
  int node_rank = 0;
  // The workers this process starts, ascending by rank (master address/port filled in).
  std::vector<WorkerEnv> workers;
  // True when the port was chosen here (single node, none given): bound on 127.0.0.1.
  bool picked_port = false;
};

// Resolves the layout:
// - SLURM (request.slurm set): if SLURM_NTASKS equals the world size each task is one worker
//   (rank SLURM_PROCID); if it equals the node count each task starts the workers of node
//   SLURM_NODEID. MASTER_ADDR defaults to the first host of SLURM_JOB_NODELIST and MASTER_PORT
//   to SlurmDefaultPort(SLURM_JOB_ID).
// - nodes == 1 without SLURM: node 0, all ranks; address 127.0.0.1 and a free port
//   (PickFreePort) unless given; a given address must be a loopback one (InvalidArgument
//   "a single-node job meets on loopback: master address 'HOST' (--master-addr or MASTER_ADDR)
//   is not a loopback address; omit it or use 127.0.0.1").
// - nodes > 1 without SLURM: --node-rank K and --master-addr are required; port default 29500.
// Errors: InvalidArgument with a message for the user (missing --node-rank/--master-addr, node
// rank out of range, SLURM task count matching neither layout, a node with no ranks); the errors
// of PickFreePort.
absl::StatusOr<LaunchLayout> ResolveLaunchLayout(const LaunchRequest& request);

// Binds a TCP socket to host:0 and returns the port the kernel chose, closing the socket. Another
// process could take it before the store binds it (as with torchrun's free-port choice); the
// window is milliseconds. Errors: Unavailable with the socket error.
absl::StatusOr<int> PickFreePort(const std::string& host);

// True for "127.0.0.1", "localhost", "::1" and other 127.x.y.z addresses.
bool IsLoopbackAddress(const std::string& host);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_LAUNCH_LAYOUT_H_
