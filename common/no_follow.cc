#include "common/no_follow.h"

#include <sys/stat.h>

#include "absl/strings/str_cat.h"

namespace accel {

bool IsSymlink(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

absl::Status SymlinkRefusal(const std::string& path) {
  return absl::FailedPreconditionError(
      absl::StrCat("refusing to write ", path,
                   ": it is a symbolic link (accel does not follow links when writing into run "
                   "and checkpoint directories)"));
}

}  // namespace accel
