// Standard output that notices when it cannot be written. std::cout fails quietly: `accel plan
// spec >/dev/full` or `accel plan spec >&-` exited 0 with nothing written (#42). Every byte a
// subcommand prints goes through one FdOutput, and main turns a failed write into exit 4.
#ifndef ACCEL_CLI_STANDARD_OUTPUT_H_
#define ACCEL_CLI_STANDARD_OUTPUT_H_

#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

namespace accel::cli {

// Gives each of the descriptors 0, 1 and 2 that is closed a read-only /dev/null, so no file the
// process opens later takes its number: a spec opened as descriptor 1 would otherwise receive
// the plan meant for standard output. A write to the placeholder fails (EBADF), which FdOutput
// reports. Call first thing in main.
void ReserveStandardDescriptors();

// An ostream over a file descriptor: buffered, every write retried until complete (short writes,
// EINTR). The first write error is kept (errno) and later output is discarded.
class FdOutput : public std::ostream {
 public:
  explicit FdOutput(int fd);
  ~FdOutput() override;

  // Flushes and returns 0 when every byte was written, else the errno of the first failure.
  int Finish();

 private:
  class Buffer : public std::streambuf {
   public:
    explicit Buffer(int fd);
    int error() const { return error_; }

   protected:
    int_type overflow(int_type c) override;
    std::streamsize xsputn(const char* data, std::streamsize n) override;
    int sync() override;

   private:
    void WriteOut(const char* data, size_t n);
    int fd_;
    int error_ = 0;
    std::vector<char> buffer_;
  };
  Buffer buffer_;
};

}  // namespace accel::cli

#endif  // ACCEL_CLI_STANDARD_OUTPUT_H_
