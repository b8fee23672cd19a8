// What one rank of `accel worker` holds while it trains (RunState, built by RunWorker's setup)
// and what its training loop hands to the end of the run (LoopOutcome). Shared by the worker's
// files: worker.cc, train_loop.cc, checkpointing.cc, step_report.cc and run_summary.cc.
#ifndef ACCEL_EXECUTOR_WORKER_STATE_H_
#define ACCEL_EXECUTOR_WORKER_STATE_H_

#include <c10/core/Device.h>

#include <cstdint>
#include <memory>

#include "checkpoint/checkpoint_store.h"
#include "data/window_dataset.h"
#include "executor/comm_timer.h"
#include "executor/communicator.h"
#include "executor/models/causal_lm.h"
#include "executor/process_groups.h"
#include "executor/train/trainer.h"
#include "executor/worker.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// Everything the training loop needs. References are to objects RunWorker owns for the whole run.
struct RunState {
  const ir::Plan& plan;
  const WorkerEnv& env;
  const WorkerOptions& options;
  c10::Device device;
  Communicator& world;
  ProcessGroups& groups;
  std::shared_ptr<CausalLm> model;
  Trainer& trainer;
  WindowDataset& dataset;
  CheckpointStore& store;
  bool resumed;
  bool measure_tensors;  // the counting CPU allocator is installed and the device is the CPU
  bool measure_cuda;     // the device is CUDA and this build reads its caching allocator
  // Times the model's tensor-parallel collectives; null without tensor parallelism.
  std::shared_ptr<const CollectiveTimer> tp_timer;
};

// What the loop hands to FinishRun.
struct LoopOutcome {
  bool stopped = false;
  int64_t first_step_of_run = 0;
  // Steps and seconds of this run with the first step (which pays for lazy initialisation)
  // excluded from the rate.
  double timed_seconds = 0;
  int64_t timed_steps = 0;
  double last_loss = 0;
  int64_t peak_tensor_bytes = 0;  // largest per-step peak of this rank
  int64_t peak_reserved_bytes = 0;  // CUDA: largest per-step peak reserve of this rank
  int64_t last_checkpoint = -1;   // step of the newest checkpoint on disk from this run or resume
  // Pipeline: seconds this rank waited in receives and ran its schedule, timed steps only.
  double recv_wait_seconds = 0;
  double schedule_seconds = 0;
  // Tensor parallelism: seconds and calls of this rank's tp collectives, timed steps only.
  double tp_comm_seconds = 0;
  int64_t tp_comm_calls = 0;
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_WORKER_STATE_H_
