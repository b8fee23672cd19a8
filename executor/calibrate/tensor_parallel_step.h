// `accel calibrate`'s measurement of what a blocking collective costs inside a training step
// (accel.ir.DeviceProfile.blocking_collective_seconds). Calibrate's all-reduce samples time a
// collective between identical 2 ms matmul bursts on warm caches; a tensor-parallel step blocks
// on its collectives between phases of real work that differ from rank to rank and evict the
// caches, and on the 2-core build VM it lost about twice what those samples predicted (Llama
// tp 2 of the step-time benchmark: 115 ms per step against 60 ms estimated, measured by running
// the same step with its collectives skipped). So the measurement times such a step: the
// executor's GPT-2 split over a tensor-parallel group, with its collectives and with them
// skipped. LibTorch stays in the .cc; this header has plain types only.
#ifndef ACCEL_EXECUTOR_CALIBRATE_TENSOR_PARALLEL_STEP_H_
#define ACCEL_EXECUTOR_CALIBRATE_TENSOR_PARALLEL_STEP_H_

#include <string>

#include "absl/status/statusor.h"
#include "executor/calibrate/paired_rounds.h"

namespace accel::exec {

// One measurement of the reference step on rank 0 of its group; call_bytes are those of
// every all-reduce (all its collectives are all-reduces: tensor parallelism without sequence
// parallelism).
using TensorParallelStepSample = PairedStepSample;

// Times the executor's GPT-2 (h 256, 4 heads, ffn 1024, 4 layers, vocabulary 256, fp32: the
// step-time benchmark's model) on 8 × 128 tokens split over `group_size` forked processes
// (≥ 2) as one tensor-parallel group over Gloo, one thread each: forward, vocabulary-parallel
// cross entropy, backward and an SGD update. Each of `rounds` rounds (≥ 1) times 3 steps after
// a warm-up with the collectives and then 3 with them skipped, back to back; the with and
// without figures are medians over all their rounds' steps. `store_file` is the rendezvous file (must not exist).
// Call it before this process starts LibTorch's thread pools, like MeasureGlooAllReduce.
// Errors: InvalidArgument for group_size < 2 or rounds < 1; Internal when a process fails or
// its results are incomplete.
absl::StatusOr<TensorParallelStepSample> MeasureTensorParallelStep(int group_size, int rounds,
                                                                  const std::string& store_file);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_TENSOR_PARALLEL_STEP_H_
