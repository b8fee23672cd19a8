// Reading training text from a file or a directory tree, skipping files that are not text.
#ifndef ACCEL_DATA_TEXT_SOURCE_H_
#define ACCEL_DATA_TEXT_SOURCE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace accel::exec {

// The text rule. A file counts as text when all of these hold:
//   1. its name does not end in ".dat" (strfile(1) index files, e.g. /usr/share/games/fortunes);
//   2. its content has no NUL byte;
//   3. its content is valid UTF-8.
// name is the file name or path (only its suffix is looked at).
bool IsTextFile(std::string_view name, std::string_view content);

// The text files a data path names. A regular file is returned as is (it must satisfy IsTextFile).
// A directory is walked recursively in byte-wise sorted path order; symbolic links are not followed
// (fortunes' *.u8 links would otherwise repeat their targets) and non-text files are skipped.
// Errors: NotFound "data path does not exist: PATH"; InvalidArgument "data file is not text
// (...): PATH" for an explicit binary file, "no text files under PATH" for a directory without any;
// Internal on I/O failure, naming the path.
absl::StatusOr<std::vector<std::string>> ListTextFiles(const std::string& path);

// The concatenated contents of ListTextFiles(path), in that order, with no separator added.
// Errors: those of ListTextFiles, and InvalidArgument "data is empty: PATH" when there are no bytes.
absl::StatusOr<std::string> ReadTextCorpus(const std::string& path);

}  // namespace accel::exec

#endif  // ACCEL_DATA_TEXT_SOURCE_H_
