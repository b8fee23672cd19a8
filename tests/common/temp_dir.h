// Test helper: a fresh directory, created (mkdtemp) under the system temporary directory and
// removed with everything in it on destruction. Unlike TempRoot (temp_root.h), the directory
// exists from the start, for tests that write files into it themselves.
#ifndef ACCEL_TESTS_COMMON_TEMP_DIR_H_
#define ACCEL_TESTS_COMMON_TEMP_DIR_H_

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "common/remove_tree.h"

namespace accel::testing {

class TempDir {
 public:
  // prefix names the test in the path: /tmp/<prefix>.XXXXXX.
  explicit TempDir(const std::string& prefix = "accel_test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    RemoveTree(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string File(const std::string& name) const { return (std::filesystem::path(path_) / name).string(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace accel::testing

#endif  // ACCEL_TESTS_COMMON_TEMP_DIR_H_
