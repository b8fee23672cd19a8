// A whole file mapped into memory read-only (POSIX mmap, PROT_READ, MAP_PRIVATE), so a reader
// copies out only the byte ranges it needs and the kernel pages in only what is touched.
// Torch-free.
#ifndef ACCEL_CHECKPOINT_MAPPED_FILE_H_
#define ACCEL_CHECKPOINT_MAPPED_FILE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace accel::exec {

class MappedFile {
 public:
  // Maps the file at `path` whole. An empty file gives an empty view (mmap refuses length 0).
  // Errors: NotFound "cannot open PATH: REASON" when it cannot be opened; Internal "cannot map
  // PATH: REASON" when it is not a regular file or the mapping fails.
  // The file must not shrink while mapped: touching a page past its new end raises SIGBUS. accel's
  // own checkpoints and exports are written to a temporary name and renamed, which leaves a
  // mapped file's bytes in place.
  static absl::StatusOr<std::unique_ptr<MappedFile>> Open(const std::string& path);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // The file's bytes; valid while this object lives.
  std::string_view bytes() const { return {static_cast<const char*>(data_), size_}; }
  const std::string& path() const { return path_; }

 private:
  MappedFile(std::string path, void* data, size_t size) : path_(std::move(path)), data_(data), size_(size) {}

  std::string path_;
  void* data_ = nullptr;  // nullptr for an empty file
  size_t size_ = 0;
};

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_MAPPED_FILE_H_
