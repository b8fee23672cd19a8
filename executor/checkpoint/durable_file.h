// Crash-safe file writes (POSIX): data fsynced before it counts, renames made durable by syncing
// the directory. Shared by the checkpoint store and `accel export`. Torch-free.
#ifndef ACCEL_EXECUTOR_CHECKPOINT_DURABLE_FILE_H_
#define ACCEL_EXECUTOR_CHECKPOINT_DURABLE_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace accel::exec {

// Creates or truncates path, writes bytes and fsyncs it. Never follows a symbolic link at path
// (O_NOFOLLOW). Errors: FailedPrecondition SymlinkRefusal (common/no_follow.h) when path is a
// symbolic link; Internal "cannot create|write|fsync|close PATH: strerror".
absl::Status WriteAndSync(const std::string& path, const std::string& bytes);

// fsyncs directory path, so a file created or renamed in it survives a crash. Errors: Internal.
absl::Status SyncDir(const std::string& path);

// Writes bytes to DIR/.NAME.tmp (WriteAndSync) and renames it to DIR/NAME: readers see the old
// file or the complete new one (a symbolic link at DIR/NAME is replaced, not followed); the
// temporary is removed on failure. Errors: those of WriteAndSync; Internal for the rename.
absl::Status WriteFileAtomically(const std::string& dir, const std::string& name,
                                 const std::string& bytes);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CHECKPOINT_DURABLE_FILE_H_
