#include "executor/calibrate/every_core.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include <catch2/catch.hpp>

namespace accel::exec {
namespace {

TEST_CASE("MeasureOnEveryCore averages what each forked process measures", "[calibrate]") {
  // Each child reports a constant and its own pid: the constant comes back exactly, and the
  // pid figure is the mean over child processes, never the parent's pid.
  auto result = MeasureOnEveryCore(3, [] {
    return absl::StatusOr<std::vector<double>>(
        std::vector<double>{2.5, static_cast<double>(::getpid())});
  });
  REQUIRE(result.ok());
  REQUIRE(result->size() == 2);
  CHECK((*result)[0] == 2.5);
  CHECK((*result)[1] != static_cast<double>(::getpid()));

  auto failed = MeasureOnEveryCore(2, [] {
    return absl::StatusOr<std::vector<double>>(absl::UnimplementedError("no bf16 here"));
  });
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().message() == "no bf16 here");

  // Processes that disagree on the number of figures are an error, not a silent mean: the one
  // child that creates the marker file first reports one figure, the other two.
  const std::string marker = "/tmp/accel_every_core_test." + std::to_string(::getpid());
  ::unlink(marker.c_str());
  auto ragged = MeasureOnEveryCore(2, [&] {
    const int fd = ::open(marker.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
    if (fd >= 0) ::close(fd);
    return absl::StatusOr<std::vector<double>>(std::vector<double>(fd >= 0 ? 1 : 2, 1.0));
  });
  ::unlink(marker.c_str());
  REQUIRE_FALSE(ragged.ok());
  CHECK(ragged.status().message() == "measuring processes disagree in length");
}

TEST_CASE("RunForkedGroup runs every rank in its own process and returns what they wrote",
          "[calibrate]") {
  const pid_t parent = ::getpid();
  auto text = RunForkedGroup(3, [parent](int rank, int fd) {
    if (::getpid() == parent) return 9;  // never: each rank is a child
    const std::string line = std::to_string(rank) + "\n";
    // Each rank writes one short line; a pipe write this small is atomic.
    return ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) ? 0 : 8;
  });
  REQUIRE(text.ok());
  std::string sorted = *text;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == "\n\n\n012");

  auto failed = RunForkedGroup(2, [](int rank, int) { return rank == 1 ? 5 : 0; });
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.status().message() == "a process of the group failed");
}

}  // namespace
}  // namespace accel::exec
