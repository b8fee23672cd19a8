// An exclusive lock on a directory for a job's lifetime: `accel run` holds one on its run
// directory and one on its checkpoint directory, so a second job pointed at either is refused at
// once instead of mixing plan files, logs or checkpoints with the first. flock(2) on DIR/.accel.lock:
// the kernel drops it when the holder exits, however it dies, so a lock file left behind by a dead
// run never blocks; the pid and host written into the file only name the holder in the message.
// Torch-free.
#ifndef ACCEL_LAUNCHER_DIR_LOCK_H_
#define ACCEL_LAUNCHER_DIR_LOCK_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace accel::exec {

class DirLock {
 public:
  // Name of the lock file inside a locked directory.
  static constexpr const char* kFileName = ".accel.lock";

  // Locks dir (which must exist) without waiting and records "pid N host H" in the lock file. The
  // file descriptor is close-on-exec: workers do not hold the lock. Errors: FailedPrecondition
  // "DIR is in use by accel run pid N on host H" when another open file holds it ("DIR is in use by
  // another accel run" when the file does not say who), SymlinkRefusal for a link at the lock
  // file's name, Internal "cannot lock DIR/.accel.lock: REASON" otherwise.
  static absl::StatusOr<std::unique_ptr<DirLock>> Acquire(const std::string& dir);

  ~DirLock();
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_;
};

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_DIR_LOCK_H_
