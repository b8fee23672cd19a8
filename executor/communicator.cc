#include "executor/communicator.h"

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>

#if defined(ACCEL_WITH_NCCL) && defined(USE_C10D_NCCL)
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#define ACCEL_NCCL_ENABLED 1
#else
#define ACCEL_NCCL_ENABLED 0
#endif

#include <algorithm>
#include <cstdio>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "executor/listen_address.h"

namespace accel::exec {
namespace {

// LibTorch 2.x split ProcessGroup into a dispatcher plus per-device Backends; the concrete Gloo and
// NCCL classes derive from Backend there and from ProcessGroup in 1.x. The collective methods used
// here have the same signatures on both.
#if TORCH_VERSION_MAJOR >= 2
using PgBase = c10d::Backend;
#else
using PgBase = c10d::ProcessGroup;
#endif

// kAvg is reduced as a sum and divided afterwards.
c10d::ReduceOp C10dOp(ReduceOp op) {
  return op == ReduceOp::kMax ? c10d::ReduceOp::MAX : c10d::ReduceOp::SUM;
}

// timeout: the communicator's bound, named in a timeout's message (the peer that did not answer
// is the launcher's to name: it sees a stopped or dead worker).
absl::Status FromException(const std::string& what, int rank, const std::exception& e,
                           std::chrono::milliseconds timeout) {
  // c10::Error's what() carries a C++ backtrace that buries the message in a log tail.
  const auto* c10_error = dynamic_cast<const c10::Error*>(&e);
  const std::string text = c10_error != nullptr ? c10_error->what_without_backtrace() : e.what();
  std::string message = absl::StrCat(what, " failed on group rank ", rank, ": ", text);
  // c10d reports timeouts only through the exception text.
  if (absl::StrContains(text, "imed out") || absl::StrContains(text, "imeout")) {
    absl::StrAppend(&message, " (a peer did not take part within the collective timeout of ",
                    absl::StrFormat("%.1f", static_cast<double>(timeout.count()) / 1000.0),
                    " s: cluster.collective_timeout_seconds)");
    return absl::DeadlineExceededError(message);
  }
  // Gloo's words for a peer that went away (tcp/pair.cc); the peer's own error is the cause.
  if (absl::StrContains(text, "Connection closed by peer") ||
      absl::StrContains(text, "Connection reset by peer") || absl::StrContains(text, "Broken pipe")) {
    return absl::UnavailableError(message);
  }
  return absl::InternalError(message);
}

absl::Status CheckAvgDtype(const at::Tensor& tensor, ReduceOp op) {
  if (op == ReduceOp::kAvg && !at::isFloatingType(tensor.scalar_type())) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReduceOp::kAvg needs a floating tensor, got ", c10::toString(tensor.scalar_type())));
  }
  return absl::OkStatus();
}

// A launched c10d work plus what must happen once it is done (the division of kAvg, the copy of
// an emulated collective's result), run by Wait on the caller's thread.
class C10dPendingWork final : public PendingWork {
 public:
  C10dPendingWork(c10::intrusive_ptr<c10d::Work> work, std::function<void()> finish,
                  const char* what, int rank, std::chrono::milliseconds timeout)
      : work_(std::move(work)), finish_(std::move(finish)), what_(what), rank_(rank),
        timeout_(timeout) {}

  ~C10dPendingWork() override {
    if (!waited_) {
      try {
        work_->wait(timeout_);
      } catch (const std::exception&) {
        // A destructor cannot report; the error already surfaced or the caller abandoned the work.
      }
    }
  }

  bool Done() override {
    try {
      return work_->isCompleted();
    } catch (const std::exception&) {
      return true;  // failed: Wait reports it
    }
  }

  absl::Status Wait() override {
    if (waited_) return absl::FailedPreconditionError("PendingWork::Wait called twice");
    waited_ = true;
    try {
      work_->wait(timeout_);
      if (finish_) finish_();
    } catch (const std::exception& e) {
      return FromException(what_, rank_, e, timeout_);
    }
    return absl::OkStatus();
  }

 private:
  c10::intrusive_ptr<c10d::Work> work_;
  std::function<void()> finish_;
  const char* what_;
  int rank_;
  std::chrono::milliseconds timeout_;
  bool waited_ = false;
};

class C10dCommunicator final : public Communicator {
 public:
  C10dCommunicator(c10::intrusive_ptr<PgBase> pg, CommBackend backend, std::vector<int> global_ranks,
                   std::chrono::milliseconds timeout)
      : pg_(std::move(pg)), backend_(backend), global_ranks_(std::move(global_ranks)),
        timeout_(timeout) {}

  int Rank() const override { return pg_->getRank(); }
  int Size() const override { return pg_->getSize(); }
  const std::vector<int>& GlobalRanks() const override { return global_ranks_; }
  std::string BackendName() const override {
    return backend_ == CommBackend::kGloo ? "gloo" : "nccl";
  }

  absl::Status AllReduce(at::Tensor& tensor, ReduceOp op) override {
    if (absl::Status s = CheckAvgDtype(tensor, op); !s.ok()) return s;
    return Guard("all-reduce", [&] {
      at::Tensor work_tensor = Summable(tensor.is_contiguous() ? tensor : tensor.contiguous());
      std::vector<at::Tensor> tensors{work_tensor};
      c10d::AllreduceOptions opts;
      opts.reduceOp = C10dOp(op);
      pg_->allreduce(tensors, opts)->wait(timeout_);
      if (op == ReduceOp::kAvg) work_tensor.div_(Size());
      if (!work_tensor.is_same(tensor)) tensor.copy_(work_tensor);
    });
  }

  absl::StatusOr<std::unique_ptr<PendingWork>> AllReduceAsync(at::Tensor tensor,
                                                              ReduceOp op) override {
    if (absl::Status s = CheckAvgDtype(tensor, op); !s.ok()) return s;
    if (!tensor.is_contiguous()) {
      return absl::InvalidArgumentError("AllReduceAsync needs a contiguous tensor");
    }
    return Launch("async all-reduce", [&]() -> Launched {
      at::Tensor sum = Summable(tensor);
      std::vector<at::Tensor> tensors{sum};
      c10d::AllreduceOptions opts;
      opts.reduceOp = C10dOp(op);
      const int size = Size();
      auto finish = [tensor, sum, op, size]() mutable {
        if (op == ReduceOp::kAvg) sum.div_(size);
        if (!sum.is_same(tensor)) tensor.copy_(sum);
      };
      return {pg_->allreduce(tensors, opts), finish};
    });
  }

  absl::StatusOr<std::unique_ptr<PendingWork>> AllGatherAsync(at::Tensor input,
                                                              at::Tensor output) override {
    if (absl::Status s = CheckGatherShapes(input, output); !s.ok()) return s;
    return Launch("async all-gather", [&]() -> Launched {
      at::Tensor in = input.contiguous().view({-1});
      at::Tensor out = output.view({-1});
      if (backend_ == CommBackend::kNccl) return {pg_->_allgather_base(out, in), nullptr};
      in = GlooGatherView(in);
      out = GlooGatherView(out);
      std::vector<std::vector<at::Tensor>> outputs{Chunks(out, in.numel())};
      std::vector<at::Tensor> inputs{in};
      // Gloo writes into the chunk views; `in` must outlive the work.
      return {pg_->allgather(outputs, inputs), [in] {}};
    });
  }

  absl::StatusOr<std::unique_ptr<PendingWork>> ReduceScatterAsync(at::Tensor input,
                                                                  at::Tensor output,
                                                                  ReduceOp op) override {
    if (absl::Status s = CheckAvgDtype(input, op); !s.ok()) return s;
    if (absl::Status s = CheckScatterShapes(input, output); !s.ok()) return s;
    if (!input.is_contiguous() || !output.is_contiguous()) {
      return absl::InvalidArgumentError("ReduceScatterAsync needs contiguous tensors");
    }
    const int size = Size();
    const int64_t n = output.numel();
    return Launch("async reduce-scatter", [&]() -> Launched {
      at::Tensor in = input.view({-1});
      at::Tensor out = output.view({-1});
      if (backend_ == CommBackend::kNccl) {
        c10d::ReduceScatterOptions opts;
        opts.reduceOp = C10dOp(op);
        auto finish = [out, op, size]() mutable {
          if (op == ReduceOp::kAvg) out.div_(size);
        };
        return {pg_->_reduce_scatter_base(out, in, opts), finish};
      }
      // Gloo has no reduce-scatter: all-reduce the (clobbered) input and keep this rank's chunk.
      at::Tensor sum = Summable(in);
      std::vector<at::Tensor> tensors{sum};
      c10d::AllreduceOptions opts;
      opts.reduceOp = C10dOp(op);
      const int64_t begin = Rank() * n;
      auto finish = [sum, out, op, size, begin, n]() mutable {
        at::Tensor mine = sum.narrow(0, begin, n);
        if (op == ReduceOp::kAvg) mine.div_(size);
        out.copy_(mine);
      };
      return {pg_->allreduce(tensors, opts), finish};
    });
  }

  absl::Status AllGather(const at::Tensor& input, at::Tensor& output) override {
    const int64_t n = input.numel();
    if (absl::Status s = CheckGatherShapes(input, output); !s.ok()) return s;
    return Guard("all-gather", [&] {
      at::Tensor in = input.contiguous().view({-1});
      at::Tensor out = output.view({-1});
      if (backend_ == CommBackend::kNccl) {
        pg_->_allgather_base(out, in)->wait(timeout_);
        return;
      }
      // Gloo has only the list form: hand it views of the flat output, one per rank.
      in = GlooGatherView(in);
      out = GlooGatherView(out);
      std::vector<std::vector<at::Tensor>> outputs{Chunks(out, n)};
      std::vector<at::Tensor> inputs{in};
      pg_->allgather(outputs, inputs)->wait(timeout_);
    });
  }

  absl::Status ReduceScatter(const at::Tensor& input, at::Tensor& output, ReduceOp op) override {
    if (absl::Status s = CheckAvgDtype(input, op); !s.ok()) return s;
    const int64_t n = output.numel();
    if (absl::Status s = CheckScatterShapes(input, output); !s.ok()) return s;
    return Guard("reduce-scatter", [&] {
      c10d::AllreduceOptions ar_opts;
      ar_opts.reduceOp = C10dOp(op);
      at::Tensor result;
      if (backend_ == CommBackend::kNccl) {
        at::Tensor in = input.contiguous().view({-1});
        result = at::empty({n}, input.options());
        c10d::ReduceScatterOptions opts;
        opts.reduceOp = C10dOp(op);
        pg_->_reduce_scatter_base(result, in, opts)->wait(timeout_);
      } else {
        // Gloo rejects reduce_scatter: all-reduce a private copy and keep this rank's chunk.
        at::Tensor full = Summable(input.reshape({-1}));
        if (full.is_same(input) || full.data_ptr() == input.data_ptr()) full = full.clone();
        std::vector<at::Tensor> tensors{full};
        pg_->allreduce(tensors, ar_opts)->wait(timeout_);
        result = full.narrow(0, Rank() * n, n);
      }
      if (op == ReduceOp::kAvg) result.div_(Size());
      output.copy_(result.view(output.sizes()));
    });
  }

  absl::Status AllToAll(const at::Tensor& input, at::Tensor& output, const std::vector<int64_t>& input_splits,
                        const std::vector<int64_t>& output_splits) override {
    if (absl::Status s = CheckAllToAll(input, output, input_splits, output_splits); !s.ok()) return s;
    return Guard("all-to-all", [&] {
      at::Tensor in = GlooGatherView(input.contiguous());
      at::Tensor out = GlooGatherView(output);
      std::vector<int64_t> out_splits = output_splits, in_splits = input_splits;
      pg_->alltoall_base(out, in, out_splits, in_splits)->wait(timeout_);
    });
  }

  absl::Status Broadcast(at::Tensor& tensor, int root) override {
    if (root < 0 || root >= Size()) {
      return absl::InvalidArgumentError(absl::StrCat("Broadcast: root ", root, " outside group of ", Size()));
    }
    return Guard("broadcast", [&] {
      at::Tensor work_tensor = tensor.is_contiguous() ? tensor : tensor.contiguous();
      std::vector<at::Tensor> tensors{work_tensor};
      c10d::BroadcastOptions opts;
      opts.rootRank = root;
      pg_->broadcast(tensors, opts)->wait(timeout_);
      if (!work_tensor.is_same(tensor)) tensor.copy_(work_tensor);
    });
  }

  absl::Status Send(const at::Tensor& tensor, int dst, int tag) override {
    if (dst < 0 || dst >= Size() || dst == Rank()) {
      return absl::InvalidArgumentError(absl::StrCat("Send: bad destination rank ", dst));
    }
    return Guard("send", [&] {
      std::vector<at::Tensor> tensors{tensor.contiguous()};
      pg_->send(tensors, dst, tag)->wait(timeout_);
    });
  }

  absl::StatusOr<std::unique_ptr<PendingWork>> SendAsync(at::Tensor tensor, int dst,
                                                         int tag) override {
    if (dst < 0 || dst >= Size() || dst == Rank()) {
      return absl::InvalidArgumentError(absl::StrCat("SendAsync: bad destination rank ", dst));
    }
    if (!tensor.is_contiguous()) return absl::InvalidArgumentError("SendAsync needs a contiguous tensor");
    return Launch("async send", [&]() -> Launched {
      std::vector<at::Tensor> tensors{tensor};
      // The work keeps the tensor alive until it is done.
      return {pg_->send(tensors, dst, tag), [tensor] {}};
    });
  }

  absl::Status Recv(at::Tensor& tensor, int src, int tag) override {
    if (src < 0 || src >= Size() || src == Rank()) {
      return absl::InvalidArgumentError(absl::StrCat("Recv: bad source rank ", src));
    }
    return Guard("recv", [&] {
      at::Tensor work_tensor = tensor.is_contiguous() ? tensor : tensor.contiguous();
      std::vector<at::Tensor> tensors{work_tensor};
      pg_->recv(tensors, src, tag)->wait(timeout_);
      if (!work_tensor.is_same(tensor)) tensor.copy_(work_tensor);
    });
  }

  absl::Status Barrier() override {
    return Guard("barrier", [&] {
      c10d::BarrierOptions opts;
      opts.timeout = timeout_;
      pg_->barrier(opts)->wait(timeout_);
    });
  }

 private:
  absl::Status CheckAllToAll(const at::Tensor& input, const at::Tensor& output,
                             const std::vector<int64_t>& input_splits,
                             const std::vector<int64_t>& output_splits) const {
    auto sum_of = [&](const std::vector<int64_t>& splits, int64_t rows, const char* which) -> absl::Status {
      int64_t sum = 0;
      for (int64_t n : splits) {
        if (n < 0) return absl::InvalidArgumentError(absl::StrCat("AllToAll: negative ", which, " split ", n));
        sum += n;
      }
      if (splits.size() != static_cast<size_t>(Size()) || sum != rows) {
        return absl::InvalidArgumentError(absl::StrCat("AllToAll: ", which, " splits must be ", Size(),
                                                       " row counts summing to ", rows, ", got ", splits.size(),
                                                       " summing to ", sum));
      }
      return absl::OkStatus();
    };
    if (input.dim() == 0 || output.dim() == 0 || input.sizes().slice(1) != output.sizes().slice(1) ||
        input.scalar_type() != output.scalar_type() || !output.is_contiguous()) {
      return absl::InvalidArgumentError(absl::StrCat("AllToAll: input ", c10::toString(input.scalar_type()),
                                                     c10::str(input.sizes()), " and contiguous output ",
                                                     c10::toString(output.scalar_type()), c10::str(output.sizes()),
                                                     " need rows of one shape and dtype"));
    }
    if (absl::Status s = sum_of(input_splits, input.size(0), "input"); !s.ok()) return s;
    return sum_of(output_splits, output.size(0), "output");
  }

  // Gloo in LibTorch 1.13 has no bf16 all-gather or all-to-all ("Invalid scalar type"); both only
  // move bytes, so a bf16 tensor travels as fp16 of the same bits, exactly.
  static at::Tensor GlooGatherView(const at::Tensor& t) {
    return t.scalar_type() == at::kBFloat16 ? t.view(at::kHalf) : t;
  }

  // Gloo in LibTorch 1.13 cannot sum bf16 either: on Gloo a bf16 tensor is summed as an fp32
  // copy and rounded back to bf16 once by the caller's copy_ (more accurate than a bf16 ring sum;
  // what the rank holds afterwards is still the planned bf16). Other dtypes are returned as is.
  at::Tensor Summable(const at::Tensor& t) const {
    if (backend_ == CommBackend::kGloo && t.scalar_type() == at::kBFloat16) return t.to(at::kFloat);
    return t;
  }

  struct Launched {
    c10::intrusive_ptr<c10d::Work> work;
    std::function<void()> finish;
  };

  absl::Status CheckGatherShapes(const at::Tensor& input, const at::Tensor& output) const {
    const int64_t n = input.numel();
    if (output.numel() != n * Size() || output.scalar_type() != input.scalar_type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "AllGather: output must have ", n * Size(), " elements of ",
          c10::toString(input.scalar_type()), ", got ", output.numel(), " of ",
          c10::toString(output.scalar_type())));
    }
    if (!output.is_contiguous()) return absl::InvalidArgumentError("AllGather: output not contiguous");
    return absl::OkStatus();
  }

  absl::Status CheckScatterShapes(const at::Tensor& input, const at::Tensor& output) const {
    const int64_t n = output.numel();
    if (input.numel() != n * Size() || output.scalar_type() != input.scalar_type()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "ReduceScatter: input must have ", n * Size(), " elements of ",
          c10::toString(output.scalar_type()), ", got ", input.numel(), " of ",
          c10::toString(input.scalar_type())));
    }
    return absl::OkStatus();
  }

  // Views of a flat tensor, one per group rank, of n elements each.
  std::vector<at::Tensor> Chunks(const at::Tensor& flat, int64_t n) const {
    std::vector<at::Tensor> chunks;
    chunks.reserve(Size());
    for (int r = 0; r < Size(); ++r) chunks.push_back(flat.narrow(0, r * n, n));
    return chunks;
  }

  template <typename F>
  absl::StatusOr<std::unique_ptr<PendingWork>> Launch(const char* what, F&& start) {
    try {
      Launched launched = start();
      return std::unique_ptr<PendingWork>(new C10dPendingWork(
          std::move(launched.work), std::move(launched.finish), what, Rank(), timeout_));
    } catch (const std::exception& e) {
      return FromException(what, Rank(), e, timeout_);
    }
  }

  template <typename F>
  absl::Status Guard(const char* what, F&& body) {
    try {
      body();
    } catch (const std::exception& e) {
      return FromException(what, Rank(), e, timeout_);
    }
    return absl::OkStatus();
  }

  c10::intrusive_ptr<PgBase> pg_;
  CommBackend backend_;
  std::vector<int> global_ranks_;
  std::chrono::milliseconds timeout_;
};

constexpr char kJobTokenKey[] = "accel/job_token";

// The store's own timeout, which bounds start-up (connecting, the job token, every rank's
// arrival): at least 5 minutes, as workers may start far apart, and never less than the
// collective timeout.
std::chrono::milliseconds StartupTimeout(const RendezvousOptions& options) {
  return std::max<std::chrono::milliseconds>(options.timeout, std::chrono::minutes(5));
}

// Rank 0 publishes the token; the others compare before they join anything, so a worker of
// another job never writes group keys into this job's store. The token itself is never printed.
absl::Status CheckJobToken(c10d::Store& store, const RendezvousOptions& options) {
  if (options.rank == 0) {
    store.set(kJobTokenKey, std::vector<uint8_t>(options.job_token.begin(), options.job_token.end()));
    return absl::OkStatus();
  }
  const std::vector<uint8_t> theirs = store.get(kJobTokenKey);  // waits up to the timeout
  if (std::string(theirs.begin(), theirs.end()) == options.job_token) return absl::OkStatus();
  const std::string where = options.store_file.empty()
                                ? absl::StrCat(options.master_addr, ":", options.master_port)
                                : options.store_file;
  return absl::PermissionDeniedError(absl::StrCat(
      "rank ", options.rank, ": the rendezvous store at ", where, " belongs to another job (its job token differs from this worker's "
      "ACCEL_JOB_TOKEN); refusing to join it"));
}

bool IsLoopback(const std::string& addr) {
  return addr == "localhost" || absl::StartsWith(addr, "127.") || addr == "::1";
}

class StoreRendezvous final : public Rendezvous {
 public:
  // store: tcp itself, or a prefix of it (a store torchrun's agent serves to several attempts),
  // or a FileStore (tcp null).
  StoreRendezvous(RendezvousOptions options, c10::intrusive_ptr<c10d::TCPStore> tcp,
                c10::intrusive_ptr<c10d::Store> store)
      : options_(std::move(options)), tcp_(std::move(tcp)), store_(std::move(store)) {}

  // 0 for a file store.
  int Port() const override { return tcp_ ? tcp_->getPort() : 0; }
  const RendezvousOptions& Options() const override { return options_; }

  absl::StatusOr<std::shared_ptr<Communicator>> CreateWorld(CommBackend backend) override {
    std::vector<int> all(options_.world_size);
    for (int r = 0; r < options_.world_size; ++r) all[r] = r;
    if (world_calls_ == 0) {
      if (absl::Status arrived = AwaitAllRanks(); !arrived.ok()) return arrived;
    }
    const std::string prefix = absl::StrCat("accel/world/", world_calls_++);
    return CreateOne(prefix, all, options_.rank, backend);
  }

  absl::StatusOr<std::vector<std::shared_ptr<Communicator>>> CreateGroups(
      const std::vector<std::vector<int>>& rank_lists, CommBackend backend) override {
    for (size_t i = 0; i < rank_lists.size(); ++i) {
      const std::vector<int>& list = rank_lists[i];
      if (list.empty()) return absl::InvalidArgumentError(absl::StrCat("process group ", i, " is empty"));
      std::set<int> seen;
      for (int r : list) {
        if (r < 0 || r >= options_.world_size) {
          return absl::InvalidArgumentError(absl::StrCat("process group ", i, " has rank ", r,
                                                         " outside world of ", options_.world_size));
        }
        if (!seen.insert(r).second) {
          return absl::InvalidArgumentError(
              absl::StrCat("process group ", i, " lists rank ", r, " twice"));
        }
      }
    }
    // The call counter is part of the prefix so a second set of groups never collides with the
    // first in the store; all ranks make the same calls in the same order.
    const int call = group_calls_++;
    std::vector<std::shared_ptr<Communicator>> groups(rank_lists.size());
    for (size_t i = 0; i < rank_lists.size(); ++i) {
      const std::vector<int>& list = rank_lists[i];
      int group_rank = -1;
      for (size_t j = 0; j < list.size(); ++j) {
        if (list[j] == options_.rank) group_rank = static_cast<int>(j);
      }
      if (group_rank < 0) continue;
      const std::string prefix = absl::StrCat("accel/groups/", call, "/", i);
      absl::StatusOr<std::shared_ptr<Communicator>> comm = CreateOne(prefix, list, group_rank, backend);
      if (!comm.ok()) return comm.status();
      groups[i] = *std::move(comm);
    }
    return groups;
  }

  absl::StatusOr<std::vector<int>> RollCall(std::chrono::milliseconds wait) override {
    auto result = std::make_shared<std::promise<std::vector<int>>>();
    std::future<std::vector<int>> done = result->get_future();
    // Detached: a store that never answers must not keep the failing rank from exiting. The
    // thread holds its own references to the store and the promise.
    std::thread([store = store_, world = options_.world_size, rank = options_.rank, wait, result] {
      try {
        store->set(absl::StrCat("accel/roll_call/", rank), std::vector<uint8_t>{1});
        std::this_thread::sleep_for(wait);
        std::vector<int> silent;
        for (int r = 0; r < world; ++r) {
          if (!store->check({absl::StrCat("accel/roll_call/", r)})) silent.push_back(r);
        }
        result->set_value(std::move(silent));
      } catch (...) {
        result->set_exception(std::current_exception());
      }
    }).detach();
    if (done.wait_for(2 * wait) != std::future_status::ready) {
      return absl::UnavailableError("the store did not answer");
    }
    try {
      return done.get();
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat("the store did not answer: ", e.what()));
    }
  }

 private:
  absl::StatusOr<std::shared_ptr<Communicator>> CreateOne(const std::string& prefix,
                                                          const std::vector<int>& members,
                                                          int group_rank, CommBackend backend) {
    const int size = static_cast<int>(members.size());
    try {
      auto store = c10::make_intrusive<c10d::PrefixStore>(prefix, store_);
      if (backend == CommBackend::kGloo) {
        auto opts = c10d::ProcessGroupGloo::Options::create(options_.timeout);
        opts->devices.push_back(GlooDevice());
        auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, group_rank, size, opts);
        return std::shared_ptr<Communicator>(
            new C10dCommunicator(pg, backend, members, options_.timeout));
      }
#if ACCEL_NCCL_ENABLED
      auto opts = c10d::ProcessGroupNCCL::Options::create();
      opts->timeout = options_.timeout;
      auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, group_rank, size, opts);
      return std::shared_ptr<Communicator>(
          new C10dCommunicator(pg, backend, members, options_.timeout));
#else
      return absl::UnimplementedError("this build of accel has no NCCL support (LibTorch without CUDA/NCCL)");
#endif
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat("creating process group {",
                                                 absl::StrJoin(members, ","), "} failed on rank ",
                                                 options_.rank, ": ", e.what()));
    }
  }

  // Every rank waits here, up to the store's (start-up) timeout, until all have arrived: workers
  // of one job may start seconds apart (another node, a loaded machine), while Gloo expects its
  // peers within the collective timeout, which may be short.
  absl::Status AwaitAllRanks() {
    try {
      // The value as bytes: LibTorch 2.x adds a std::string overload of Store::set, so {1}
      // alone is ambiguous there.
      if (store_->add("accel/arrived", 1) == options_.world_size) {
        store_->set("accel/all_arrived", std::vector<uint8_t>{1});
      }
      store_->wait({"accel/all_arrived"});
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrCat("rank ", options_.rank, " waited ",
                                                 StartupTimeout(options_).count() / 1000,
                                                 " s for all ", options_.world_size,
                                                 " ranks to reach the rendezvous: ", e.what()));
    }
    return absl::OkStatus();
  }

  // One transport device serves every Gloo group of this process.
  std::shared_ptr<::gloo::transport::Device> GlooDevice() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!gloo_device_) {
      std::string host = options_.gloo_hostname;
      if (host.empty() && IsLoopback(options_.master_addr)) host = "127.0.0.1";
      gloo_device_ = host.empty() ? c10d::ProcessGroupGloo::createDefaultDevice()
                                  : c10d::ProcessGroupGloo::createDeviceForHostname(host);
    }
    return gloo_device_;
  }

  RendezvousOptions options_;
  c10::intrusive_ptr<c10d::TCPStore> tcp_;
  c10::intrusive_ptr<c10d::Store> store_;
  std::mutex mu_;
  std::shared_ptr<::gloo::transport::Device> gloo_device_;
  int world_calls_ = 0;
  int group_calls_ = 0;
};

}  // namespace

bool NcclAvailable() { return ACCEL_NCCL_ENABLED != 0; }

absl::StatusOr<std::unique_ptr<Rendezvous>> Rendezvous::Connect(const RendezvousOptions& options) {
  if (options.world_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("world size must be >= 1, got ", options.world_size));
  }
  if (options.rank < 0 || options.rank >= options.world_size) {
    return absl::InvalidArgumentError(
        absl::StrCat("rank ", options.rank, " outside world of ", options.world_size));
  }
  if (options.master_port < 0 || options.master_port > 65535 ||
      (options.master_port == 0 && options.rank != 0)) {
    return absl::InvalidArgumentError(absl::StrCat("bad master port ", options.master_port,
                                                   " (0 is allowed only on rank 0)"));
  }
  // Rank 0 serving the store fails to bind (a port in use), the others fail to connect: the
  // message says which, so a bind failure is not reported as an unreachable store.
  bool serving = false;
  try {
    if (!options.store_file.empty()) {
      auto file = c10::make_intrusive<c10d::FileStore>(options.store_file, options.world_size);
      file->setTimeout(StartupTimeout(options));
      if (absl::Status same_job = CheckJobToken(*file, options); !same_job.ok()) return same_job;
      c10::intrusive_ptr<c10d::Store> store = std::move(file);
      return std::unique_ptr<Rendezvous>(new StoreRendezvous(options, {}, std::move(store)));
    }
    c10d::TCPStoreOptions store_opts;
    store_opts.port = static_cast<std::uint16_t>(options.master_port);
    // Under torchrun's static rendezvous its agent already serves the store on MASTER_PORT.
    store_opts.isServer = options.rank == 0 && !options.agent_store;
    serving = store_opts.isServer;
    store_opts.numWorkers = options.world_size;
    // Waiting for workers in the constructor would block rank 0 before it can report a port it
    // bound itself; the first group creation synchronizes all ranks anyway.
    store_opts.waitWorkers = false;
    store_opts.timeout = StartupTimeout(options);
    // The server listens on the master address only (listen_address.h), unless that name means
    // loopback on this machine alone.
    std::unique_ptr<ListenAddressScope> listen;
    if (store_opts.isServer) {
      absl::StatusOr<std::string> address = StoreListenAddress(options.master_addr);
      if (!address.ok()) return address.status();
      if (address->empty()) {
        std::fprintf(stderr,
                     "warning: the master address %s resolves to a loopback address on this machine; the "
                     "rendezvous store listens on every interface so that other nodes can reach it\n",
                     options.master_addr.c_str());
      } else {
        absl::StatusOr<std::unique_ptr<ListenAddressScope>> scope =
            ListenAddressScope::Create(*address, options.master_port);
        if (!scope.ok()) return scope.status();
        listen = *std::move(scope);
      }
    }
    auto tcp = c10::make_intrusive<c10d::TCPStore>(options.master_addr, store_opts);
    serving = false;  // bound and listening: what fails from here on is talking to it
    listen.reset();
    // An agent's store outlives the workers it restarts: each attempt keeps its keys apart.
    c10::intrusive_ptr<c10d::Store> store = tcp;
    if (options.agent_store) {
      store = c10::make_intrusive<c10d::PrefixStore>(absl::StrCat("attempt_", options.attempt), tcp);
    }
    if (absl::Status same_job = CheckJobToken(*store, options); !same_job.ok()) return same_job;
    return std::unique_ptr<Rendezvous>(new StoreRendezvous(options, std::move(tcp), std::move(store)));
  } catch (const std::exception& e) {
    if (serving) {
      return absl::UnavailableError(absl::StrCat("cannot serve the rendezvous store on ", options.master_addr, ":",
                                                 options.master_port, " from rank ", options.rank, ": ", e.what()));
    }
    return absl::UnavailableError(absl::StrCat("cannot reach the rendezvous store at ",
                                               options.master_addr, ":", options.master_port,
                                               " from rank ", options.rank, ": ", e.what()));
  }
}

}  // namespace accel::exec
