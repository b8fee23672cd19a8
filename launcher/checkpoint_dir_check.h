// What `accel run` finds in checkpoint.dir before any worker starts, and what it means for the
// run: which checkpoint resume continues (and so the run id the workers record), which
// checkpoints belong to another run, and whether this run may write there at all. Torch-free.
//
// Policy (docs/faults.md, "Checkpoint identity and retention"): a run writes beside another run's
// checkpoints only when it continues a newer one than all of them, so that resume and `accel
// export`, which take the newest valid checkpoint, can never pick the other run's by accident.
#ifndef ACCEL_LAUNCHER_CHECKPOINT_DIR_CHECK_H_
#define ACCEL_LAUNCHER_CHECKPOINT_DIR_CHECK_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/run_identity.h"
#include "ir/plan.pb.h"
#include "launcher/plan_support.h"

namespace accel::exec {

// One published checkpoint and what its manifest records (empty for an unreadable manifest).
struct FoundCheckpoint {
  CheckpointInfo info;
  CheckpointIdentity identity;
};

// checkpoint.dir as the launcher finds it.
struct CheckpointDirScan {
  std::string dir;
  // What checkpoint.resume auto continues: the job's newest checkpoint that verifies
  // (CheckpointStore::LatestGood with the plan's job name); nullopt with resume: never or none.
  std::optional<FoundCheckpoint> resume;
  // Every other checkpoint not of the resumed run id (all of them when nothing is resumed),
  // ascending by step: this run never prunes or replaces them.
  std::vector<FoundCheckpoint> others;
  // The run id the workers record: the resumed checkpoint's, or "" when the launcher must draw one.
  std::string run_id;
};

// Lists dir (a missing one is empty) and decides as above. Errors: those of listing it.
absl::StatusOr<CheckpointDirScan> ScanCheckpointDir(const ir::Plan& plan, const std::string& dir);

// E0605 (kCheckpointDirOccupied) at checkpoint.dir when this run would mix its checkpoints with
// others: with resume never or nothing to resume while others exist ("checkpoint.dir DIR holds 2
// checkpoints of another run (steps 30, 40; job 'x', run 1a2b3c4d) and checkpoint.resume is never:
// ..."), or when some of them are newer than the one resumed ("... holds checkpoints of another
// run after step 40, the one this run resumes (steps 50, 60; ...) ..."). Empty otherwise.
std::vector<PlanIssue> CheckpointDirIssues(const ir::Plan& plan, const CheckpointDirScan& scan);

// The run-summary line for others left in place ("checkpoint.dir DIR holds 2 checkpoints of another
// run (steps 10, 20; job 'x', run 1a2b3c4d), left in place"), or "" when there are none.
std::string LeftInPlaceLine(const CheckpointDirScan& scan);

}  // namespace accel::exec

#endif  // ACCEL_LAUNCHER_CHECKPOINT_DIR_CHECK_H_
