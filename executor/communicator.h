// Narrow collective-communication interface used by the executor, implemented over c10d process
// groups (Gloo on CPU, NCCL on CUDA when the LibTorch build has it), plus the TCPStore rendezvous
// that creates the world group and the plan's sub-groups.
//
// c10d headers stay in communicator.cc: this header only needs the tensor type.
#ifndef ACCEL_EXECUTOR_COMMUNICATOR_H_
#define ACCEL_EXECUTOR_COMMUNICATOR_H_

#include <ATen/core/Tensor.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accel::exec {

// Reduction applied by AllReduce and ReduceScatter. kAvg is the sum divided by the group size
// (computed as sum then divide on every backend, so results match across backends); kMax the
// element-wise maximum (vocabulary-parallel cross-entropy's logit maximum).
enum class ReduceOp { kSum, kAvg, kMax };

// Which c10d backend a communicator uses. kGloo works on CPU tensors; kNccl on CUDA tensors and is
// only available when the LibTorch build has NCCL (NcclAvailable()).
enum class CommBackend { kGloo, kNccl };

// True when this binary was built against a LibTorch with c10d NCCL support.
bool NcclAvailable();

// A collective launched asynchronously. Wait() must be called exactly once before the result
// tensor is read; destroying an un-waited work blocks until it is done.
class PendingWork {
 public:
  virtual ~PendingWork() = default;

  // Blocks until the collective finished (or the communicator timeout elapsed) and applies any
  // post-processing (the division of kAvg). Errors, with the c10d text: DeadlineExceeded when the
  // timeout elapsed (naming it), Unavailable when a peer closed its connection (it exited or
  // died: usually a consequence of its own failure), Internal otherwise.
  virtual absl::Status Wait() = 0;

  // True once the operation has finished (or failed), so Wait() would not block.
  virtual bool Done() = 0;
};

// Collectives over one process group. Every member rank must call the same collectives in the same
// order with tensors of the same shape and dtype. Tensors must live on the backend's device
// (CPU for Gloo, CUDA for NCCL). All calls block until done or the timeout given at creation;
// a timeout or a peer failure returns an error instead of hanging (codes as PendingWork::Wait).
class Communicator {
 public:
  virtual ~Communicator() = default;

  // This process's rank inside the group, in [0, Size()).
  virtual int Rank() const = 0;
  // Number of ranks in the group.
  virtual int Size() const = 0;
  // The global (world) ranks of the members, in group-rank order.
  virtual const std::vector<int>& GlobalRanks() const = 0;
  // "gloo" or "nccl".
  virtual std::string BackendName() const = 0;

  // In place: tensor = op over all ranks of tensor. Any shape; kAvg needs a floating dtype.
  virtual absl::Status AllReduce(at::Tensor& tensor, ReduceOp op) = 0;

  // Launches AllReduce without waiting (used by the gradient-bucket hooks so communication overlaps
  // backward). The tensor must stay alive and untouched until Wait() returns.
  virtual absl::StatusOr<std::unique_ptr<PendingWork>> AllReduceAsync(at::Tensor tensor,
                                                                      ReduceOp op) = 0;

  // AllGather without waiting; both tensors must stay alive and untouched until Wait() returns.
  virtual absl::StatusOr<std::unique_ptr<PendingWork>> AllGatherAsync(at::Tensor input,
                                                                      at::Tensor output) = 0;

  // ReduceScatter without waiting; output (contiguous) holds the result after Wait(). input
  // (contiguous) may be overwritten (Gloo reduces it in place) and must stay alive until then.
  virtual absl::StatusOr<std::unique_ptr<PendingWork>> ReduceScatterAsync(at::Tensor input,
                                                                          at::Tensor output,
                                                                          ReduceOp op) = 0;

  // Flat all-gather: output (numel = Size() * input.numel(), same dtype) receives the inputs of all
  // ranks concatenated in group-rank order (torch.distributed.all_gather_into_tensor semantics).
  // Shapes of output are free as long as numel and contiguity match. Gloo: emulated on the list
  // form of allgather, which it supports.
  virtual absl::Status AllGather(const at::Tensor& input, at::Tensor& output) = 0;

  // Flat reduce-scatter: input has numel = Size() * output.numel(); rank r receives
  // op over all ranks of input chunk r (chunks are contiguous, in group-rank order; semantics of
  // torch.distributed.reduce_scatter_tensor). Gloo: emulated as an all-reduce of a copy of the input
  // followed by taking chunk r (correct, twice the traffic of a native reduce-scatter).
  virtual absl::Status ReduceScatter(const at::Tensor& input, at::Tensor& output,
                                     ReduceOp op) = 0;

  // All-to-all by rows (torch.distributed.all_to_all_single with split sizes): input's rows are
  // cut into Size() consecutive pieces of input_splits[r] rows, piece r goes to group rank r, and
  // output receives the pieces from every rank in group-rank order, output_splits[r] rows from
  // rank r. input_splits and output_splits have Size() entries ≥ 0 summing to input.size(0) and
  // output.size(0); rows of input and output have equal shape and dtype; output is contiguous.
  // What rank r sends to rank q must equal what q expects from r (the callers exchange counts
  // first). Errors: InvalidArgument for mismatched shapes or splits; those of PendingWork::Wait.
  // Gloo: bf16 travels as fp16 of the same bits (an all-to-all only moves bytes).
  virtual absl::Status AllToAll(const at::Tensor& input, at::Tensor& output, const std::vector<int64_t>& input_splits,
                                const std::vector<int64_t>& output_splits) = 0;

  // In place: every rank's tensor becomes root's tensor. root is a group rank.
  virtual absl::Status Broadcast(at::Tensor& tensor, int root) = 0;

  // Point-to-point send of tensor to group rank dst, matched by Recv(.., src, tag) with equal tag.
  virtual absl::Status Send(const at::Tensor& tensor, int dst, int tag) = 0;

  // Send without waiting (pipeline schedules: a blocking send to a peer that is itself sending
  // would deadlock). tensor must be contiguous and stay untouched until Wait() returns; Gloo's
  // send completes once the receiver has taken the data.
  virtual absl::StatusOr<std::unique_ptr<PendingWork>> SendAsync(at::Tensor tensor, int dst,
                                                                 int tag) = 0;

  // Receives into tensor (shape and dtype must match the sender's) from group rank src.
  virtual absl::Status Recv(at::Tensor& tensor, int src, int tag) = 0;

  // Returns when every member has entered the barrier.
  virtual absl::Status Barrier() = 0;
};

// Where and how to meet the other ranks (names follow torchrun: MASTER_ADDR, MASTER_PORT,
// WORLD_SIZE, RANK).
struct RendezvousOptions {
  // Host of the TCPStore server; rank 0 serves it.
  std::string master_addr = "127.0.0.1";
  // TCP port of the store. Rank 0 may pass 0 to bind a free port (read it back with Port()).
  int master_port = 29500;
  // Total number of ranks, >= 1.
  int world_size = 1;
  // This process's global rank, in [0, world_size).
  int rank = 0;
  // Bound on every collective of the groups created from it (and Gloo's connection set-up).
  // Start-up (connecting to the store, the job token, waiting in the first CreateWorld until every
  // rank has arrived) may take max(timeout, 5 min): workers may start far apart.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  // Hostname or address the Gloo transport binds to (workers set it to LocalAddressToward(
  // master_addr) for a master off this machine). Empty: 127.0.0.1 when master_addr is a loopback
  // address, otherwise the address this machine's hostname resolves to.
  std::string gloo_hostname;
  // Identity of the job (WorkerEnv::job_token). Rank 0 publishes it in the store; every other
  // rank reads it back before joining any group and refuses a store holding another token.
  // "" on every rank: no check.
  std::string job_token;
  // torchrun's agent serves the store (TORCHELASTIC_USE_AGENT_STORE, its static rendezvous): no
  // rank serves it, every rank connects, and the keys of restart `attempt`
  // (TORCHELASTIC_RESTART_COUNT) live under their own prefix.
  bool agent_store = false;
  int attempt = 0;
  // Single-node jobs: the store is this file (c10d FileStore) instead of a TCP server, so nothing
  // listens on the network at all. Every rank
  // opens the same path; the launcher gives each attempt a fresh one. "": TCPStore.
  std::string store_file;
};

// The store shared by all ranks and the factory of process groups built on it.
class Rendezvous {
 public:
  // Connects to the store (rank 0 creates the server) and checks the job token. The server
  // listens on master_addr only (listen_address.h: LibTorch 1.13's TCPStoreOptions has no bind
  // address, so accel redirects the server's bind), or on every interface, with a warning on
  // stderr, when master_addr is a name that resolves to loopback on this machine alone. Errors: InvalidArgument for a bad
  // rank/world size/port; Unavailable when the store cannot be reached (or rank 0 publishes no
  // token) within the timeout; PermissionDenied "rank R: the rendezvous store at HOST:PORT
  // belongs to another job (its job token differs from this worker's ACCEL_JOB_TOKEN); refusing
  // to join it".
  static absl::StatusOr<std::unique_ptr<Rendezvous>> Connect(const RendezvousOptions& options);

  virtual ~Rendezvous() = default;

  // The store's TCP port (the bound one when rank 0 asked for port 0).
  virtual int Port() const = 0;
  // The options this rendezvous was created with.
  virtual const RendezvousOptions& Options() const = 0;

  // Creates the group of all ranks. Every rank must call it (it is collective).
  virtual absl::StatusOr<std::shared_ptr<Communicator>> CreateWorld(CommBackend backend) = 0;

  // Creates one group per list of global ranks (the plan's process groups). Every rank must call it
  // with identical lists in the same order; each group meets under its own store prefix, so
  // creation order is the only thing ranks agree on. Element i is null when this rank is not in
  // rank_lists[i]. Errors: InvalidArgument for an empty list, an out-of-range or duplicate rank.
  virtual absl::StatusOr<std::vector<std::shared_ptr<Communicator>>> CreateGroups(
      const std::vector<std::vector<int>>& rank_lists, CommBackend backend) = 0;

  // After this rank lost a peer: reports to the store, waits `wait` for the other ranks that are
  // still alive to do the same, and returns the ranks that did not, ascending
  // (launcher/peer_loss_report.h). Runs on a thread of its own: a store that does not answer
  // within 2 x wait (this node cut off) is Unavailable "the store did not answer", never a hang.
  // Call it once per rendezvous.
  virtual absl::StatusOr<std::vector<int>> RollCall(std::chrono::milliseconds wait) = 0;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_COMMUNICATOR_H_
