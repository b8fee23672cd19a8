#ifndef ACCEL_IMPORTERS_ACCELERATE_IMPORTER_H_
#define ACCEL_IMPORTERS_ACCELERATE_IMPORTER_H_

#include "importers/import_context.h"

namespace accel::importers {

// Maps a Hugging Face Accelerate config (`accelerate config` YAML: distributed_type,
// mixed_precision, num_processes, num_machines, use_cpu, fsdp_config, deepspeed_config,
// megatron_lm_config, parallelism_config) onto `context.spec()`:
//   num_machines -> cluster.nodes; num_processes / num_machines -> cluster.devices_per_node;
//   use_cpu / MULTI_CPU -> device cpu, else cuda; mixed_precision -> precision (torch autocast
//   over fp32 parameters; fp16 adds dynamic loss scaling);
//   FSDP: fsdp_sharding_strategy (or fsdp2's fsdp_reshard_after_forward) -> sharding.stage and
//   hybrid, fsdp_offload_params -> offload all, fsdp_activation_checkpointing -> recompute full;
//   DEEPSPEED: zero_stage, offload_{optimizer,param}_device, gradient_accumulation_steps,
//   gradient_clipping; MEGATRON_LM: tp/pp degrees, micro batches, sequence parallelism,
//   recompute, distributed optimizer (= stage 1), gradient clipping; parallelism_config: the
//   dp_replicate/dp_shard/tp/cp sizes.
// Errors (nothing is written): E0703 for what accel cannot express (XLA/TPU/XPU/NPU/... devices,
// fp8, NVMe offload, HYBRID_SHARD_ZERO2, Ulysses sp_size > 1, num_processes not a multiple of
// num_machines), E0702 for wrong types. Other keys follow ImportContext::Walk's rule.
void ImportAccelerate(const YamlNode& root, ImportContext& context);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_ACCELERATE_IMPORTER_H_
