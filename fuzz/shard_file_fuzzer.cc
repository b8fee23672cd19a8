// libFuzzer target: the files of a sharded checkpoint as exec::ShardedTensorReader::Open reads them
// (resume with a different number of ranks, `accel export`). The input is one to three shard files
// separated by kSeparator; the harness writes them into a checkpoint directory with a manifest
// whose sizes and CRC-32Cs match (so the reader gets past CheckpointStore::ReadFile and parses the
// files themselves). A single file without the shard metadata format is written as the legacy
// single-writer model.safetensors instead.
//
// Invariants: an opened checkpoint returns, for every tensor, exactly numel x dtype-size bytes from
// ReadWhole and from a ReadRange inside it; errors are DataLoss or NotFound.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "checkpoint/crc32c.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_tensors.h"
#include "fuzz/fuzz_util.h"

namespace {

constexpr std::string_view kSeparator = "--accel-fuzz-next-file--";
constexpr size_t kMaxFiles = 3;

std::string ManifestEntry(const std::string& name, std::string_view bytes) {
  return absl::StrFormat(R"({"name": "%s", "size_bytes": %d, "crc32c": "%08x"})", name, bytes.size(),
                         accel::exec::Crc32c(bytes));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel::exec;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::vector<std::string_view> files = accel::fuzz::Split(input, kSeparator, kMaxFiles);
  const std::string& dir = accel::fuzz::ScratchDir();
  const bool legacy = files.size() == 1 && input.find("accel-shard") == std::string_view::npos;
  std::string listed;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string name = legacy ? "model.safetensors" : ShardFileName(static_cast<int>(i), static_cast<int>(files.size()));
    accel::fuzz::WriteFileOrDie(dir + "/" + name, files[i]);
    listed += (listed.empty() ? "" : ", ") + ManifestEntry(name, files[i]);
  }
  accel::fuzz::WriteFileOrDie(dir + "/manifest.json",
                              R"({"format": "accel-checkpoint", "version": 1, "step": 1, "files": [)" + listed + "]}");
  absl::StatusOr<ShardedTensorReader> reader = ShardedTensorReader::Open(dir);
  if (!reader.ok()) {
    ACCEL_FUZZ_CHECK(reader.status().code() == absl::StatusCode::kDataLoss ||
                         reader.status().code() == absl::StatusCode::kNotFound,
                     "unexpected error: " + reader.status().ToString());
    return 0;
  }
  for (const GlobalTensorInfo& info : reader->Tensors()) {
    const int64_t numel = info.numel();
    const int dtype_size = SafetensorsDtypeSize(info.dtype);
    ACCEL_FUZZ_CHECK(numel >= 0 && dtype_size > 0, "tensor " + info.name + " has a bad shape or dtype");
    absl::StatusOr<std::string> whole = reader->ReadWhole(info.name);
    ACCEL_FUZZ_CHECK(whole.ok(), "ReadWhole " + info.name + ": " + whole.status().ToString());
    ACCEL_FUZZ_CHECK(whole->size() == static_cast<uint64_t>(numel) * dtype_size,
                     "ReadWhole " + info.name + " returned " + std::to_string(whole->size()) + " bytes");
    const int64_t begin = numel / 3, end = numel - numel / 4;
    absl::StatusOr<std::string> part = reader->ReadRange(info.name, begin, end);
    ACCEL_FUZZ_CHECK(part.ok() && part->size() == static_cast<uint64_t>(end - begin) * dtype_size &&
                         *part == whole->substr(begin * dtype_size, (end - begin) * dtype_size),
                     "ReadRange " + info.name + " disagrees with ReadWhole");
  }
  return 0;
}
