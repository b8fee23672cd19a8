#include "executor/checkpointing.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint/sharded_tensors.h"
#include "checkpoint/tp_layout.h"
#include "common/status_macros.h"
#include "executor/checkpoint/plan_metadata.h"
#include "executor/worker_log.h"
#include "ir/plan_access.h"

namespace accel::exec {
namespace {

// The files rank 0 publishes with every checkpoint: the trainer's state and the plan's metadata.
absl::StatusOr<std::vector<CheckpointFile>> SharedFiles(const ir::Plan& plan, const Trainer& trainer,
                                                        const WindowDataset& dataset) {
  ACCEL_ASSIGN_OR_RETURN(std::vector<CheckpointFile> shared,
                         trainer.SaveState(dataset.GlobalPosition()));
  ACCEL_ASSIGN_OR_RETURN(std::string config_json, ConfigJsonFor(plan));
  shared.push_back({"config.json", std::move(config_json)});
  if (ir::AxisSize(plan, ir::Axis::kTp) > 1) shared.push_back({kTensorParallelFile, TpLayoutJsonFor(plan)});
  return shared;
}

// The sharded write: returns the published directory on rank 0, an empty string elsewhere.
absl::StatusOr<std::string> SaveShardedCheckpoint(RunState& s,
                                                  const std::vector<CheckpointFile>& shared,
                                                  bool crash_for_test) {
  const bool leader = s.env.rank == 0;
  std::string dir;
  ACCEL_ASSIGN_OR_RETURN(std::string tmp, s.store.BeginStep(s.trainer.step()));
  std::vector<CheckpointFile> mine;
  if (s.groups.RankIn("dp_replicate") == 0) {
    ACCEL_ASSIGN_OR_RETURN(std::string shard, s.trainer.SaveShard());
    mine.push_back({ShardFileName(s.env.rank, s.env.world_size), std::move(shard)});
  }
  ACCEL_RETURN_IF_ERROR(CheckpointStore::WriteRankFiles(tmp, s.env.rank, mine));
  if (crash_for_test) {
    WorkerLog(absl::StrCat("test hook: rank ", s.env.rank, " kills itself while writing checkpoint ",
                           s.trainer.step(), " (ACCEL_TEST_CRASH_IN_CHECKPOINT)"));
    ::kill(::getpid(), SIGKILL);
  }
  ACCEL_RETURN_IF_ERROR(s.world.Barrier());
  if (leader) {
    ACCEL_ASSIGN_OR_RETURN(dir, s.store.Publish(s.trainer.step(), s.env.world_size, shared));
  }
  // Nobody may look for this checkpoint (a resume, the next save) before it is published.
  ACCEL_RETURN_IF_ERROR(s.world.Barrier());
  return dir;
}

}  // namespace

std::string CheckpointRoot(const ir::Plan& plan, const WorkerEnv& env) {
  if (!plan.checkpoint().dir().empty()) return plan.checkpoint().dir();
  return env.run_dir.empty() ? std::string("checkpoints") : env.run_dir + "/checkpoints";
}

absl::StatusOr<bool> ResumeFromCheckpoint(const ir::Plan& plan, int rank, CheckpointStore& store,
                                          Trainer& trainer, WindowDataset& dataset) {
  // Leftovers of a crashed attempt must not mix into this run's checkpoints.
  if (rank == 0) ACCEL_RETURN_IF_ERROR(store.RemoveStaleTemporaries());
  if (plan.checkpoint().resume() != ir::RESUME_POLICY_AUTO) return false;
  std::vector<std::string> skipped;
  absl::StatusOr<CheckpointInfo> latest = store.LatestGood(&skipped);
  for (const std::string& s : skipped) WorkerLog("warning: skipping invalid checkpoint: " + s);
  if (!latest.ok()) {
    if (absl::IsNotFound(latest.status())) return false;
    return latest.status();
  }
  ACCEL_ASSIGN_OR_RETURN(GlobalDataPosition position, trainer.LoadState(latest->path));
  // Workers started without `accel run` (torchrun) continue the resumed checkpoint's run id.
  ACCEL_ASSIGN_OR_RETURN(CheckpointIdentity resumed_from, CheckpointStore::ReadIdentity(latest->path));
  store.ContinueRun(resumed_from);
  ACCEL_RETURN_IF_ERROR(dataset.SeekGlobal(position));
  WorkerLog(absl::StrFormat("resumed from %s (step %d, data epoch %d after %d windows)",
                            latest->path, trainer.step(), position.epoch, position.samples));
  return true;
}

absl::Status StartFromPretrained(const ir::Plan& plan, const WorkerEnv& env, bool resumed,
                                 Trainer& trainer) {
  const std::string& path = plan.model().init_from();
  if (path.empty()) return absl::OkStatus();
  if (resumed) {
    WorkerLog(absl::StrFormat("rank %d: init_from %s not read: resumed from a checkpoint", env.rank, path));
    return absl::OkStatus();
  }
  PretrainedReadStats read;
  ACCEL_RETURN_IF_ERROR(trainer.LoadPretrained(path, &read));
  // This rank's part only: its pipeline stage's tensors, its tensor-parallel slices, its shards.
  WorkerLog(absl::StrFormat("rank %d: init_from %s: copied %d bytes of %d tensors (%d bytes whole) "
                            "out of the mapped files, %d pages",
                            env.rank, path, read.bytes_copied, read.tensors, read.tensor_bytes,
                            read.pages_touched));
  return absl::OkStatus();
}

absl::Status SaveCheckpoint(RunState& s) {
  const bool leader = s.env.rank == 0;
  const bool crash_for_test = s.options.crash_in_checkpoint_step == s.trainer.step() &&
                              s.env.rank == s.options.crash_rank;
  std::vector<CheckpointFile> shared;
  if (leader) {
    ACCEL_ASSIGN_OR_RETURN(shared, SharedFiles(s.plan, s.trainer, s.dataset));
  }
  std::string dir;
  if (!s.trainer.ShardedCheckpoint()) {
    if (!leader) return absl::OkStatus();
    ACCEL_ASSIGN_OR_RETURN(dir, s.store.Write(s.trainer.step(), shared));
  } else {
    ACCEL_ASSIGN_OR_RETURN(dir, SaveShardedCheckpoint(s, shared, crash_for_test));
  }
  if (leader) WorkerLog(absl::StrCat("checkpoint: ", dir));
  return absl::OkStatus();
}

}  // namespace accel::exec
