#include "executor/communicator.h"

#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>

#include <atomic>

#include "multi_rank.h"

namespace accel::exec {
namespace {
using testing::Expect;
using testing::Ok;
using testing::RunRanks;

void CheckAllOk(const std::vector<std::string>& errors) {
  for (size_t r = 0; r < errors.size(); ++r) {
    INFO("rank " << r);
    CHECK(errors[r] == "");
  }
}

// Rank r's input: a deterministic tensor that differs per rank.
torch::Tensor Input(int rank, int64_t n) { return torch::arange(n, torch::kFloat) * (rank + 1) + rank * 0.5; }

TEST_CASE("collectives match a single-process reference") {
  for (int world : {2, 3, 4}) {
    INFO("world " << world);
    const int64_t n = 6;
    // Reference computed locally from all ranks' inputs.
    torch::Tensor sum = torch::zeros({n});
    std::vector<torch::Tensor> inputs;
    for (int r = 0; r < world; ++r) {
      inputs.push_back(Input(r, n));
      sum += inputs.back();
    }
    torch::Tensor gathered = torch::cat(inputs);
    torch::Tensor big_sum = torch::zeros({n * world});
    for (int r = 0; r < world; ++r) big_sum += torch::cat(inputs) * (r + 1);

    CheckAllOk(RunRanks(world, [&](int rank, Rendezvous& rdzv) {
      auto comm_or = rdzv.CreateWorld(CommBackend::kGloo);
      Ok(comm_or.status());
      Communicator& comm = **comm_or;
      Expect(comm.Rank() == rank && comm.Size() == world, "rank/size");

      torch::Tensor t = Input(rank, n);
      Ok(comm.AllReduce(t, ReduceOp::kSum));
      Expect(torch::allclose(t, sum), "all-reduce sum");
      t = Input(rank, n).view({2, 3});
      Ok(comm.AllReduce(t, ReduceOp::kAvg));
      Expect(torch::allclose(t, (sum / world).view({2, 3})), "all-reduce avg");

      torch::Tensor a = Input(rank, n);
      auto work = comm.AllReduceAsync(a, ReduceOp::kAvg);
      Ok(work.status());
      Ok((*work)->Wait());
      Expect(torch::allclose(a, sum / world), "async all-reduce avg");

      torch::Tensor out = torch::empty({world, n});
      Ok(comm.AllGather(Input(rank, n), out));
      Expect(torch::equal(out.view({-1}), gathered), "flat all-gather");

      // Reduce-scatter: rank r contributes (r+1) * gathered, receives chunk `rank` of the sum.
      torch::Tensor chunk = torch::empty({n});
      Ok(comm.ReduceScatter(gathered * (rank + 1), chunk, ReduceOp::kSum));
      Expect(torch::allclose(chunk, big_sum.narrow(0, rank * n, n)), "reduce-scatter sum");
      Ok(comm.ReduceScatter(gathered * (rank + 1), chunk, ReduceOp::kAvg));
      Expect(torch::allclose(chunk, big_sum.narrow(0, rank * n, n) / world), "reduce-scatter avg");

      torch::Tensor b = Input(rank, n);
      Ok(comm.Broadcast(b, world - 1));
      Expect(torch::equal(b, inputs[world - 1]), "broadcast");

      // Ring: send to the right, receive from the left; even ranks send first to avoid relying on
      // buffering.
      const int right = (rank + 1) % world;
      const int left = (rank + world - 1) % world;
      torch::Tensor received = torch::empty({n});
      if (rank % 2 == 0) {
        Ok(comm.Send(Input(rank, n), right, 7));
        Ok(comm.Recv(received, left, 7));
      } else {
        Ok(comm.Recv(received, left, 7));
        Ok(comm.Send(Input(rank, n), right, 7));
      }
      Expect(torch::equal(received, inputs[left]), "send/recv");

      torch::Tensor ints = torch::full({3}, rank + 1, torch::kLong);
      Ok(comm.AllReduce(ints, ReduceOp::kSum));
      Expect(ints[0].item<int64_t>() == world * (world + 1) / 2, "integer all-reduce");
      Expect(!comm.AllReduce(ints, ReduceOp::kAvg).ok(), "integer avg is rejected");
      Ok(comm.Barrier());
    }));
  }
}

TEST_CASE("bf16 collectives run on Gloo: gathers move the exact bits, sums round once") {
  // LibTorch 1.13's Gloo has no bf16 all-gather or sum; the communicator sends bf16 as fp16 bits
  // and sums an fp32 copy. Inputs chosen so that every value and every sum is exact in bf16.
  const int world = 3;
  const int64_t n = 4;
  auto input = [&](int rank) {
    return (torch::arange(n, torch::kFloat) + 8 * rank + 0.5).to(torch::kBFloat16);
  };
  torch::Tensor sum = torch::zeros({n}, torch::kFloat);
  std::vector<torch::Tensor> inputs;
  for (int r = 0; r < world; ++r) {
    inputs.push_back(input(r));
    sum += inputs.back().to(torch::kFloat);
  }
  const torch::Tensor gathered = torch::cat(inputs);
  CheckAllOk(RunRanks(world, [&](int rank, Rendezvous& rdzv) {
    auto comm_or = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(comm_or.status());
    Communicator& comm = **comm_or;
    torch::Tensor out = torch::empty({world * n}, torch::kBFloat16);
    Ok(comm.AllGather(input(rank), out));
    Expect(torch::equal(out, gathered), "bf16 all-gather");
    torch::Tensor async_out = torch::empty({world * n}, torch::kBFloat16);
    auto gather = comm.AllGatherAsync(input(rank), async_out);
    Ok(gather.status());
    Ok((*gather)->Wait());
    Expect(torch::equal(async_out, gathered), "bf16 async all-gather");

    torch::Tensor t = input(rank);
    Ok(comm.AllReduce(t, ReduceOp::kSum));
    Expect(t.scalar_type() == torch::kBFloat16 && torch::equal(t.to(torch::kFloat), sum),
           "bf16 all-reduce");
    torch::Tensor a = input(rank);
    auto reduce = comm.AllReduceAsync(a, ReduceOp::kSum);
    Ok(reduce.status());
    Ok((*reduce)->Wait());
    Expect(torch::equal(a.to(torch::kFloat), sum), "bf16 async all-reduce");

    // Reduce-scatter of the gathered vector: rank r receives chunk r of world * gathered.
    torch::Tensor chunk = torch::empty({n}, torch::kBFloat16);
    auto scatter = comm.ReduceScatterAsync(gathered.clone(), chunk, ReduceOp::kAvg);
    Ok(scatter.status());
    Ok((*scatter)->Wait());
    Expect(torch::equal(chunk, inputs[rank]), "bf16 async reduce-scatter avg");
    torch::Tensor sync_chunk = torch::empty({n}, torch::kBFloat16);
    Ok(comm.ReduceScatter(gathered, sync_chunk, ReduceOp::kSum));
    Expect(torch::equal(sync_chunk.to(torch::kFloat), inputs[rank].to(torch::kFloat) * world),
           "bf16 reduce-scatter sum");
  }));
}

// Rows rank `from` sends rank `to` in the all-to-all test: uneven, some empty (from + 2·to) mod 4.
int64_t AllToAllRows(int from, int to) { return (from + 2 * to) % 4; }

// The rows themselves, [AllToAllRows(from, to), 3], each value naming sender, receiver and row.
torch::Tensor AllToAllPiece(int from, int to, c10::ScalarType dtype) {
  const int64_t rows = AllToAllRows(from, to);
  return (torch::arange(rows * 3, torch::kFloat).view({rows, 3}) + 100 * from + 10 * to).to(dtype);
}

TEST_CASE("all-to-all with uneven and empty splits delivers every piece in rank order, fp32 and bf16") {
  for (int world : {2, 3, 4}) {
    INFO("world " << world);
    CheckAllOk(RunRanks(world, [&](int rank, Rendezvous& rdzv) {
      auto comm_or = rdzv.CreateWorld(CommBackend::kGloo);
      Ok(comm_or.status());
      Communicator& comm = **comm_or;
      for (c10::ScalarType dtype : {torch::kFloat, torch::kBFloat16}) {
        std::vector<torch::Tensor> sent, expected;
        std::vector<int64_t> in_splits, out_splits;
        for (int q = 0; q < world; ++q) {
          sent.push_back(AllToAllPiece(rank, q, dtype));
          in_splits.push_back(AllToAllRows(rank, q));
          expected.push_back(AllToAllPiece(q, rank, dtype));
          out_splits.push_back(AllToAllRows(q, rank));
        }
        const torch::Tensor want = torch::cat(expected);
        torch::Tensor out = torch::full(want.sizes(), -1.0, torch::TensorOptions().dtype(dtype));
        Ok(comm.AllToAll(torch::cat(sent), out, in_splits, out_splits));
        Expect(torch::equal(out, want), "all-to-all pieces");
      }
    }));
  }
}

TEST_CASE("all-to-all rejects splits that do not match the rows") {
  CheckAllOk(RunRanks(2, [&](int rank, Rendezvous& rdzv) {
    auto comm_or = rdzv.CreateWorld(CommBackend::kGloo);
    Ok(comm_or.status());
    Communicator& comm = **comm_or;
    torch::Tensor out = torch::empty({4, 3});
    const absl::Status sum = comm.AllToAll(torch::zeros({4, 3}), out, {1, 2}, {2, 2});
    Expect(sum.message() == "AllToAll: input splits must be 2 row counts summing to 4, got 2 summing to 3",
           std::string(sum.message()));
    const absl::Status count = comm.AllToAll(torch::zeros({4, 3}), out, {4}, {2, 2});
    Expect(count.message() == "AllToAll: input splits must be 2 row counts summing to 4, got 1 summing to 4",
           std::string(count.message()));
    const absl::Status negative = comm.AllToAll(torch::zeros({4, 3}), out, {5, -1}, {2, 2});
    Expect(negative.message() == "AllToAll: negative input split -1", std::string(negative.message()));
    torch::Tensor wide = torch::empty({4, 2});
    const absl::Status shape = comm.AllToAll(torch::zeros({4, 3}), wide, {2, 2}, {2, 2});
    Expect(shape.message() ==
               "AllToAll: input Float[4, 3] and contiguous output Float[4, 2] need rows of one shape and dtype",
           std::string(shape.message()));
  }));
}

TEST_CASE("sub-groups from rank lists reduce only among their members") {
  const std::vector<std::vector<int>> lists = {{0, 1}, {2, 3}, {0, 2}, {1, 3}, {3, 1, 0}};
  CheckAllOk(RunRanks(4, [&](int rank, Rendezvous& rdzv) {
    auto groups = rdzv.CreateGroups(lists, CommBackend::kGloo);
    Ok(groups.status());
    for (size_t i = 0; i < lists.size(); ++i) {
      const auto& list = lists[i];
      const bool member = std::find(list.begin(), list.end(), rank) != list.end();
      Expect(((*groups)[i] != nullptr) == member, "membership");
      if (!member) continue;
      Communicator& comm = *(*groups)[i];
      Expect(comm.GlobalRanks() == list, "global ranks");
      Expect(list[comm.Rank()] == rank, "group rank order follows the list");
      torch::Tensor t = torch::full({2}, static_cast<float>(1 << rank));
      Ok(comm.AllReduce(t, ReduceOp::kSum));
      int expected = 0;
      for (int r : list) expected += 1 << r;
      Expect(t[0].item<float>() == expected, "group sum");
      torch::Tensor out = torch::empty({static_cast<int64_t>(list.size())});
      Ok(comm.AllGather(torch::full({1}, static_cast<float>(rank)), out));
      for (size_t j = 0; j < list.size(); ++j) Expect(out[j].item<float>() == list[j], "group gather order");
    }
  }));
}

TEST_CASE("bad rank lists are rejected before any group is created") {
  auto errors = RunRanks(2, [&](int rank, Rendezvous& rdzv) {
    auto dup = rdzv.CreateGroups({{0, 0}}, CommBackend::kGloo);
    Expect(dup.status().message() == "process group 0 lists rank 0 twice", std::string(dup.status().message()));
    auto range = rdzv.CreateGroups({{0, 1}, {2}}, CommBackend::kGloo);
    Expect(range.status().message() == "process group 1 has rank 2 outside world of 2",
           std::string(range.status().message()));
    Expect(rdzv.CreateGroups({{}}, CommBackend::kGloo).status().message() == "process group 0 is empty", "empty");
  });
  CheckAllOk(errors);
  RendezvousOptions bad;
  bad.rank = 3;
  bad.world_size = 2;
  CHECK(Rendezvous::Connect(bad).status().message() == "rank 3 outside world of 2");
}

TEST_CASE("a collective a peer never joins times out instead of hanging") {
  std::promise<void> done;
  std::shared_future<void> rank0_done = done.get_future().share();
  absl::Status rank0_status;
  auto errors = RunRanks(
      2,
      [&](int rank, Rendezvous& rdzv) {
        auto comm = rdzv.CreateWorld(CommBackend::kGloo);
        Ok(comm.status());
        if (rank == 0) {
          torch::Tensor t = torch::ones({4});
          rank0_status = (*comm)->AllReduce(t, ReduceOp::kSum);
          done.set_value();
        } else {
          rank0_done.wait();
        }
      },
      std::chrono::seconds(3));
  CheckAllOk(errors);
  INFO(rank0_status.message());
  CHECK(rank0_status.code() == absl::StatusCode::kDeadlineExceeded);
}

TEST_CASE("a roll call after a failure names the ranks that did not report") {
  // Ranks 0 and 2 report; rank 1 (a dead peer) stays silent until they are done.
  std::promise<void> done;
  std::shared_future<void> reported = done.get_future().share();
  std::vector<std::vector<int>> silent(3);
  std::atomic<int> finished{0};
  CheckAllOk(RunRanks(3, [&](int rank, Rendezvous& rdzv) {
    Ok(rdzv.CreateWorld(CommBackend::kGloo).status());
    if (rank == 1) {
      reported.wait();
      return;
    }
    absl::StatusOr<std::vector<int>> call = rdzv.RollCall(std::chrono::milliseconds(300));
    Ok(call.status());
    silent[rank] = *call;
    if (++finished == 2) done.set_value();
  }));
  CHECK(silent[0] == std::vector<int>{1});
  CHECK(silent[2] == std::vector<int>{1});
}

TEST_CASE("a worker with another job's token is refused at the rendezvous") {
  RendezvousOptions host;
  host.master_addr = "127.0.0.1";
  host.master_port = 0;
  host.world_size = 2;
  host.rank = 0;
  host.timeout = std::chrono::seconds(10);
  host.job_token = "job-a";
  auto rank0 = Rendezvous::Connect(host);
  REQUIRE(rank0.ok());
  RendezvousOptions stray = host;
  stray.rank = 1;
  stray.master_port = (*rank0)->Port();
  stray.job_token = "job-b";
  auto refused = Rendezvous::Connect(stray);
  CHECK(refused.status().code() == absl::StatusCode::kPermissionDenied);
  CHECK(refused.status().message() ==
        "rank 1: the rendezvous store at 127.0.0.1:" + std::to_string(stray.master_port) +
            " belongs to another job (its job token differs from this worker's "
            "ACCEL_JOB_TOKEN); refusing to join it");
  stray.job_token = "";
  CHECK(Rendezvous::Connect(stray).status().code() == absl::StatusCode::kPermissionDenied);
  // This job's own worker joins.
  stray.job_token = "job-a";
  CHECK(Rendezvous::Connect(stray).ok());
}

TEST_CASE("ranks meet through a file store: groups, collectives and the job token") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("accel_file_store_" + std::to_string(::getpid()))).string();
  std::filesystem::remove(path);
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      RendezvousOptions options;
      options.world_size = 2;
      options.rank = rank;
      options.timeout = std::chrono::seconds(30);
      options.job_token = "job-a";
      options.store_file = path;
      auto rdzv = Rendezvous::Connect(options);
      if (!rdzv.ok()) {
        errors[rank] = std::string(rdzv.status().message());
        return;
      }
      CHECK((*rdzv)->Port() == 0);  // nothing listens
      auto world = (*rdzv)->CreateWorld(CommBackend::kGloo);
      if (!world.ok()) {
        errors[rank] = std::string(world.status().message());
        return;
      }
      torch::Tensor t = torch::full({3}, static_cast<float>(rank + 1));
      if (absl::Status s = (*world)->AllReduce(t, ReduceOp::kSum); !s.ok()) {
        errors[rank] = std::string(s.message());
        return;
      }
      if (!torch::equal(t, torch::full({3}, 3.0f))) errors[rank] = "wrong sum";
    });
  }
  for (std::thread& t : threads) t.join();
  CheckAllOk(errors);
  // The last rank to close the store removed its file.
  CHECK_FALSE(std::filesystem::exists(path));

  // A worker with another job's token is refused, naming the file.
  RendezvousOptions host;
  host.world_size = 2;
  host.timeout = std::chrono::seconds(10);
  host.job_token = "job-a";
  host.store_file = path;
  auto rank0 = Rendezvous::Connect(host);
  REQUIRE(rank0.ok());
  RendezvousOptions stray = host;
  stray.rank = 1;
  stray.job_token = "job-b";
  CHECK(Rendezvous::Connect(stray).status().message() ==
        "rank 1: the rendezvous store at " + path +
            " belongs to another job (its job token differs from this worker's ACCEL_JOB_TOKEN); "
            "refusing to join it");
  rank0->reset();
  std::filesystem::remove(path);
}

TEST_CASE("nccl is reported unavailable on a CPU-only build") {
  if (NcclAvailable()) return;
  auto errors = RunRanks(1, [&](int, Rendezvous& rdzv) {
    auto comm = rdzv.CreateWorld(CommBackend::kNccl);
    Expect(comm.status().code() == absl::StatusCode::kUnimplemented, std::string(comm.status().message()));
  });
  CheckAllOk(errors);
}

}  // namespace
}  // namespace accel::exec
