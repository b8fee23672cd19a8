#ifndef ACCEL_SPEC_FILE_READER_H_
#define ACCEL_SPEC_FILE_READER_H_

#include <chrono>
#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace accel::spec {

// How long ReadFileLimited waits for a FIFO to get a writer (or its first bytes). A shell's
// process substitution (`accel validate <(gen)`) or pipe (`gen | accel validate /dev/stdin`)
// has its writer before accel starts; a FIFO nothing writes to used to block forever (#42).
inline constexpr std::chrono::milliseconds kFifoWriterWait{3000};

// Reads the whole file at `path` without reading more than `max_bytes` + 1 bytes of it. A
// regular file is read; so is a FIFO or pipe (`/dev/stdin`, `<(...)`) once something writes to
// it, waiting at most `writer_wait` for that. Errors: NotFound (no such file),
// FailedPrecondition ("is a directory, not a file"; "is a character device, not a file or a
// pipe", also a block device or socket: a terminal or /dev/zero is never read),
// DeadlineExceeded ("is a FIFO and nothing wrote to it within 3 s"), PermissionDenied,
// Unavailable (other read errors; the message is the system's), OutOfRange when the file is
// larger than `max_bytes` (the message holds its size in bytes, e.g. "2097152").
absl::StatusOr<std::string> ReadFileLimited(const std::string& path, size_t max_bytes,
                                            std::chrono::milliseconds writer_wait = kFifoWriterWait);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_FILE_READER_H_
