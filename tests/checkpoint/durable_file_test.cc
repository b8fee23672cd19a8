// Writes never follow a symbolic link planted in a run or checkpoint directory (path
// containment): the link's target stays untouched and the error names the link.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "checkpoint/checkpoint_store.h"
#include "common/durable_file.h"
#include "tests/common/temp_root.h"
#include "tests/common/files.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

using accel::testing::ReadAll;

std::string Refusal(const fs::path& link) {
  return "refusing to write " + link.string() +
         ": it is a symbolic link (accel does not follow links when writing into run and "
         "checkpoint directories)";
}

TEST_CASE("WriteAndSync and WriteFileAtomically do not write through a planted link",
          "[checkpoint][containment]") {
  testing::TempRoot dir("accel_no_follow_");
  fs::create_directories(dir.path / "run");
  const fs::path outside = dir.path / "outside.txt";
  std::ofstream(outside) << "precious\n";

  const fs::path link = dir.path / "run" / "summary.json";
  fs::create_symlink(outside, link);
  absl::Status direct = WriteAndSync(link.string(), "{}\n");
  CHECK(direct.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(direct.message() == Refusal(link));
  CHECK(ReadAll(outside) == "precious\n");

  // The temporary name is the one opened: a link there is refused too.
  const fs::path tmp_link = dir.path / "run" / (".metrics.json.tmp." + std::to_string(::getpid()));
  fs::create_symlink(outside, tmp_link);
  CHECK(WriteFileAtomically((dir.path / "run").string(), "metrics.json", "{}\n").message() ==
        Refusal(tmp_link));
  CHECK(ReadAll(outside) == "precious\n");

  // A link at the final name is replaced by the rename, never followed.
  fs::remove(tmp_link);
  REQUIRE(WriteFileAtomically((dir.path / "run").string(), "summary.json", "{}\n").ok());
  CHECK_FALSE(fs::is_symlink(link));
  CHECK(ReadAll(link) == "{}\n");
  CHECK(ReadAll(outside) == "precious\n");
}

// `accel plan -o /dev/null`, run as root, once replaced /dev/null with a regular file (#42): a
// device or FIFO is written into, never renamed over; a directory is refused.
TEST_CASE("WriteFileAtomically writes into devices and never replaces what is not a regular file") {
  auto is_char_device = [](const char* path) { return fs::status(path).type() == fs::file_type::character; };
  REQUIRE(is_char_device("/dev/null"));
  CHECK(WriteFileAtomically("/dev/null", "discarded\n").ok());
  CHECK(is_char_device("/dev/null"));
  if (fs::exists("/dev/full")) {
    const absl::Status full = WriteFileAtomically("/dev/full", "x");
    CHECK(full.message() == "cannot write /dev/full: No space left on device");
    CHECK(is_char_device("/dev/full"));
  }
  testing::TempRoot root("accel_durable_");
  fs::create_directories(root.path / "out");
  const absl::Status dir = WriteFileAtomically((root.path / "out").string(), "x");
  CHECK(dir.message() == (root.path / "out").string() + " is a directory: refusing to replace it");
  CHECK(fs::is_directory(root.path / "out"));
  // A regular file is still replaced atomically.
  CHECK(WriteFileAtomically((root.path / "plan.txt").string(), "one").ok());
  CHECK(WriteFileAtomically((root.path / "plan.txt").string(), "two").ok());
  CHECK(ReadAll((root.path / "plan.txt").string()) == "two");
}

TEST_CASE("a checkpoint is not written through a link planted in the checkpoint directory",
          "[checkpoint][containment]") {
  testing::TempRoot dir("accel_no_follow_");
  const fs::path root = dir.path / "ckpt";
  const fs::path elsewhere = dir.path / "elsewhere";
  fs::create_directories(root);
  fs::create_directories(elsewhere);
  CheckpointStore store(root.string(), 2);

  // Multi-writer temporary directory replaced by a link to another directory.
  fs::create_directory_symlink(elsewhere, root / ".tmp-step_00000003");
  absl::StatusOr<std::string> tmp = store.BeginStep(3);
  CHECK(tmp.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(tmp.status().message() == Refusal(root / ".tmp-step_00000003"));

  // A file link inside a rank's temporary directory (the directory holds no checkpoint yet, and
  // the message does not claim earlier ones are intact).
  fs::remove(root / ".tmp-step_00000003");
  tmp = store.BeginStep(3);
  REQUIRE(tmp.ok());
  fs::create_symlink(elsewhere / "stolen.bin", fs::path(*tmp) / "shard-00000.bin");
  CHECK(CheckpointStore::WriteRankFiles(*tmp, 0, {{"shard-00000.bin", "x"}}).message() ==
        "checkpoint of step 3 not written (no earlier checkpoint exists): " +
            Refusal(fs::path(*tmp) / "shard-00000.bin"));
  CHECK_FALSE(fs::exists(elsewhere / "stolen.bin"));
  CHECK(fs::is_empty(elsewhere));
}

// `-o /proc/version` said "No such file or directory" for a file that exists (#42): the temporary
// beside it cannot be created, and the message says so about the directory.
TEST_CASE("WriteFileAtomically says why nothing can be created beside the file") {
  if (fs::exists("/proc/version")) {
    const absl::Status proc = WriteFileAtomically("/proc/version", "x");
    CHECK(proc.code() == absl::StatusCode::kInternal);
    if (::geteuid() == 0) {
      CHECK(proc.message() == "cannot write /proc/version: /proc does not allow creating files (No "
                              "such file or directory), and accel replaces a file by renaming a new "
                              "one over it");
    } else {
      CHECK(proc.message() ==
            "cannot write /proc/version: no permission to create files in /proc (Permission denied)");
    }
  }
  testing::TempRoot root("accel_durable_");
  const std::string missing = (root.path / "no_such_dir" / "plan.json").string();
  CHECK(WriteFileAtomically(missing, "x").message() ==
        "cannot write " + missing + ": directory " + (root.path / "no_such_dir").string() +
            " does not exist");
}

}  // namespace
}  // namespace accel::exec
