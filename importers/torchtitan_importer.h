#ifndef ACCEL_IMPORTERS_TORCHTITAN_IMPORTER_H_
#define ACCEL_IMPORTERS_TORCHTITAN_IMPORTER_H_

#include "importers/import_context.h"

namespace accel::importers {

// Maps a torchtitan job TOML (the train_configs/*.toml of torchtitan before its 2026 move to
// Python configs; keys of both the 2024 layout, parallel degrees under [training] and
// [experimental], and the 2025 one, under [parallelism]), or the JSON dump of a 2026 Python
// config (Trainer.Config.to_dict() at torchtitan 9810191b: model_spec.name/flavor, top-level
// hf_assets_path and dump_folder, dataloader.dataset, model_converters.converters (refused like
// float8), debug.seed, training.dtype bfloat16 = bf16 parameters), onto `context.spec()`:
//   [parallelism] data_parallel_replicate/shard (-1 = auto), tensor, context, pipeline degrees,
//   pipeline_parallel_schedule (1F1B, GPipe), fsdp_reshard_after_forward (never = stage 2);
//   sharding stage 3 whenever the shard degree is not 1 (FSDP2); tensor parallelism implies
//   sequence parallelism (torchtitan shards norms along the sequence);
//   [training] local_batch_size (or batch_size), global_batch_size, seq_len, steps, max_norm,
//   seed, mixed_precision_param/reduce, enable_cpu_offload; [optimizer] name, lr, eps,
//   beta1/beta2, weight_decay; [lr_scheduler] warmup_steps, decay_type, lr_min / min_lr_factor;
//   [activation_checkpoint] mode; [checkpoint] enable, interval, keep_latest_k, folder;
//   [metrics] log_freq; [model] hf_assets_path (a directory: its tokenizer.json) or, taking
//   precedence, the older tokenizer_path (a directory likewise, a tokenizer.json, or llama2's
//   SentencePiece tokenizer.model) as data.train.tokenizer, resolved from the launch directory
//   (ImportOptions.launch_dir); a tiktoken tokenizer.model (llama3) is warning W0701. Values the file leaves out take torchtitan's defaults, which the
//   output states (e.g. lr 8e-4, local_batch_size 8, seq_len 2048, linear decay to 0).
// torchtitan configs do not give the world size (run_train.sh's NGPU does, default 8): the
// cluster is 8 devices per node, as many nodes as the explicit degrees need.
// Errors (nothing written): E0703 for float8/MX training, expert parallelism, interleaved or
// zero-bubble pipeline schedules, sqrt decay, seconds-based checkpoint intervals; E0702 for
// wrong types. Other keys follow ImportContext::Walk's rule.
void ImportTorchtitan(const YamlNode& root, ImportContext& context);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_TORCHTITAN_IMPORTER_H_
