#ifndef ACCEL_SPEC_FILE_READER_H_
#define ACCEL_SPEC_FILE_READER_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"

namespace accel::spec {

// Reads the whole file at `path` without reading more than `max_bytes` + 1 bytes of it.
// Errors: NotFound (no such file), FailedPrecondition (a directory), PermissionDenied,
// Unavailable (other read errors; the message is the system's), OutOfRange when the file is
// larger than `max_bytes` (the message holds its size in bytes, e.g. "2097152").
absl::StatusOr<std::string> ReadFileLimited(const std::string& path, size_t max_bytes);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_FILE_READER_H_
