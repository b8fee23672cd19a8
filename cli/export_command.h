#ifndef ACCEL_CLI_EXPORT_COMMAND_H_
#define ACCEL_CLI_EXPORT_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/app.h"

namespace accel::cli {

// `accel export CKPT -o DIR`.
struct ExportOptions {
  // A checkpoint directory (step_N, or any directory holding a manifest.json) or a checkpoint root
  // (the directory holding step_N directories), whose newest valid checkpoint is then used.
  std::string checkpoint;
  // Output directory for model.safetensors and config.json; created if needed.
  std::string out_dir;
};

// The checkpoint directory CKPT names: itself when it holds a manifest.json or is named step_N,
// else the newest checkpoint under it that verifies (CheckpointStore::LatestGood). Messages of newer
// checkpoints that failed verification are appended to skipped. Errors: NotFound "PATH does not
// exist" / "no valid checkpoint under PATH"; InvalidArgument "PATH is not a directory".
absl::StatusOr<std::string> ResolveCheckpointDir(const std::string& path, std::vector<std::string>* skipped);

// Exports the checkpoint (exec::ExportCheckpoint) and prints "exported CKPTDIR to DIR (N tensors,
// B bytes)" to out. Skipped newer checkpoints are reported on err as "accel export: skipping
// MESSAGE", failures as "accel export: MESSAGE". Returns kExitOk; kExitInvalid when the checkpoint
// is missing, incomplete or corrupt (or has no config.json); kExitRuntime when writing fails.
int RunExportCommand(const ExportOptions& options, std::ostream& out, std::ostream& err);

// Registers `export` on the app (a CommandRegistrar).
void RegisterExportCommand(CLI::App& app, AppContext& context);

}  // namespace accel::cli

#endif  // ACCEL_CLI_EXPORT_COMMAND_H_
