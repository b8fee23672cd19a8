#ifndef ACCEL_PLANNER_STEP_COMPUTE_H_
#define ACCEL_PLANNER_STEP_COMPUTE_H_

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "planner/shard_layout.h"

// Compute time of each pipeline stage for one optimizer step on one of its ranks: every matmul
// (planner/step_flops.h: forward, its two backward products, recompute) timed at its own shape
// with the profile's throughput for the compute dtype (planner/matmul_throughput.h), plus the
// measured elementwise ops (planner/elementwise_ops.h) when the profile has their costs, plus
// bandwidth-bound bytes over its memory bandwidth (a roofline sum: Williams et al. 2009, with
// no overlap of the two assumed).
namespace accel::planner {

// The factor a per-device figure of `profile` (FLOP/s, B/s, 1 / seconds per element) takes for
// one worker of a node running `devices_per_node` workers: 1 when the figures are per device;
// when they are per core (shared_cores_per_node > 0), shared_cores_per_node / devices_per_node
// × WorkerScalingEfficiency (one worker's threads do not scale linearly over every core; more
// workers than cores time-share them).
double WorkerShare(const ir::DeviceProfile& profile, int64_t devices_per_node);

// The cores' share alone: shared_cores_per_node / devices_per_node for per-core figures, else 1
// (the peak a worker could reach, for MFU).
double CoreShare(const ir::DeviceProfile& profile, int64_t devices_per_node);

// The profile's measured efficiency (ir::WorkerScaling) for `workers` workers per node: the
// entry for that count; between two entries, linear in log2(workers); beyond them, the nearest
// entry; 1 without entries or when `workers` < 1.
double WorkerScalingEfficiency(const ir::DeviceProfile& profile, int64_t workers);

// The host memory bandwidth, B/s, one worker's offloaded optimizer step gets:
// profile.host_memory_bytes_per_second, at most the worker's effective device memory bandwidth
// (memory_bytes_per_second × memory_efficiency × WorkerShare; host DRAM is not faster than
// HBM, and on cpu they are the same memory), which it is when the host figure is 0.
double HostMemoryBytesPerSecond(const ir::DeviceProfile& profile, int64_t devices_per_node);

// Bytes the executor's trainer moves per optimizer step on one rank of a stage beyond forward,
// backward and the optimizer (executor/train/zero_sync.cc, bucketed_sync.cc, trainer.cc), for
// `shards` (local and owned parameters, buckets), m = grad_accum_steps, g = parameter bytes
// (the module's gradients), r = reduce bytes per element, and fp32 gradients where the
// optimizer reads them:
//  - with buckets, on every reducing micro-step (the last for stages 0–1, each from stage 2)
//    every local gradient goes into a zeroed bucket buffer: (g + 2r) per local parameter; the
//    reduced values back where the optimizer reads them: stages 0–1 (r + 4) per owned
//    parameter once, stages 2–3 an add into the owned fp32 gradient, (r + 8) per micro-step;
//  - stages 0–1 accumulate the other m − 1 micro-steps in the module's gradients (autograd's
//    AccumulateGrad reads two and writes one): 3g per local parameter each;
//  - the gradient norm: an fp64 copy (4 + 8), its square (8 + 8) and sum (8), 36 per owned
//    parameter; clipping (training.grad_clip_norm > 0), counted as applied, as it is whenever
//    the norm exceeds the bound: 8 per owned parameter.
// With many micro-steps the accumulation dominates: on the Llama-2-70B example (tp 8, pp 4,
// stage 1, 128 micro-steps, bf16 parameters) it moves about 1.7 TB per stage and step, which
// trainers that fuse it into the weight-gradient product (Megatron-LM's
// gradient_accumulation_fusion) do not pay; accel's executor does not fuse it.
// They are memory-bound passes that no matmul or measured op accounts for; bench/RESULTS.md
// (step time) shows what they add on a CPU step.
double TrainerPassBytes(const ir::Plan& plan, const StageShardTotals& shards);

// One StageComputeTime per pipeline stage of `plan` (complete through estimate-memory), for
// grad_accum_steps microbatches of micro_batch_size sequences:
//   forward   = m · (layers · LayerForwardFlops + head? HeadForwardFlops)
//   backward  = 2 · forward;  recompute = m · layers · LayerRecomputeFlops
//   memory    = m · layers · 3 · ActivationBytesPerLayer(no recompute) · compute_bytes / 2
//               (each saved tensor written in forward, read and its gradient written in
//               backward; Korthikanti et al. 2022 Table 2 at 16-bit scaled to the compute
//               dtype), + the block's forward traffic again with full recompute,
//               + head? m · 3 · LogitsBytes, + the optimizer step: owned parameters ×
//               (adamw 28 B: parameter, m and v read and written, gradient read, fp32;
//               sgd 12 B, 20 B with momentum); with sharding offload that optimizer traffic is
//               host_memory_bytes instead, over HostMemoryBytesPerSecond (host_seconds, part of
//               seconds: ZeRO-Offload, Ren et al. 2021 §4, the CPU Adam step is bandwidth-bound);
//               with the profile's adamw_seconds_per_parameter (AdamW on the device) the step is
//               optimizer_seconds = owned × that / WorkerShare instead of its bytes,
//               + TrainerPassBytes.
//   matmul    = m · (layers · Σ_block products (t(fwd) · (1 + recomputed) + t(dA) + t(dB))
//               + head? t(fwd) + t(dA) + t(dB)), t(x) = 2·m·n·k·count / MatmulFlopsPerSecond
//   elementwise = m · (layers · Σ_ops BlockElementwiseElements · (fwd · (1 + recomputed) + bwd)
//               + head? Σ_ops HeadElementwiseElements · (fwd + bwd)), per-element costs from
//               the profile (ops without one: 0); recomputed: full every op and product,
//               selective the causal softmax and the attention products.
//   seconds   = matmul + memory + elementwise + host + optimizer seconds, each over the
//               worker's share (WorkerShare).
// Errors: InvalidArgument for a dtype or recompute name the planner never writes.
absl::StatusOr<std::vector<ir::StageComputeTime>> StageComputeTimes(
    const ir::Plan& plan, const ir::DeviceProfile& profile);

// StageComputeTimes with the owned parameters read from `shards` (planner/shard_layout.h)
// instead of the plan's shard units.
absl::StatusOr<std::vector<ir::StageComputeTime>> StageComputeTimes(
    const ir::Plan& plan, const ir::DeviceProfile& profile, const ShardTotals& shards);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_STEP_COMPUTE_H_
