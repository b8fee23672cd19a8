// Test helper: the sharded checkpoint protocol the worker runs (executor/worker.cc
// SaveCheckpoint), for trainers driven by multi-rank tests.
#ifndef ACCEL_TESTS_EXECUTOR_TRAIN_SHARDED_SAVE_H_
#define ACCEL_TESTS_EXECUTOR_TRAIN_SHARDED_SAVE_H_

#include <cstdint>

#include "../multi_rank.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/sharded_tensors.h"
#include "checkpoint/tp_layout.h"
#include "executor/checkpoint/plan_metadata.h"
#include "executor/communicator.h"
#include "executor/train/trainer.h"
#include "ir/plan_access.h"

namespace accel::exec::testing {

// Every rank writes its shard of `trainer`'s state for `step` into the step's temporary
// directory, all ranks meet, rank 0 publishes it with the shared files (with `plan`, its
// config.json and tensor_parallel.json as the worker writes them), and all meet again.
// Throws (testing::Ok) on any failure.
inline void SaveShardedCheckpoint(const Trainer& trainer, CheckpointStore& store, Communicator& world,
                                  int64_t step, const ir::Plan* plan = nullptr) {
  const int rank = world.Rank();
  auto tmp = store.BeginStep(step);
  Ok(tmp.status());
  auto shard = trainer.SaveShard();
  Ok(shard.status());
  Ok(CheckpointStore::WriteRankFiles(*tmp, rank, {{ShardFileName(rank, world.Size()), *shard}}));
  Ok(world.Barrier());
  if (rank == 0) {
    auto shared = trainer.SaveState(GlobalDataPosition{});
    Ok(shared.status());
    if (plan != nullptr) {
      auto config = ConfigJsonFor(*plan);
      Ok(config.status());
      shared->push_back({"config.json", *config});
      if (ir::AxisSize(*plan, ir::Axis::kTp) > 1) shared->push_back({kTensorParallelFile, TpLayoutJsonFor(*plan)});
    }
    Ok(store.Publish(step, world.Size(), *shared).status());
  }
  Ok(world.Barrier());
}

}  // namespace accel::exec::testing

#endif  // ACCEL_TESTS_EXECUTOR_TRAIN_SHARDED_SAVE_H_
