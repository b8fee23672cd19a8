// The safetensors format (https://github.com/huggingface/safetensors; docs/run.md "Checkpoints"):
//   8 bytes: N, little-endian uint64, the header length;
//   N bytes: a UTF-8 JSON object {"NAME": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]},
//            ..., "__metadata__": {"key": "string value", ...}} (metadata optional), padded with
//            spaces so the data starts 8-byte aligned;
//   the rest: the byte buffer; tensor NAME is bytes [b, e) of it, little-endian, row-major.
// Torch-free: tensors are raw bytes here; executor/checkpoint/torch_tensors.h converts.
#ifndef ACCEL_CHECKPOINT_SAFETENSORS_H_
#define ACCEL_CHECKPOINT_SAFETENSORS_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accel::exec {

// One tensor: its name, safetensors dtype ("F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8",
// "U8", "BOOL"), shape, and data (numel * dtype size bytes, little-endian, row-major).
struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string data;
};

// A whole file: tensors in the order they are stored, plus the string-to-string metadata.
struct SafetensorsFile {
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
};

// The largest header accel reads: the reference implementation refuses headers above 100 MB
// (safetensors' MAX_HEADER_SIZE), which also bounds what a corrupt length field can allocate.
inline constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// A shape as messages print it: "[4096, 11008]".
std::string ShapeText(const std::vector<int64_t>& shape);

// Bytes per element of a safetensors dtype, or 0 for an unknown dtype.
int SafetensorsDtypeSize(std::string_view dtype);

// Encodes file. Tensors are laid out in the given order. Errors: InvalidArgument for an unknown
// dtype, a data size that does not match the shape, a duplicate or empty name, or the reserved
// name "__metadata__".
absl::StatusOr<std::string> SerializeSafetensors(const SafetensorsFile& file);

// Decodes and validates bytes: the header length fits, the header is a JSON object, every entry has
// a known dtype, a shape of dimensions in [0, 2^63) whose byte size numel * dtype size fits 64 bits
// (checked, not wrapped), and offsets whose length equals that byte size, and the
// entries tile the buffer exactly (no gaps, overlaps or trailing bytes). Tensors come back sorted by
// data offset. source names the file in errors ("SOURCE: safetensors header ...").
// Errors: DataLoss for any violation (truncated or corrupt file).
absl::StatusOr<SafetensorsFile> ParseSafetensors(std::string_view bytes, const std::string& source);

// Reads and parses the file at path. Errors: NotFound when missing; those of ParseSafetensors.
absl::StatusOr<SafetensorsFile> ReadSafetensorsFile(const std::string& path);

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_SAFETENSORS_H_
