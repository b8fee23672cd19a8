// The directories `accel run` writes into (the run directory and checkpoint.dir), checked and
// created before any work, so a checkpoint.dir that is a file or a device, or cannot be written,
// fails at once instead of at the first checkpoint. Torch-free.
#ifndef ACCEL_LAUNCHER_OUTPUT_DIRS_H_
#define ACCEL_LAUNCHER_OUTPUT_DIRS_H_

#include <string>

#include "absl/status/status.h"

namespace accel::exec {

// Makes sure path is a writable directory, creating it (and its parents) when missing; a symbolic
// link to a directory is fine (a volume elsewhere). `what` names it in messages ("checkpoint.dir",
// "run directory"). Errors: FailedPrecondition "WHAT PATH is a regular file, not a directory"
// (also "a character device", "a block device", "a FIFO", "a socket"), "WHAT PATH is not writable
// (Permission denied)", "cannot create WHAT PATH: REASON" (e.g. a parent is a file).
absl::Status PrepareOutputDir(const std::string& path, const std::string& what);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_OUTPUT_DIRS_H_
