// Writes into run and checkpoint directories never follow a symbolic link: a link planted there
// (e.g. rank0.log -> ~/.bashrc) would make accel write outside the directories a spec or the
// command line names. Writers open with O_NOFOLLOW or check with IsSymlink first, and report
// SymlinkRefusal.
#ifndef ACCEL_COMMON_NO_FOLLOW_H_
#define ACCEL_COMMON_NO_FOLLOW_H_

#include <string>

#include "absl/status/status.h"

namespace accel {

// True when path exists and is itself a symbolic link (lstat); false otherwise, also when it
// cannot be examined.
bool IsSymlink(const std::string& path);

// FailedPrecondition "refusing to write PATH: it is a symbolic link (accel does not follow links
// when writing into run and checkpoint directories)".
absl::Status SymlinkRefusal(const std::string& path);

}  // namespace accel

#endif  // ACCEL_COMMON_NO_FOLLOW_H_
