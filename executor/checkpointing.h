// Where `accel worker` keeps its checkpoints, how it writes one (single-file or sharded) and
// where its weights start from: the newest valid checkpoint (checkpoint.resume "auto") or the
// Hugging Face weights of model.init_from.
#ifndef ACCEL_EXECUTOR_CHECKPOINTING_H_
#define ACCEL_EXECUTOR_CHECKPOINTING_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/checkpoint_store.h"
#include "data/window_dataset.h"
#include "executor/train/trainer.h"
#include "executor/worker.h"
#include "executor/worker_state.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// The checkpoint directory: plan.checkpoint.dir when set, otherwise env.run_dir/checkpoints
// ("checkpoints" relative to the working directory without a run directory).
std::string CheckpointRoot(const ir::Plan& plan, const WorkerEnv& env);

// Prepares `store` and, when plan.checkpoint.resume is "auto", loads the newest valid checkpoint
// into `trainer` and seeks `dataset` to its data position. Rank 0 (`rank`) first removes the
// temporaries of a crashed attempt. Invalid checkpoints are skipped with a warning line. Returns
// whether a checkpoint was loaded (false also when there is none). Errors: those of the store
// (other than NotFound for an empty directory), of Trainer::LoadState and of SeekGlobal.
absl::StatusOr<bool> ResumeFromCheckpoint(const ir::Plan& plan, int rank, CheckpointStore& store,
                                          Trainer& trainer, WindowDataset& dataset);

// model.init_from: loads the trainer's owned ranges from the Hugging Face weights, unless a
// checkpoint was resumed (it holds the fine-tuned weights; the pretrained ones would be
// overwritten), and logs what this rank read. Does nothing without init_from. Errors: those of
// Trainer::LoadPretrained.
absl::Status StartFromPretrained(const ir::Plan& plan, const WorkerEnv& env, bool resumed,
                                 Trainer& trainer);

// Writes a checkpoint of the current step with config.json (and tensor_parallel.json when
// tp > 1); every rank calls it. Single-file state (stage 0, fp32): rank 0 writes it. Sharded
// state: every rank of the first replica writes its shard file into the step's temporary
// directory, all ranks meet, then rank 0 publishes it with the shared files. Rank 0 logs the
// directory. The ACCEL_TEST_CRASH_IN_CHECKPOINT hook (WorkerOptions) fires here. Errors: those
// of the trainer's serialization, the store's writes and the barriers.
absl::Status SaveCheckpoint(RunState& s);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CHECKPOINTING_H_
