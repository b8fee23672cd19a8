#include "common/durable_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/no_follow.h"

namespace accel {
namespace {

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// Writes every byte to fd (retrying short writes and EINTR). Errors: Internal "cannot write PATH".
absl::Status WriteAll(int fd, const std::string& path, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno("cannot write", path);
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Writes bytes into an existing character device or FIFO (`-o /dev/null`), which a rename would
// replace with a regular file: opened without creating or truncating, not fsynced (a device
// need not support it).
absl::Status WriteThrough(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Errno("cannot open", path);
  if (absl::Status s = WriteAll(fd, path, bytes); !s.ok()) {
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return Errno("cannot close", path);
  return absl::OkStatus();
}

// What lstat says `mode` is, for an error message.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Creates or truncates path for writing, never through a symbolic link; -1 and errno on failure.
int CreateForWrite(const std::string& path) {
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
}

// Writes bytes to fd (open on path), fsyncs and closes it; fd is closed on every path.
absl::Status WriteSyncClose(int fd, const std::string& path, const std::string& bytes) {
  if (absl::Status s = WriteAll(fd, path, bytes); !s.ok()) {
    ::close(fd);
    return s;
  }
  if (::fsync(fd) != 0) {
    absl::Status s = Errno("cannot fsync", path);
    ::close(fd);
    return s;
  }
  if (::close(fd) != 0) return Errno("cannot close", path);
  return absl::OkStatus();
}

// Why no temporary could be created in dir to replace final_path (errno `error`), in the words
// of the directory: the temporary's name means nothing to the user, and /proc answers ENOENT for
// a directory that exists (`-o /proc/version` said "No such file or directory").
absl::Status CannotCreateBeside(const std::string& final_path, const std::string& dir, int error) {
  const std::string why = std::strerror(error);
  struct stat st;
  std::string reason;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    reason = "directory " + dir + " does not exist";
  } else if (error == EACCES || error == EPERM) {
    reason = "no permission to create files in " + dir + " (" + why + ")";
  } else if (error == EROFS) {
    reason = dir + " is on a read-only file system";
  } else if (error == ENOENT) {
    reason = dir + " does not allow creating files (" + why +
             "), and accel replaces a file by renaming a new one over it";
  } else {
    reason = "cannot create a file in " + dir + " (" + why + ")";
  }
  return absl::InternalError(absl::StrCat("cannot write ", final_path, ": ", reason));
}

}  // namespace

absl::Status WriteAndSync(const std::string& path, const std::string& bytes) {
  const int fd = CreateForWrite(path);
  if (fd < 0 && errno == ELOOP) return SymlinkRefusal(path);
  if (fd < 0) return Errno("cannot create", path);
  return WriteSyncClose(fd, path, bytes);
}

absl::Status SyncDir(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open directory", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Errno("cannot fsync directory", path);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& dir, const std::string& name,
                                 const std::string& bytes) {
  const std::string tmp =
      (std::filesystem::path(dir) / absl::StrCat(".", name, ".tmp.", ::getpid())).string();
  const std::string final_path = (std::filesystem::path(dir) / name).string();
  // Only a regular file (or a link, replaced as said) is ever renamed over.
  struct stat st;
  if (::lstat(final_path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return WriteThrough(final_path, bytes);
    return absl::FailedPreconditionError(
        absl::StrCat(final_path, " is ", KindOf(st.st_mode), ": refusing to replace it"));
  }
  const int fd = CreateForWrite(tmp);
  if (fd < 0 && errno == ELOOP) return SymlinkRefusal(tmp);
  if (fd < 0) return CannotCreateBeside(final_path, dir, errno);
  absl::Status written = WriteSyncClose(fd, tmp, bytes);
  if (written.ok() && std::rename(tmp.c_str(), final_path.c_str()) != 0) {
    written = Errno("cannot rename", tmp);
  }
  if (!written.ok()) {
    std::remove(tmp.c_str());
    return written;
  }
  return SyncDir(dir);
}

absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes) {
  const std::filesystem::path target(path);
  const std::string dir = target.parent_path().empty() ? "." : target.parent_path().string();
  return WriteFileAtomically(dir, target.filename().string(), bytes);
}

}  // namespace accel
