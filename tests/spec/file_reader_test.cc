// ReadFileLimited on what is not a regular file: FIFOs, pipes, devices.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "spec/file_reader.h"
#include "tests/common/temp_dir.h"

using accel::spec::ReadFileLimited;

// `accel validate FIFO` with no writer blocked forever (#42): it now waits a bounded time.
TEST_CASE("ReadFileLimited gives up on a FIFO nothing writes to", "[file_reader]") {
  accel::testing::TempDir dir("accel_fifo");
  const std::string fifo = dir.File("job.yaml");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::string> text = ReadFileLimited(fifo, 1024, std::chrono::milliseconds(200));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  REQUIRE_FALSE(text.ok());
  CHECK(text.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(text.status().message() == "is a FIFO and nothing wrote to it within 0.2 s");
}

TEST_CASE("ReadFileLimited reads a FIFO once a writer comes", "[file_reader]") {
  accel::testing::TempDir dir("accel_fifo");
  const std::string fifo = dir.File("job.yaml");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ofstream out(fifo);
    out << "version: 1\n";
    out.flush();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // silent, but connected
    out << "name: x\n";
  });
  absl::StatusOr<std::string> text = ReadFileLimited(fifo, 1024, std::chrono::milliseconds(200));
  writer.join();
  REQUIRE(text.ok());
  CHECK(*text == "version: 1\nname: x\n");
}

TEST_CASE("ReadFileLimited refuses devices", "[file_reader]") {
  absl::StatusOr<std::string> zero = ReadFileLimited("/dev/zero", 1024);
  CHECK(zero.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(zero.status().message() == "is a character device, not a file or a pipe");
}
