#include "launcher/launch_layout.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace accel::exec {

bool IsLoopbackAddress(const std::string& host) {
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

absl::StatusOr<int> PickFreePort(const std::string& host) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::UnavailableError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = 0;
  const std::string ip = host == "localhost" ? "127.0.0.1" : host;
  if (::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) {
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("cannot pick a port on '", host,
                                               "': not an IPv4 address"));
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    ::close(fd);
    return absl::UnavailableError(
        absl::StrCat("cannot bind a port on ", host, ": ", std::strerror(err)));
  }
  socklen_t len = sizeof(addr);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    int err = errno;
    ::close(fd);
    return absl::UnavailableError(absl::StrCat("getsockname: ", std::strerror(err)));
  }
  ::close(fd);
  return static_cast<int>(ntohs(addr.sin_port));
}

namespace {

WorkerEnv EnvFor(const LaunchRequest& request, const RankSlot& slot, int local_world_size) {
  WorkerEnv env;
  env.rank = slot.rank;
  env.local_rank = slot.local_rank;
  env.world_size = static_cast<int>(request.slots.size());
  env.local_world_size = local_world_size;
  env.node_rank = slot.node;
  env.run_dir = request.run_dir;
  env.num_threads = request.num_threads;
  env.launch_unix_ns = request.launch_unix_ns;
  return env;
}

// The workers of `node`, ascending by rank.
std::vector<WorkerEnv> NodeWorkers(const LaunchRequest& request, int node) {
  std::vector<RankSlot> mine;
  for (const RankSlot& slot : request.slots) {
    if (slot.node == node) mine.push_back(slot);
  }
  std::sort(mine.begin(), mine.end(),
            [](const RankSlot& a, const RankSlot& b) { return a.rank < b.rank; });
  std::vector<WorkerEnv> workers;
  for (const RankSlot& slot : mine) {
    workers.push_back(EnvFor(request, slot, static_cast<int>(mine.size())));
  }
  return workers;
}

}  // namespace

absl::StatusOr<LaunchLayout> ResolveLaunchLayout(const LaunchRequest& request) {
  const int world_size = static_cast<int>(request.slots.size());
  if (world_size < 1 || request.nodes < 1) {
    return absl::InvalidArgumentError("the plan has no ranks");
  }
  LaunchLayout layout;
  std::string addr = request.master_addr;
  std::optional<int> port = request.master_port;

  if (request.slurm.has_value()) {
    const SlurmEnv& slurm = *request.slurm;
    if (addr.empty()) {
      if (slurm.nodelist.empty()) {
        return absl::InvalidArgumentError(
            "under SLURM without SLURM_JOB_NODELIST: give --master-addr or set MASTER_ADDR");
      }
      auto first = FirstHostOfNodeList(slurm.nodelist);
      if (!first.ok()) return first.status();
      addr = *first;
    }
    if (!port.has_value()) port = SlurmDefaultPort(slurm.job_id);
    if (slurm.ntasks == world_size) {
      // One task per device: this task is exactly one rank.
      const RankSlot* slot = nullptr;
      for (const RankSlot& s : request.slots) {
        if (s.rank == slurm.proc_id) slot = &s;
      }
      if (slot == nullptr) {
        return absl::InvalidArgumentError(
            absl::StrCat("SLURM_PROCID=", slurm.proc_id, " is not a rank of the plan"));
      }
      if (slot->node != slurm.node_id) {
        return absl::InvalidArgumentError(absl::StrCat(
            "SLURM placed task ", slurm.proc_id, " on node ", slurm.node_id,
            " but the plan puts rank ", slurm.proc_id, " on node ", slot->node,
            "; use --ntasks-per-node=", world_size / request.nodes, " with block distribution"));
      }
      layout.mode = "slurm: one task per device";
      layout.node_rank = slurm.node_id;
      int local_world_size = 0;
      for (const RankSlot& s : request.slots) local_world_size += s.node == slot->node ? 1 : 0;
      layout.workers.push_back(EnvFor(request, *slot, local_world_size));
    } else if (slurm.ntasks == request.nodes) {
      layout.mode = "slurm: one task per node";
      layout.node_rank = slurm.proc_id;
      layout.workers = NodeWorkers(request, slurm.proc_id);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "SLURM_NTASKS=", slurm.ntasks, " matches neither the plan's world size ", world_size,
          " (one task per device) nor its node count ", request.nodes, " (one task per node)"));
    }
  } else if (request.nodes == 1 && request.node_rank.value_or(0) == 0) {
    layout.mode = "single-node";
    layout.node_rank = 0;
    if (addr.empty()) addr = "127.0.0.1";
    // LibTorch 1.13's TCPStore listens on every interface whatever address it is given, so a
    // single-node job keeps its peers on loopback: rank 0's store is then reachable from the
    // network, but no rank connects or binds Gloo outside this machine.
    if (!IsLoopbackAddress(addr)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "a single-node job meets on loopback: master address '", addr,
          "' (--master-addr or MASTER_ADDR) is not a loopback address; omit it or use 127.0.0.1"));
    }
    if (!port.has_value()) {
      auto picked = PickFreePort("127.0.0.1");
      if (!picked.ok()) return picked.status();
      port = *picked;
      layout.picked_port = true;
    }
    layout.workers = NodeWorkers(request, 0);
  } else {
    if (!request.node_rank.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the plan spans ", request.nodes, " nodes: start `accel run` on each node with "
          "--node-rank K (0..", request.nodes - 1, ") and --master-addr HOST, or under SLURM "
          "with srun"));
    }
    if (*request.node_rank < 0 || *request.node_rank >= request.nodes) {
      return absl::InvalidArgumentError(absl::StrCat("--node-rank ", *request.node_rank,
                                                     " is outside the plan's nodes 0..",
                                                     request.nodes - 1));
    }
    if (addr.empty()) {
      return absl::InvalidArgumentError(
          "--master-addr is required with --node-rank: the host of node 0, reachable from "
          "every node");
    }
    if (!port.has_value()) port = 29500;
    layout.mode = "multi-node";
    layout.node_rank = *request.node_rank;
    layout.workers = NodeWorkers(request, *request.node_rank);
  }

  if (*port < 1 || *port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("master port ", *port,
                                                   " is outside [1, 65535]"));
  }
  if (layout.workers.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan places no ranks on node ", layout.node_rank));
  }
  for (WorkerEnv& env : layout.workers) {
    env.master_addr = addr;
    env.master_port = *port;
  }
  return layout;
}

}  // namespace accel::exec
