#include "executor/calibrate/every_core.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace accel::exec {
namespace {

// Writes all of `size` bytes; false on failure.
bool WriteAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// A child's message: a status byte (0 ok), then either a length and the doubles, or the error.
int RunChild(int fd, const std::function<absl::StatusOr<std::vector<double>>()>& measure) {
  absl::StatusOr<std::vector<double>> result = measure();
  const char ok = result.ok() ? 0 : 1;
  if (!WriteAll(fd, &ok, 1)) return 3;
  if (!result.ok()) {
    const std::string message(result.status().message());
    return WriteAll(fd, message.data(), message.size()) ? 0 : 3;
  }
  const uint64_t n = result->size();
  return WriteAll(fd, &n, sizeof n) && WriteAll(fd, result->data(), n * sizeof(double)) ? 0 : 3;
}

std::string ReadAll(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t got; (got = ::read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, got);
  return text;
}

// Parses a child's message into `out`.
absl::StatusOr<std::vector<double>> Parse(const std::string& message) {
  if (message.empty()) return absl::InternalError("a measuring process sent nothing");
  if (message[0] != 0) return absl::InternalError(message.substr(1));
  uint64_t n = 0;
  if (message.size() < 1 + sizeof n) return absl::InternalError("a measuring process's result is cut");
  std::copy_n(message.data() + 1, sizeof n, reinterpret_cast<char*>(&n));
  if (message.size() != 1 + sizeof n + n * sizeof(double)) {
    return absl::InternalError("a measuring process's result is cut");
  }
  std::vector<double> values(n);
  std::copy_n(message.data() + 1 + sizeof n, n * sizeof(double),
              reinterpret_cast<char*>(values.data()));
  return values;
}

}  // namespace

absl::StatusOr<std::vector<double>> MeasureOnEveryCore(
    int processes, const std::function<absl::StatusOr<std::vector<double>>()>& measure) {
  std::vector<std::pair<pid_t, int>> children;
  for (int i = 0; i < std::max(processes, 1); ++i) {
    int fds[2];
    if (::pipe(fds) != 0) return absl::InternalError("pipe failed");
    const pid_t pid = ::fork();
    if (pid < 0) return absl::InternalError("fork failed");
    if (pid == 0) {
      ::close(fds[0]);
      ::_exit(RunChild(fds[1], measure));
    }
    ::close(fds[1]);
    children.emplace_back(pid, fds[0]);
  }
  std::vector<double> sum;
  absl::Status first_error;
  for (const auto& [pid, fd] : children) {
    const std::string message = ReadAll(fd);
    ::close(fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    absl::StatusOr<std::vector<double>> values = Parse(message);
    if (values.ok() && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
      values = absl::InternalError("a measuring process failed");
    }
    if (!values.ok()) {
      if (first_error.ok()) first_error = values.status();
      continue;
    }
    if (sum.empty()) sum.assign(values->size(), 0.0);
    if (values->size() != sum.size()) {
      if (first_error.ok()) first_error = absl::InternalError("measuring processes disagree in length");
      continue;
    }
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += (*values)[i];
  }
  if (!first_error.ok()) return first_error;
  for (double& v : sum) v /= static_cast<double>(children.size());
  return sum;
}

absl::StatusOr<std::string> RunForkedGroup(int group_size,
                                           const std::function<int(int rank, int fd)>& member) {
  int fds[2];
  if (::pipe(fds) != 0) return absl::InternalError("pipe failed");
  std::vector<pid_t> children;
  for (int rank = 0; rank < std::max(group_size, 1); ++rank) {
    const pid_t pid = ::fork();
    if (pid < 0) return absl::InternalError("fork failed");
    if (pid == 0) {
      ::close(fds[0]);
      ::_exit(member(rank, fds[1]));
    }
    children.push_back(pid);
  }
  ::close(fds[1]);
  std::string text = ReadAll(fds[0]);
  ::close(fds[0]);
  bool failed = false;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    failed = failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0;
  }
  if (failed) return absl::InternalError("a process of the group failed");
  return text;
}

}  // namespace accel::exec
