#include "launcher/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/ascii.h"
#include "common/no_follow.h"

namespace accel::exec {
namespace {

// The holder as its lock file names it: "pid N on host H", or "" when unreadable.
std::string HolderOf(int fd) {
  char buffer[256] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  if (n <= 0) return "";
  std::string text(buffer, static_cast<size_t>(n));
  return std::string(absl::StripAsciiWhitespace(text));
}

std::string ThisHolder() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) std::strcpy(host, "?");
  return absl::StrCat("pid ", ::getpid(), " on host ", host);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DirLock>> DirLock::Acquire(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kFileName).string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ELOOP) return SymlinkRefusal(path);
  if (fd < 0) return absl::InternalError(absl::StrCat("cannot lock ", path, ": ", std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string holder = error == EWOULDBLOCK ? HolderOf(fd) : "";
    ::close(fd);
    if (error != EWOULDBLOCK) {
      return absl::InternalError(absl::StrCat("cannot lock ", path, ": ", std::strerror(error)));
    }
    return absl::FailedPreconditionError(holder.empty() ? absl::StrCat(dir, " is in use by another accel run")
                                                        : absl::StrCat(dir, " is in use by accel run ", holder));
  }
  const std::string me = ThisHolder() + "\n";
  // Informational only: a short or failed write leaves the lock held all the same.
  if (::ftruncate(fd, 0) == 0 && ::pwrite(fd, me.data(), me.size(), 0) < 0) errno = 0;
  return std::unique_ptr<DirLock>(new DirLock(fd));
}

DirLock::~DirLock() { ::close(fd_); }

}  // namespace accel::exec
