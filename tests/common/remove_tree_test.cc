// RemoveTree (common/remove_tree.h): rm -rf without std::filesystem's recursive removal.
#include "common/remove_tree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "tests/common/temp_root.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

TEST_CASE("RemoveTree deletes a directory tree and never follows links") {
  testing::TempRoot root("accel_rmtree_");
  const fs::path tree = root.path / "step_00000004";
  const fs::path outside = root.path / "outside";
  fs::create_directories(tree / "a" / "b");
  fs::create_directories(outside);
  std::ofstream(tree / "model.safetensors") << "weights";
  std::ofstream(tree / "a" / "b" / "deep.bin") << "x";
  std::ofstream(outside / "keep.txt") << "keep";
  fs::create_directory_symlink(outside, tree / "a" / "link");

  std::error_code ec;
  RemoveTree(tree.string(), ec);
  CHECK_FALSE(ec);
  CHECK_FALSE(fs::exists(tree));
  CHECK(fs::exists(outside / "keep.txt"));  // the link went, not what it points to

  RemoveTree((root.path / "missing").string(), ec);  // as rm -rf: not an error
  CHECK_FALSE(ec);

  std::ofstream(root.path / "file") << "f";  // a plain file
  RemoveTree((root.path / "file").string(), ec);
  CHECK_FALSE(ec);
  CHECK_FALSE(fs::exists(root.path / "file"));
}

TEST_CASE("RemoveTree reports the errno of an entry it cannot remove") {
  if (::geteuid() == 0) {
    WARN("running as root: permissions do not stop removal, so the failure path is not exercised");
    return;
  }
  testing::TempRoot root("accel_rmtree_");
  const fs::path locked = root.path / "locked";
  fs::create_directories(locked / "inner");
  std::ofstream(locked / "inner" / "file") << "f";
  ::chmod((locked / "inner").c_str(), 0500);  // entries of inner cannot be unlinked
  std::error_code ec;
  RemoveTree(locked.string(), ec);
  CHECK(ec == std::errc::permission_denied);
  ::chmod((locked / "inner").c_str(), 0700);
}

}  // namespace
}  // namespace accel::exec
