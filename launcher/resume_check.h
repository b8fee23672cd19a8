// Whether a checkpoint can continue under a plan, decided from what the checkpoint records
// (manifest.json's "run" and "layout": checkpoint/run_identity.h, checkpoint/resume_layout.h, and
// trainer_state.json's data position) without LibTorch, in milliseconds. `accel plan
// --resume-from CKPT` prints it; `accel run` runs it on the checkpoint resume would pick before any
// worker starts. Torch-free.
#ifndef ACCEL_LAUNCHER_RESUME_CHECK_H_
#define ACCEL_LAUNCHER_RESUME_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/run_identity.h"
#include "ir/plan.pb.h"
#include "launcher/plan_support.h"

namespace accel::exec {

// The verdict on one checkpoint under one plan.
struct ResumeReport {
  std::string checkpoint_dir;  // the step directory checked
  int64_t step = 0;            // its manifest's step
  CheckpointIdentity identity;
  // E0604 (kResumeMismatch) at the spec field whose value cannot continue the checkpoint, e.g.
  //   model.hidden_size: "the checkpoint DIR was trained with model.hidden_size 64; this plan has
  //   32, so its tensors cannot load".
  std::vector<PlanIssue> errors;
  // W0601 (kResumeBatchChanged) at data.global_batch_size when it was set explicitly to another
  // value than the checkpoint's.
  std::vector<PlanIssue> warnings;
  std::vector<std::string> resharded;  // "parallel.data_shard 2 -> 4", ...
  std::vector<std::string> carried;    // "parameters", "optimizer state (adamw)", ...
  std::vector<std::string> lost;       // "optimizer state: ...", "data position: ..."
};

// Checks checkpoint_dir, a step directory, or a checkpoint root whose newest checkpoint of any job
// that verifies is taken (as `accel export` does), against plan. Reshards (data, context, tensor,
// pipeline, expert degree, sharding stage) and precision changes are fine for a sharded checkpoint;
// a differing model field, an unsharded checkpoint (model.safetensors) under a layout that writes
// shards or another optimizer, and a global batch that differs while the plan's is `auto` are
// errors; another explicit global batch is a warning; another optimizer (sharded), data.seq_len or
// data.train.path lose the optimizer state or the data position. A checkpoint that records no
// layout (written before accel recorded one) yields no errors and says so in `lost`. Errors:
// DataLoss (CheckpointStore::Verify's message) for a checkpoint that does not verify; NotFound
// "no valid checkpoint under ROOT" for a root without one.
absl::StatusOr<ResumeReport> CheckResume(const ir::Plan& plan, const std::string& checkpoint_dir);

// The report as `accel plan --resume-from` prints it, e.g.
//   resume from DIR (step 40; job 'x', run 1a2b3c4d, plan 0x1a2b3c4d): loads under this layout
//     resharded: parallel.data_shard 2 -> 4; sharding.stage 1 -> 2
//     carried over: parameters, optimizer state (adamw), data position (epoch 0 after 64 windows)
//     lost: nothing
// ("does not load under this layout (see the errors above)" when report.errors is not empty).
std::string ResumeReportText(const ResumeReport& report);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_RESUME_CHECK_H_
