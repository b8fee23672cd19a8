// libFuzzer target: a safetensors file (exec::ParseSafetensors), as `accel export`, resume and
// Hugging Face interop read it.
//
// Invariants: every tensor of a parsed file has a known dtype, non-negative dimensions, and exactly
// numel x dtype-size bytes of data (numel computed without overflow), so a consumer can trust the
// shape it is given (executor/checkpoint/torch_tensors.cc builds tensors from it); the file
// serializes again and parses back to the same tensors and metadata.
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "checkpoint/safetensors.h"
#include "fuzz/fuzz_util.h"

namespace {

void CheckTensor(const accel::exec::SafetensorsTensor& t) {
  const int size = accel::exec::SafetensorsDtypeSize(t.dtype);
  ACCEL_FUZZ_CHECK(size > 0, "tensor " + t.name + " has unknown dtype " + t.dtype);
  uint64_t bytes = static_cast<uint64_t>(size);
  for (int64_t d : t.shape) {
    ACCEL_FUZZ_CHECK(d >= 0, "tensor " + t.name + " has negative dimension " + std::to_string(d));
    ACCEL_FUZZ_CHECK(!__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes),
                     "tensor " + t.name + ": shape overflows 64 bits");
  }
  ACCEL_FUZZ_CHECK(bytes == t.data.size(), "tensor " + t.name + " has " + std::to_string(t.data.size()) +
                                               " data bytes for its shape's " + std::to_string(bytes));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel::exec;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<SafetensorsFile> file = ParseSafetensors(bytes, "fuzz.safetensors");
  if (!file.ok()) {
    ACCEL_FUZZ_CHECK(file.status().code() == absl::StatusCode::kDataLoss,
                     "unexpected error code: " + file.status().ToString());
    return 0;
  }
  for (const SafetensorsTensor& t : file->tensors) CheckTensor(t);
  absl::StatusOr<std::string> again = SerializeSafetensors(*file);
  ACCEL_FUZZ_CHECK(again.ok(), "a parsed file does not serialize: " + again.status().ToString());
  absl::StatusOr<SafetensorsFile> reread = ParseSafetensors(*again, "again.safetensors");
  ACCEL_FUZZ_CHECK(reread.ok(), "a re-serialized file does not parse: " + reread.status().ToString());
  ACCEL_FUZZ_CHECK(reread->tensors.size() == file->tensors.size() && reread->metadata == file->metadata,
                   "round trip changed the file");
  // Tensors of equal offsets (empty ones) may come back in either order: compare by name.
  std::map<std::string, const SafetensorsTensor*> by_name;
  for (const SafetensorsTensor& t : reread->tensors) by_name[t.name] = &t;
  for (const SafetensorsTensor& a : file->tensors) {
    auto it = by_name.find(a.name);
    ACCEL_FUZZ_CHECK(it != by_name.end(), "round trip lost tensor " + a.name);
    const SafetensorsTensor& b = *it->second;
    ACCEL_FUZZ_CHECK(a.dtype == b.dtype && a.shape == b.shape && a.data == b.data,
                     "round trip changed tensor " + a.name);
  }
  return 0;
}
