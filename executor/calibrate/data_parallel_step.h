// `accel calibrate`'s measurement of how much of the gradient buckets' all-reduce time a
// data-parallel step hides when its workers share the node's cores
// (accel.ir.DeviceProfile.shared_core_bucket_overlap). With one worker per core there is no idle
// core for Gloo's copies and reductions, so the planner cannot assume that backward hides the
// buckets; yet a bucket's ring-model time is mostly waiting (latency, the peer's arrival), which
// a busy core spends on backward. On the 2-core build VM the buckets of the step-time
// benchmark's GPT-2 dp 2 added 21 ms to a step against 47.5 ms of ring-model time (measured by
// skipping them). So the measurement times such a step: the executor's trainer over a
// data-parallel group, with its bucket all-reduces and with them skipped. Plain types only.
#ifndef ACCEL_EXECUTOR_CALIBRATE_DATA_PARALLEL_STEP_H_
#define ACCEL_EXECUTOR_CALIBRATE_DATA_PARALLEL_STEP_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "executor/calibrate/paired_rounds.h"

namespace accel::exec {

// Times the executor's Trainer (AdamW, stage 0, buckets of `bucket_elements` fp32 gradients
// filled in reverse parameter order as ShardLayout::Replicated closes them: the planner's
// default is h² elements) on the executor's GPT-2 (h 256, 4 heads, ffn 1024, 4 layers,
// vocabulary 256, fp32: the step-time benchmark's model) over `group_size` forked processes
// (≥ 2) as one data-parallel group over Gloo, one thread each, 8 × 128 tokens per rank and step.
// Each of `rounds` rounds (≥ 1) times 3 steps after a warm-up with the bucket all-reduces and
// then 3 with them skipped (the loss and gradient-norm all-reduces always run); call_bytes are
// the buckets' bytes in launch order. `store_file` is the rendezvous file (must not exist).
// Call it before this process starts LibTorch's thread pools. Errors: InvalidArgument for
// group_size < 2, rounds < 1 or bucket_elements < 1; Internal when a process fails or its
// results are incomplete.
absl::StatusOr<PairedStepSample> MeasureDataParallelStep(int group_size, int rounds,
                                                         int64_t bucket_elements,
                                                         const std::string& store_file);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_CALIBRATE_DATA_PARALLEL_STEP_H_
