// Crash-safe checkpoint directories: atomic publication, per-file CRC-32C manifest, keep-last-K,
// and selection of the newest checkpoint that verifies. Torch-free: files are byte strings.
//
// Layout: ROOT/step_NNNNNNNN/{<files>..., manifest.json}. manifest.json is
//   {"format": "accel-checkpoint", "version": 1, "step": N,
//    "files": [{"name": "model.safetensors", "size_bytes": 123, "crc32c": "e3069283"}, ...]}
// A checkpoint is written into ROOT/.tmp-step_NNNNNNNN, every file and the directory are fsynced,
// the directory is renamed to its final name and ROOT is fsynced, so a crash leaves either the
// complete checkpoint or none (POSIX rename atomicity).
#ifndef ACCEL_EXECUTOR_CHECKPOINT_CHECKPOINT_STORE_H_
#define ACCEL_EXECUTOR_CHECKPOINT_CHECKPOINT_STORE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace accel::exec {

// One file of a checkpoint: a plain file name (no '/') and its contents.
struct CheckpointFile {
  std::string name;
  std::string bytes;
};

// A published checkpoint directory.
struct CheckpointInfo {
  int64_t step = 0;
  std::string path;
};

// Manages the checkpoints under one root directory. Only one process (global rank 0) writes.
class CheckpointStore {
 public:
  // root is created on first Write; keep >= 1 is how many newest checkpoints survive pruning.
  CheckpointStore(std::string root, int keep);

  // Publishes files as the checkpoint of step (replacing an existing one of the same step), then
  // deletes all but the newest `keep` checkpoints and stale temporary directories. Returns the
  // final directory. Errors: InvalidArgument for a bad file name or step < 0; Internal naming the
  // path on any I/O failure (the previous checkpoints are untouched then).
  absl::StatusOr<std::string> Write(int64_t step, const std::vector<CheckpointFile>& files);

  // Published checkpoint directories (name step_N), ascending by step, without verifying them.
  // A missing root yields an empty list.
  absl::StatusOr<std::vector<CheckpointInfo>> List() const;

  // Checks dir against its manifest: manifest present and well-formed, every listed file present
  // with the recorded size and CRC-32C. Errors: DataLoss "DIR: REASON" (missing, truncated or
  // corrupt file).
  static absl::Status Verify(const std::string& dir);

  // The newest checkpoint that passes Verify. Each newer one that failed is appended to skipped
  // (if given) as its Verify message, so callers can log the fallback. Errors: NotFound "no valid
  // checkpoint under ROOT" when none verifies (or none exists).
  absl::StatusOr<CheckpointInfo> LatestGood(std::vector<std::string>* skipped = nullptr) const;

  // Contents of file name in checkpoint dir, checked against the manifest's size and CRC-32C.
  // Errors: NotFound when the manifest does not list it; DataLoss when it does not match.
  static absl::StatusOr<std::string> ReadFile(const std::string& dir, const std::string& name);

  // Directory name of step: "step_" followed by the step zero-padded to 8 digits.
  static std::string StepDirName(int64_t step);

 private:
  std::string root_;
  int keep_;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CHECKPOINT_CHECKPOINT_STORE_H_
