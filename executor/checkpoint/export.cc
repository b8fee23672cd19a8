#include "executor/checkpoint/export.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "executor/checkpoint/checkpoint_store.h"
#include "executor/checkpoint/safetensors.h"
#include "executor/checkpoint/sharded_tensors.h"

namespace accel::exec {
namespace fs = std::filesystem;
namespace {

constexpr char kConfigFile[] = "config.json";
constexpr char kModelFile[] = "model.safetensors";
constexpr char kOptimizerPrefix[] = "optimizer.";

absl::Status Errno(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

absl::Status WriteAll(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno("cannot write", path);
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) return Errno("cannot fsync", path);
  return absl::OkStatus();
}

// Writes bytes to DIR/.NAME.tmp, fsyncs it and renames it to DIR/NAME: readers see the old file or
// the complete new one.
absl::Status WriteAtomically(const fs::path& dir, const std::string& name, const std::string& bytes) {
  const std::string tmp = (dir / ("." + name + ".tmp")).string();
  const std::string final_path = (dir / name).string();
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("cannot create", tmp);
  absl::Status written = WriteAll(fd, bytes, tmp);
  if (::close(fd) != 0 && written.ok()) written = Errno("cannot close", tmp);
  if (written.ok() && std::rename(tmp.c_str(), final_path.c_str()) != 0) written = Errno("cannot rename", tmp);
  if (!written.ok()) std::remove(tmp.c_str());
  return written;
}

// The model tensors of the checkpoint, whole, sorted by name.
absl::StatusOr<SafetensorsFile> ConsolidateModel(const std::string& checkpoint_dir) {
  auto is_model = [](const std::string& name) { return !absl::StartsWith(name, kOptimizerPrefix); };
  ACCEL_ASSIGN_OR_RETURN(ShardedTensorReader reader, ShardedTensorReader::Open(checkpoint_dir, is_model));
  SafetensorsFile model;
  model.metadata["format"] = "pt";
  for (const GlobalTensorInfo& info : reader.Tensors()) {
    ACCEL_ASSIGN_OR_RETURN(std::string data, reader.ReadWhole(info.name));
    model.tensors.push_back({info.name, info.dtype, info.shape, std::move(data)});
  }
  return model;
}

}  // namespace

absl::Status ExportCheckpoint(const std::string& checkpoint_dir, const std::string& out_dir, ExportSummary* summary) {
  absl::StatusOr<std::string> config = CheckpointStore::ReadFile(checkpoint_dir, kConfigFile);
  if (config.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(absl::StrCat(checkpoint_dir, " has no config.json"));
  }
  if (!config.ok()) return config.status();
  std::optional<SafetensorsFile> model;
  ACCEL_ASSIGN_OR_RETURN(model, ConsolidateModel(checkpoint_dir));
  const int64_t num_tensors = static_cast<int64_t>(model->tensors.size());
  ACCEL_ASSIGN_OR_RETURN(const std::string bytes, SerializeSafetensors(*model));
  model.reset();  // the serialized copy is all that is needed from here on
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", out_dir, ": ", ec.message()));
  ACCEL_RETURN_IF_ERROR(WriteAtomically(out_dir, kModelFile, bytes));
  ACCEL_RETURN_IF_ERROR(WriteAtomically(out_dir, kConfigFile, *config));
  if (summary != nullptr) {
    *summary = {num_tensors, static_cast<int64_t>(bytes.size()), (fs::path(out_dir) / kModelFile).string()};
  }
  return absl::OkStatus();
}

}  // namespace accel::exec
