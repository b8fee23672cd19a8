#include "spec/file_reader.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <sys/stat.h>

#include "absl/status/status.h"

namespace accel::spec {

absl::StatusOr<std::string> ReadFileLimited(const std::string& path, size_t max_bytes) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    int error = errno;
    if (error == ENOENT || error == ENOTDIR) return absl::NotFoundError("no such file");
    if (error == EACCES) return absl::PermissionDeniedError("permission denied");
    return absl::UnavailableError(std::strerror(error));
  }
  if (S_ISDIR(info.st_mode)) return absl::FailedPreconditionError("is a directory, not a file");
  if (S_ISREG(info.st_mode) && static_cast<size_t>(info.st_size) > max_bytes) {
    return absl::OutOfRangeError(std::to_string(info.st_size));
  }
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) {
    int error = errno;
    if (error == EACCES) return absl::PermissionDeniedError("permission denied");
    return absl::UnavailableError(std::strerror(error));
  }
  // Read at most one byte past the limit: enough to tell a pipe or a growing file is too big.
  std::string text;
  char buffer[65536];
  while (text.size() <= max_bytes) {
    size_t n = std::fread(buffer, 1, sizeof(buffer), file.get());
    if (n == 0) break;
    text.append(buffer, n);
  }
  if (std::ferror(file.get())) return absl::UnavailableError("read error");
  if (text.size() > max_bytes) return absl::OutOfRangeError(std::to_string(text.size()));
  return text;
}

}  // namespace accel::spec
