#include "cli/export_command.h"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "common/exit_codes.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/export.h"

namespace accel::cli {
namespace fs = std::filesystem;

absl::StatusOr<std::string> ResolveCheckpointDir(const std::string& path, std::vector<std::string>* skipped) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return absl::NotFoundError(absl::StrCat(path, " does not exist"));
  if (!fs::is_directory(path, ec)) return absl::InvalidArgumentError(absl::StrCat(path, " is not a directory"));
  // A step directory with a damaged manifest is still a checkpoint: its own error is the useful one.
  const std::string name = fs::path(path).lexically_normal().filename().string();
  if (fs::exists(fs::path(path) / "manifest.json", ec) || name.rfind("step_", 0) == 0) return path;
  absl::StatusOr<exec::CheckpointInfo> latest = exec::CheckpointStore(path, 1).LatestGood(skipped);
  if (!latest.ok()) return latest.status();
  return latest->path;
}

int RunExportCommand(const ExportOptions& options, std::ostream& out, std::ostream& err) {
  std::vector<std::string> skipped;
  absl::StatusOr<std::string> dir = ResolveCheckpointDir(options.checkpoint, &skipped);
  for (const std::string& message : skipped) err << "accel export: skipping " << message << "\n";
  absl::Status status = dir.status();
  exec::ExportSummary summary;
  if (status.ok()) status = exec::ExportCheckpoint(*dir, options.out_dir, &summary);
  if (!status.ok()) {
    err << "accel export: " << status.message() << "\n";
    // Writing the output is the only step that can fail for reasons other than the checkpoint.
    return status.code() == absl::StatusCode::kInternal ? kExitRuntime : kExitInvalid;
  }
  out << "exported " << *dir << " to " << options.out_dir << " (" << summary.num_tensors
      << (summary.num_tensors == 1 ? " tensor, " : " tensors, ") << summary.num_bytes << " bytes)\n";
  return kExitOk;
}

void RegisterExportCommand(CLI::App& app, AppContext& context) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* sub = app.add_subcommand(
      "export", "Write a checkpoint's model as a Hugging Face directory (model.safetensors + config.json)");
  sub->add_option("checkpoint", options->checkpoint,
                  "Checkpoint directory (step_N) or checkpoint root (its newest valid checkpoint is used)")
      ->required();
  sub->add_option("-o,--output", options->out_dir, "Output directory (created if needed)")->required();
  sub->callback([options, &context] {
    context.exit_code = RunExportCommand(*options, *context.out, *context.err);
  });
}

}  // namespace accel::cli
