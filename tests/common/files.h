// Test helpers for files: read one whole, remove a tree. Tests compare what accel wrote byte for
// byte, so ReadAll reads binary and returns "" for a missing file (the comparison then fails with
// both sides printed).
#ifndef ACCEL_TESTS_COMMON_FILES_H_
#define ACCEL_TESTS_COMMON_FILES_H_

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "common/remove_tree.h"

namespace accel::testing {

inline std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Removes `dir` and everything under it; a missing directory or a failure is ignored (clean-up).
// RemoveTree, never std::filesystem's recursive removal, which PyTorch's CUDA wheels interpose
// (common/remove_tree.h).
inline void RemoveDir(const std::filesystem::path& dir) {
  std::error_code ec;
  RemoveTree(dir.string(), ec);
}

}  // namespace accel::testing

#endif  // ACCEL_TESTS_COMMON_FILES_H_
