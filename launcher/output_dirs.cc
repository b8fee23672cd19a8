#include "launcher/output_dirs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

// What a non-directory is, for the message.
const char* KindOfFile(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a directory";
}

}  // namespace

absl::Status PrepareOutputDir(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    std::error_code ec;
    fs::create_directories(path, ec);
    if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot create ", what, " ", path, ": ", ec.message()));
    if (::stat(path.c_str(), &st) != 0) {
      return absl::FailedPreconditionError(absl::StrCat("cannot create ", what, " ", path, ": ", std::strerror(errno)));
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    const char* kind = KindOfFile(st.st_mode);
    const bool named = std::strcmp(kind, "not a directory") != 0;
    return absl::FailedPreconditionError(absl::StrCat(what, " ", path, " is ", kind, named ? ", not a directory" : ""));
  }
  if (::access(path.c_str(), W_OK | X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " ", path, " is not writable (", std::strerror(errno), ")"));
  }
  return absl::OkStatus();
}

}  // namespace accel::exec
