#ifndef ACCEL_PLANNER_MEMORY_MODEL_H_
#define ACCEL_PLANNER_MEMORY_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "spec/job_spec.h"

// Pure memory formulas, each with its source (docs/planner-facts.md §5–§7 name the papers and
// projects). All results are bytes unless the name says otherwise; nothing here reads a plan.
namespace accel::planner {

// ---- Model states (parameters, gradients, master weights, optimizer states) ----

// Bytes per parameter of each model state before sharding.
struct ModelStateDtypes {
  int64_t param_bytes = 4;      // stored parameters
  int64_t grad_bytes = 4;       // gradients as accumulated in backward
  int64_t master_bytes = 0;     // fp32 master copy of 16-bit parameters (0 when params are fp32)
  int64_t grad_copy_bytes = 0;  // fp32 copy of 16-bit gradients the optimizer step reads
  int64_t optimizer_bytes = 8;  // optimizer states: AdamW m + v = 8, SGD momentum 4, plain SGD 0
};

// The dtypes accel's executor uses for a precision policy: gradients in the parameter dtype;
// with 16-bit parameters an fp32 master copy and an fp32 gradient copy for the update (DeepSpeed
// counts both: its "18 = 2 grads16 + 4 grads32 + 4 params32 + 8 optimizer", stage_1_and_2.py;
// Megatron-LM's fp16 row keeps fp32 main grads, docs "distributed optimizer" table); AdamW
// m + v in fp32 (8 B, ZeRO paper K = 12 with the master); SGD 4 B with momentum ≠ 0, else 0.
// `optimizer` is ADAMW or SGD; anything else is InvalidArgument.
absl::StatusOr<ModelStateDtypes> ModelStateDtypesFor(int64_t param_bytes,
                                                     ir::OptimizerKind optimizer,
                                                     double momentum);

// Model-state bytes held by one data-parallel rank. Host fields are the offloaded states.
struct ModelStateBytes {
  int64_t parameters = 0;
  int64_t gradients = 0;
  int64_t master_weights = 0;
  int64_t gradient_copy = 0;
  int64_t optimizer_states = 0;
  int64_t host_parameters = 0;
  int64_t host_master_weights = 0;
  int64_t host_gradient_copy = 0;
  int64_t host_optimizer_states = 0;

  int64_t device_total() const {
    return parameters + gradients + master_weights + gradient_copy + optimizer_states;
  }
  int64_t host_total() const {
    return host_parameters + host_master_weights + host_gradient_copy + host_optimizer_states;
  }
};

// Elements one rank holds of `count` sharded over `degree` ranks: ceil(count / degree)
// (ZeRO/FSDP pad the flat buffer so every rank holds the same share).
int64_t ShardedCount(int64_t count, int64_t degree);

// Model-state bytes per rank for `params` parameters (per tp rank), sharding `stage` 0–3 over
// `degree` ranks (ZeRO, Rajbhandari et al. 2019, §5.1–5.3): stage 0 replicates everything;
// stage 1 shards the optimizer states (with the master weights and the fp32 gradient copy);
// stage 2 also the gradients; stage 3 also the parameters. So with the ZeRO paper's dtypes
// (2 B params, 2 B grads, K = 12): (2 + 2 + K)·Ψ, 4Ψ + KΨ/d, 2Ψ + (2 + K)Ψ/d, (4 + K)Ψ/d.
// Offload (DeepSpeed ZeRO-Offload, Ren et al. 2021): kOptimizer moves master weights, gradient
// copy and optimizer states to host memory (same per-rank share); kAll also the parameters. The
// host optimizer always steps on its own fp32 copy with an fp32 gradient, so with fp32
// parameters offload adds those two (4 B each per optimizer element) on the host, and from
// stage 2 the device keeps no gradient shard (the reduced shard goes to the host). accel's
// executor differs from the paper's count in one place: from stage 2 a 16-bit gradient is
// reduced straight into the fp32 gradient copy, so no 16-bit gradient shard is kept (the
// paper's 2Ψ + (2 + K)Ψ/d becomes 2Ψ + KΨ/d, K including the fp32 gradient copy).
ModelStateBytes ModelStateBytesPerRank(int64_t params, const ModelStateDtypes& dtypes,
                                       int64_t stage, int64_t degree, spec::Offload offload);

// ---- DeepSpeed's model-state estimators (deepspeed/runtime/zero, docs "Memory Requirements") --

// One row of DeepSpeed's estimator: bytes per GPU and per node's CPU memory.
struct DeepSpeedEstimate {
  int64_t gpu_bytes = 0;
  int64_t cpu_bytes = 0;
};

// DeepSpeed's buffer factor for the CPU figures.
inline constexpr double kDeepSpeedBufferFactor = 1.5;

// estimate_zero2_model_states_mem_needs (stage_1_and_2.py), G = nodes · gpus_per_node:
// no offload: GPU 2P + floor(18P/G), CPU P·4·gpus_per_node·1.5 (model init in fp32);
// optimizer offload: GPU 2P, CPU P·max(4G, 16)·1.5. P = total parameters.
DeepSpeedEstimate DeepSpeedZero2Estimate(int64_t total_params, int64_t gpus_per_node,
                                         int64_t nodes, bool offload_optimizer,
                                         double buffer_factor = kDeepSpeedBufferFactor);

// estimate_zero3_model_states_mem_needs (stage3.py), L = largest module's own parameters,
// G = nodes · gpus_per_node, f = 1/nodes: GPU 4L + floor(18P/G) without offload,
// 4L + floor(2P/G) with optimizer offload, 4L with parameter and optimizer offload
// (4L: 2 B gathered 16-bit params + 2 B grads of the largest layer). CPU with zero.Init:
// none L·4·gpus_per_node·1.5, optimizer P·16·f·1.5, all P·18·f·1.5; without zero.Init:
// none P·4·gpus_per_node·1.5, optimizer P·max(4·gpus_per_node, 16f)·1.5,
// all P·max(4·gpus_per_node, 18f)·1.5. `offload_params` implies optimizer offload.
DeepSpeedEstimate DeepSpeedZero3Estimate(int64_t total_params, int64_t largest_layer_params,
                                         int64_t gpus_per_node, int64_t nodes,
                                         bool offload_optimizer, bool offload_params,
                                         bool zero_init = true,
                                         double buffer_factor = kDeepSpeedBufferFactor);

// DeepSpeed's printed figure: bytes / 2^30 with two decimals ("6.09"; DeepSpeed labels it GB).
std::string FormatGiB2(int64_t bytes);

// ---- Accelerate `accelerate estimate-memory` (accelerate/commands/estimate.py) ----

// One row of Accelerate's table, in bytes (fractional after the dtype division).
struct AccelerateRow {
  std::string dtype;                     // "float32" | "float16" | "int8" | "int4"
  double largest_layer_bytes = 0;
  double total_bytes = 0;
  std::optional<double> training_bytes;  // "Training using Adam"; nullopt prints "N/A"
};

// Accelerate's dtype columns. Sizes are the fp32 sizes (Σ numel·4 over parameters and
// buffers) divided by 1 (float32), 2 (float16), 4 (int8), 8 (int4); training with Adam is
// 4 × fp32 size for float32 (weights + grads + 2 Adam states) and 2 × fp32 size for float16
// (the largest of its mixed-precision terms), not estimated below 16 bits.
// Errors: InvalidArgument for a dtype outside the four.
absl::StatusOr<std::vector<AccelerateRow>> AccelerateEstimateTable(
    int64_t fp32_total_bytes, int64_t fp32_largest_layer_bytes,
    const std::vector<std::string>& dtypes);

// Accelerate's size text: divide by 1024 while ≥ 1024 through bytes, KB, MB, GB, TB, PB, round
// to two decimals and print as Python prints a float ("413.18 MB", "1.5 GB", "12.0 bytes").
std::string AccelerateFormatBytes(double bytes);

// ---- Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large
// Transformer Models", arXiv 2205.05198, §4 and Table 2) ----

// Activation-recomputation policy.
// Ordered by what they save: each mode keeps less than the one before it. kOp is per-op
// selective recompute (planner/recompute_policy.h).
enum class RecomputeMode { kNone, kSelective, kOp, kFull };

// Whether `mode` checkpoints whole blocks (full and per-op): forward runs them without autograd,
// backward rebuilds one block at a time.
inline bool RecomputesBlocks(RecomputeMode mode) { return mode == RecomputeMode::kFull || mode == RecomputeMode::kOp; }

// Shapes for one transformer layer on one rank.
struct ActivationShape {
  int64_t seq_len = 0;         // s, tokens per sequence held by this rank
  int64_t micro_batch = 0;     // b
  int64_t hidden = 0;          // h
  int64_t heads = 0;           // a
  int64_t ffn = 0;             // MLP inner size; 4h in the paper
  int64_t tp = 1;              // t
  bool sequence_parallel = false;
  bool fused_attention = false;  // SDPA/FlashAttention: no 5·a·s²·b score term
};

// Activation bytes of one layer kept for backward, 16-bit activations (Table 2):
// no recompute: s·b·h·(10 + 24/t + 5·a·s/(h·t)); with sequence parallel everything / t:
// s·b·h·(34/t + 5·a·s/(h·t)); selective recompute drops the 5·a·s²·b attention-score term;
// full recompute keeps only the layer input, 2·s·b·h (/ t with sequence parallel); per-op
// recompute that plus its kept outputs, bounded by 2·s·b·(4h + ffn)/t (planner/recompute_policy.h).
// t = 1 gives the "none" row s·b·h·(34 + 5·a·s/h). For ffn ≠ 4h the MLP part 16·s·b·h becomes
// 4·s·b·ffn (Megatron-LM theoretical_memory_usage.py: s·b·h·(18 + 4·ffn/h) for SP + selective),
// so 24/t → (8 + 4·ffn/h)/t. Divisions by t round up. Fused attention (FlashAttention, Dao et al.
// 2022) never materializes the scores: the 5·a·s²·b term is 0, as with selective recompute.
int64_t ActivationBytesPerLayer(const ActivationShape& shape, RecomputeMode recompute);

// Logits and loss on the last pipeline stage for one microbatch: s·b·(V_padded/t) elements,
// held as an fp32 copy for the softmax cross-entropy (4 B, as Hugging Face and Megatron-LM
// upcast logits for the loss) plus the compute-dtype matmul output when compute is 16-bit.
int64_t LogitsBytes(int64_t seq_len, int64_t micro_batch, int64_t padded_vocab, int64_t tp,
                    int64_t compute_bytes);

// Gradient-reduction buffers: 2 × bucket_elements × reduce dtype bytes (double buffering so
// one bucket fills while the other is reduced: DeepSpeed overlap_comm's two ipg buffers,
// stage_1_and_2.py setup_buckets; PyTorch DDP keeps buckets in flight the same way).
int64_t ReduceBucketBytes(int64_t bucket_elements, int64_t reduce_bytes);

// Sharding stage 3 working set: the largest shard unit gathered in full with its gradient
// before the reduce-scatter (DeepSpeed's 4L: 2 B params + 2 B grads of the largest layer,
// here at the real dtypes) plus the prefetch bucket of the next unit's parameters
// (stage3_prefetch_bucket_size, DeepSpeed).
int64_t GatheredParameterBytes(int64_t largest_unit_elements, int64_t prefetch_bucket_elements,
                               int64_t param_bytes, int64_t grad_bytes);

// ---- Runtime overhead (docs/planner-facts.md §7) ----

// Default per-device overhead the formulas leave out. CUDA: 1.5 GiB for the CUDA context,
// cuBLAS/cuDNN/NCCL workspaces (reported 0.5–2 GiB per GPU; DeepSpeed#4527 and #4093 show
// estimates missing ~13 GiB once everything is counted). CPU: 256 MiB for the process, Gloo
// buffers and the allocator. Unknown device types get the CUDA value.
int64_t DefaultRuntimeOverheadBytes(ir::DeviceType device_type);

// One line explaining DefaultRuntimeOverheadBytes for plan.resolved.
std::string RuntimeOverheadReason(ir::DeviceType device_type);

// Caching-allocator reserve and fragmentation on CUDA: 5% of the other device bytes, the low
// end of the 5–10% docs/planner-facts.md §7 reports. 0 for CPU.
int64_t AllocatorReserveBytes(int64_t other_device_bytes, ir::DeviceType device_type);

// The allocator reserve fraction used by AllocatorReserveBytes on CUDA.
inline constexpr double kAllocatorReserveFraction = 0.05;

// ---- Device memory ----

// Total memory of one device of `device_model` as the driver reports it (nvidia-smi
// memory.total, MiB × 2^20), e.g. "h100-80gb" → 81559 MiB: h100 81559, a100-80gb 81920,
// a100-40gb 40960, l4 23034, a10g 23028 (reported totals collected in modal-labs/modal-client
// PR #2797); h100-94gb (H100 NVL) 95830, h200 143771, v100-16gb 16160, v100-32gb 32510,
// t4 15360, l40s 46068. Names are lower case; nullopt for unknown names.
std::optional<int64_t> DeviceMemoryBytes(std::string_view device_model);

// The known device_model names in table order, for "did you mean" hints.
const std::vector<std::string>& DeviceModelNames();

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_MEMORY_MODEL_H_
