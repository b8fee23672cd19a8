// Test helper: a fresh directory path under the system temporary directory, removed on
// destruction (the directory itself is not created; checkpoint code creates what it writes).
#ifndef ACCEL_TESTS_COMMON_TEMP_ROOT_H_
#define ACCEL_TESTS_COMMON_TEMP_ROOT_H_

#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "common/remove_tree.h"

namespace accel::testing {

struct TempRoot {
  // prefix names the test in the path, e.g. "accel_ckpt_" → /tmp/accel_ckpt_<pid>_<n>.
  explicit TempRoot(const std::string& prefix = "accel_ckpt_")
      : path(std::filesystem::temp_directory_path() /
             (prefix + std::to_string(::getpid()) + "_" + std::to_string(counter++))) {
    std::error_code ec;
    RemoveTree(path.string(), ec);
  }
  ~TempRoot() {
    std::error_code ec;
    RemoveTree(path.string(), ec);
  }
  std::filesystem::path path;
  static inline int counter = 0;
};

}  // namespace accel::testing

#endif  // ACCEL_TESTS_COMMON_TEMP_ROOT_H_
