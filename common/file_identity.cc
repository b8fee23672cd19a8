#include "common/file_identity.h"

#include <sys/stat.h>

namespace accel {

bool WouldOverwriteInput(const std::string& input, const std::string& output) {
  struct stat in, out;
  if (::stat(input.c_str(), &in) != 0 || ::lstat(output.c_str(), &out) != 0) return false;
  return in.st_dev == out.st_dev && in.st_ino == out.st_ino;
}

}  // namespace accel
