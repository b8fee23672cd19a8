// The full-disk drill for the checkpoint store: a checkpoint that does not fit must leave the
// previous one intact, fail with a clear error, free its partial files, and leave resume (the
// newest intact checkpoint) pointing at the previous one.
//
// The disk really fills where the test may mount: a child process enters a new mount namespace
// (unshare(CLONE_NEWNS), needs CAP_SYS_ADMIN, e.g. root in a container) and mounts a 256 KiB
// tmpfs on the checkpoint root, so the write fails with ENOSPC. Where it may not, the child
// simulates the full disk with RLIMIT_FSIZE (SIGXFSZ ignored), so the write fails with EFBIG
// ("File too large") at the same point. The report says which mode ran.
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "tests/common/temp_root.h"
#include "tests/common/files.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;
constexpr size_t kFsBytes = 256 * 1024;

// Makes writes under root fail once about kFsBytes are used: a tmpfs when try_mount and the
// process may mount, else RLIMIT_FSIZE. Returns "tmpfs" or "rlimit".
std::string FillableDisk(const fs::path& root, bool try_mount) {
  fs::create_directories(root);
  if (try_mount && ::unshare(CLONE_NEWNS) == 0 &&
      ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
      ::mount("tmpfs", root.c_str(), "tmpfs", 0,
              ("size=" + std::to_string(kFsBytes)).c_str()) == 0) {
    return "tmpfs";
  }
  ::signal(SIGXFSZ, SIG_IGN);
  const rlimit limit{kFsBytes, kFsBytes};
  ::setrlimit(RLIMIT_FSIZE, &limit);
  return "rlimit";
}

std::string Steps(const CheckpointStore& store) {
  absl::StatusOr<std::vector<CheckpointInfo>> all = store.List();
  if (!all.ok()) return std::string(all.status().message());
  std::string out;
  for (const CheckpointInfo& info : *all) out += std::to_string(info.step) + " ";
  return out;
}

// The drill, in the child: one line per observation, written to report.
void Drill(const fs::path& root, const fs::path& report, bool try_mount) {
  std::ofstream out(report);
  out << FillableDisk(root, try_mount) << "\n";
  CheckpointStore store(root.string(), 2);
  const std::string small(64 * 1024, 's');
  const std::string too_big(512 * 1024, 'b');
  out << "step 2: " << store.Write(2, {{"model.bin", small}}).status().ToString() << "\n";
  out << "step 4: " << store.Write(4, {{"model.bin", too_big}}).status().message() << "\n";
  out << "published: " << Steps(store) << "\n";
  out << "step 2 verifies: " << CheckpointStore::Verify((root / "step_00000002").string()).ToString()
      << "\n";
  out << "temporaries left: " << fs::exists(root / ".tmp-step_00000004") << "\n";
  absl::StatusOr<CheckpointInfo> latest = store.LatestGood();
  out << "resume from: " << (latest.ok() ? std::to_string(latest->step) : "none") << "\n";
  // The partial step 4 was freed: another small checkpoint fits again.
  out << "step 6: " << store.Write(6, {{"model.bin", small}}).status().ToString() << "\n";
  out << "published: " << Steps(store) << "\n";
}

using accel::testing::ReadAll;

TEST_CASE("a checkpoint that does not fit leaves the previous one intact and says why",
          "[checkpoint][fault]") {
  // Both simulations where mounting works; the RLIMIT_FSIZE one alone elsewhere.
  const bool try_mount = GENERATE(true, false);
  testing::TempRoot dir("accel_full_disk_");
  const fs::path root = dir.path / "ckpt";
  const fs::path report = dir.path / "report.txt";
  fs::create_directories(dir.path);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    Drill(root, report, try_mount);
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  const std::string text = ReadAll(report);
  INFO(text);
  const std::string mode = text.substr(0, text.find('\n'));
  REQUIRE((mode == "tmpfs" || mode == "rlimit"));
  if (!try_mount) REQUIRE(mode == "rlimit");
  const std::string why = mode == "tmpfs" ? "No space left on device" : "File too large";
  CHECK(text == mode + "\n" +
                    "step 2: OK\n"
                    "step 4: checkpoint of step 4 not written (the previous checkpoints are "
                    "intact): cannot write " + (root / ".tmp-step_00000004" / "model.bin").string() +
                    ": " + why + "\n"
                    "published: 2 \n"
                    "step 2 verifies: OK\n"
                    "temporaries left: 0\n"
                    "resume from: 2\n"
                    "step 6: OK\n"
                    "published: 2 6 \n");
}

}  // namespace
}  // namespace accel::exec
