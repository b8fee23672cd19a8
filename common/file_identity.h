// Whether two paths name the same file, by identity (device and inode), not by spelling:
// `x.json`, `./x.json` and a hard link to it are one file. Commands that read one file and write
// another use it to refuse writing over their own input (`accel import x.json -o x.json`, #42).
#ifndef ACCEL_COMMON_FILE_IDENTITY_H_
#define ACCEL_COMMON_FILE_IDENTITY_H_

#include <string>

namespace accel {

// True when `output` exists and is the file `input` reads (stat of input, following links, has
// the st_dev and st_ino of lstat of output). A link at `output` is itself replaced by accel's
// writers (common/durable_file.h), never followed, so it does not count as the input; false when
// either path does not exist.
bool WouldOverwriteInput(const std::string& input, const std::string& output);

}  // namespace accel

#endif  // ACCEL_COMMON_FILE_IDENTITY_H_
