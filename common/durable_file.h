// Crash-safe file writes (POSIX): data fsynced before it counts, renames made durable by syncing
// the directory. The one way accel writes a file a reader may see half-written: plans and specs
// (`accel plan -o`), run summaries, checkpoints and exports.
#ifndef ACCEL_COMMON_DURABLE_FILE_H_
#define ACCEL_COMMON_DURABLE_FILE_H_

#include <string>

#include "absl/status/status.h"

namespace accel {

// Creates or truncates path, writes bytes and fsyncs it. Never follows a symbolic link at path
// (O_NOFOLLOW). Errors: FailedPrecondition SymlinkRefusal (common/no_follow.h) when path is a
// symbolic link; Internal "cannot create|write|fsync|close PATH: strerror".
absl::Status WriteAndSync(const std::string& path, const std::string& bytes);

// fsyncs directory path, so a file created or renamed in it survives a crash. Errors: Internal.
absl::Status SyncDir(const std::string& path);

// Writes bytes to DIR/.NAME.tmp.PID (WriteAndSync; PID keeps two processes writing the same file
// apart), renames it to DIR/NAME and fsyncs DIR: readers see the old file or the complete new one,
// also after a crash. A symbolic link at DIR/NAME is replaced, not followed; the temporary is
// removed on failure. Nothing but a regular file or a link is ever replaced: an existing
// character device or FIFO at DIR/NAME (`-o /dev/null`) is written into instead (not
// atomically, not fsynced), and anything else is refused. Errors: those of WriteAndSync and
// SyncDir; Internal "cannot rename TMP: ...", "cannot open|write|close PATH: strerror" (a device:
// "cannot write /dev/full: No space left on device"); FailedPrecondition "PATH is a directory:
// refusing to replace it" (or "is a block device", "is a socket"). When the temporary cannot be
// created the message names the directory, not the temporary: Internal "cannot write PATH:
// directory DIR does not exist", "...: no permission to create files in DIR (strerror)", "...: DIR
// is on a read-only file system", "...: DIR does not allow creating files (No such file or
// directory), and accel replaces a file by renaming a new one over it" (/proc).
absl::Status WriteFileAtomically(const std::string& dir, const std::string& name,
                                 const std::string& bytes);

// The same for a path: its directory is its parent ("." when it has none).
absl::Status WriteFileAtomically(const std::string& path, const std::string& bytes);

}  // namespace accel

#endif  // ACCEL_COMMON_DURABLE_FILE_H_
