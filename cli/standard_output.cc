#include "cli/standard_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace accel::cli {

void ReserveStandardDescriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // open returns the lowest free number, which is `fd`: the lower ones are open by now.
    const int placeholder = ::open("/dev/null", O_RDONLY);
    if (placeholder >= 0 && placeholder != fd) ::close(placeholder);
  }
}

namespace {
constexpr size_t kFdOutputBufferBytes = 64 * 1024;
}  // namespace

FdOutput::Buffer::Buffer(int fd) : fd_(fd), buffer_(kFdOutputBufferBytes) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

void FdOutput::Buffer::WriteOut(const char* data, size_t n) {
  while (n > 0 && error_ == 0) {
    const ssize_t written = ::write(fd_, data, n);
    if (written < 0) {
      if (errno != EINTR) error_ = errno;
      continue;
    }
    data += written;
    n -= static_cast<size_t>(written);
  }
}

int FdOutput::Buffer::sync() {
  WriteOut(pbase(), static_cast<size_t>(pptr() - pbase()));
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return error_ == 0 ? 0 : -1;
}

FdOutput::Buffer::int_type FdOutput::Buffer::overflow(int_type c) {
  sync();
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  *pptr() = traits_type::to_char_type(c);
  pbump(1);
  return c;
}

std::streamsize FdOutput::Buffer::xsputn(const char* data, std::streamsize n) {
  if (n <= epptr() - pptr()) return std::streambuf::xsputn(data, n);
  // Larger than the room left (a PNG plan): flush what is buffered and write it directly.
  sync();
  WriteOut(data, static_cast<size_t>(n));
  return n;
}

FdOutput::FdOutput(int fd) : std::ostream(nullptr), buffer_(fd) { rdbuf(&buffer_); }

FdOutput::~FdOutput() { buffer_.pubsync(); }

int FdOutput::Finish() {
  flush();
  buffer_.pubsync();
  return buffer_.error();
}

}  // namespace accel::cli
