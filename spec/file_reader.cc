#include "spec/file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "absl/status/status.h"

namespace accel::spec {
namespace {

// What a file that is neither regular, a directory nor a FIFO is, for the error message.
const char* SpecialFileKind(mode_t mode) {
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// "3 s", "0.1 s".
std::string WaitText(std::chrono::milliseconds wait) {
  if (wait.count() % 1000 == 0) return std::to_string(wait.count() / 1000) + " s";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(wait.count()) / 1000.0);
  return text;
}

// Reads a regular file with stdio, at most max_bytes + 1 bytes.
absl::StatusOr<std::string> ReadRegular(const std::string& path, size_t max_bytes) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) {
    int error = errno;
    if (error == EACCES) return absl::PermissionDeniedError("permission denied");
    return absl::UnavailableError(std::strerror(error));
  }
  // Read at most one byte past the limit: enough to tell a growing file is too big.
  std::string text;
  char buffer[65536];
  while (text.size() <= max_bytes) {
    size_t n = std::fread(buffer, 1, sizeof(buffer), file.get());
    if (n == 0) break;
    text.append(buffer, n);
  }
  if (std::ferror(file.get())) return absl::UnavailableError("read error");
  return text;
}

// Reads a FIFO or pipe. Opening one for reading blocks until a writer opens it, so it is opened
// non-blocking: a read then answers EAGAIN while a writer is connected but silent, and 0 while
// no writer is (or after the last one left). Until a writer shows (EAGAIN or bytes), 0 is polled
// for up to `writer_wait`; after that the reads block as for any pipe, and 0 is the end.
absl::StatusOr<std::string> ReadFifo(const std::string& path, size_t max_bytes,
                                     std::chrono::milliseconds writer_wait) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    if (error == EACCES) return absl::PermissionDeniedError("permission denied");
    return absl::UnavailableError(std::strerror(error));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  const auto deadline = std::chrono::steady_clock::now() + writer_wait;
  bool writer_seen = false;
  std::string text;
  char buffer[65536];
  while (text.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN) return absl::UnavailableError(std::strerror(errno));
    if (n > 0) text.append(buffer, static_cast<size_t>(n));
    if (n != 0 && !writer_seen) {  // bytes or EAGAIN: a writer is there; block from now on
      writer_seen = true;
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
    if (n == 0 && writer_seen) break;
    if (n == 0 && std::chrono::steady_clock::now() >= deadline) {
      return absl::DeadlineExceededError("is a FIFO and nothing wrote to it within " +
                                         WaitText(writer_wait));
    }
    if (n == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return text;
}

}  // namespace

absl::StatusOr<std::string> ReadFileLimited(const std::string& path, size_t max_bytes,
                                            std::chrono::milliseconds writer_wait) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    int error = errno;
    if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError("no such file");
    if (error == EACCES) return absl::PermissionDeniedError("permission denied");
    return absl::UnavailableError(std::strerror(error));
  }
  if (S_ISDIR(info.st_mode)) return absl::FailedPreconditionError("is a directory, not a file");
  if (!S_ISREG(info.st_mode) && !S_ISFIFO(info.st_mode)) {
    return absl::FailedPreconditionError(std::string("is ") + SpecialFileKind(info.st_mode) +
                                         ", not a file or a pipe");
  }
  if (S_ISREG(info.st_mode) && static_cast<size_t>(info.st_size) > max_bytes) {
    return absl::OutOfRangeError(std::to_string(info.st_size));
  }
  absl::StatusOr<std::string> text = S_ISFIFO(info.st_mode)
                                         ? ReadFifo(path, max_bytes, writer_wait)
                                         : ReadRegular(path, max_bytes);
  if (text.ok() && text->size() > max_bytes) return absl::OutOfRangeError(std::to_string(text->size()));
  return text;
}

}  // namespace accel::spec
