#ifndef ACCEL_IMPORTERS_DEEPSPEED_IMPORTER_H_
#define ACCEL_IMPORTERS_DEEPSPEED_IMPORTER_H_

#include "importers/import_context.h"

namespace accel::importers {

// Maps a DeepSpeed JSON config onto `context.spec()`:
//   train_batch_size / train_micro_batch_size_per_gpu / gradient_accumulation_steps -> data's
//   global_batch_size / micro_batch_size / grad_accum_steps ("auto" -> auto where accel has it);
//   with the global batch and accumulation numeric (the micro batch 1 when absent), their
//   quotient is the data-parallel world (cluster size; nodes of 8 above 8 ranks);
//   zero_optimization.stage, offload_optimizer/offload_param (device cpu; legacy cpu_offload),
//   reduce_bucket_size, stage3_prefetch_bucket_size, stage3_param_persistence_threshold ->
//   sharding; fp16 (loss_scale 0 = dynamic) / bf16 (alias bfloat16) / communication_data_type ->
//   precision; optimizer (Adam, AdamW, SGD) -> training.optimizer; scheduler (WarmupLR,
//   WarmupDecayLR, WarmupCosineLR) -> training.lr_schedule and steps; gradient_clipping (absent:
//   DeepSpeed's 0, no clipping) -> grad_clip_norm; steps_per_print -> log_every_steps.
// Errors: E0703 for other optimizers and schedulers, Adam with L2 weight decay (adam_w_mode
// false), NVMe offload, and inconsistent batch sizes; E0702 for wrong types. Other keys follow
// ImportContext::Walk's rule.
void ImportDeepSpeed(const YamlNode& root, ImportContext& context);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_DEEPSPEED_IMPORTER_H_
