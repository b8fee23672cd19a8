// Test helper: runs one function per rank on threads of this process, the ranks meeting through a
// loopback TCPStore on a port rank 0 binds itself (no fixed ports, so tests can run in parallel).
#ifndef ACCEL_TESTS_EXECUTOR_MULTI_RANK_H_
#define ACCEL_TESTS_EXECUTOR_MULTI_RANK_H_

#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "executor/communicator.h"

namespace accel::exec::testing {

// Calls body(rank, rendezvous) on world_size threads and waits for all. Returns one message per
// rank: empty when body returned normally, else the failure (connect error or exception text).
// timeout bounds every collective so a broken test fails instead of hanging (start-up, connecting
// and meeting in the first CreateWorld, may take max(timeout, 5 min)). The default is generous
// because a Gloo group's connect shares it: on a machine that other jobs keep busy, a rank thread
// can stall for over a minute, and a peer that gives up closes the connection on the others.
inline std::vector<std::string> RunRanks(int world_size, const std::function<void(int, Rendezvous&)>& body,
                                         std::chrono::milliseconds timeout = std::chrono::minutes(5)) {
  std::vector<std::string> errors(world_size);
  // Stores outlive every body: rank 0 hosts the server, and a peer still connecting or using it
  // must not find it gone.
  std::vector<std::unique_ptr<Rendezvous>> stores(world_size);
  std::promise<int> port_promise;
  std::shared_future<int> port = port_promise.get_future().share();
  std::vector<std::thread> threads;
  for (int rank = 0; rank < world_size; ++rank) {
    threads.emplace_back([&, rank] {
      RendezvousOptions options;
      options.master_addr = "127.0.0.1";
      options.world_size = world_size;
      options.rank = rank;
      options.timeout = timeout;
      options.master_port = rank == 0 ? 0 : port.get();
      if (options.master_port < 0) {
        errors[rank] = "rank 0 failed to start the store";
        return;
      }
      auto rdzv = Rendezvous::Connect(options);
      if (rank == 0) port_promise.set_value(rdzv.ok() ? (*rdzv)->Port() : -1);
      if (!rdzv.ok()) {
        errors[rank] = std::string(rdzv.status().message());
        return;
      }
      stores[rank] = *std::move(rdzv);
      try {
        body(rank, *stores[rank]);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  stores.clear();
  return errors;
}

// Throws std::runtime_error with the status text when status is not OK (for use inside RunRanks
// bodies, where Catch2 assertions are not thread-safe).
inline void Ok(const absl::Status& status) {
  if (!status.ok()) throw std::runtime_error(std::string(status.message()));
}

// Throws unless condition holds; message says what was expected.
inline void Expect(bool condition, const std::string& message) {
  if (!condition) throw std::runtime_error(message);
}

}  // namespace accel::exec::testing

#endif  // ACCEL_TESTS_EXECUTOR_MULTI_RANK_H_
