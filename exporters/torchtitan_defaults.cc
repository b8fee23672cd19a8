// torchtitan's Trainer.Config() at its defaults, as Trainer.Config.to_dict() writes it
// (torchtitan 9810191b, PR #2386), with the registry configs' text dataloader
// (HuggingFaceTextDataLoader.Config) and an empty model_spec. Generated, do not edit:
//   tests/testdata/corpus/derive_torchtitan_dumps.py TORCHTITAN_REPO --defaults
#include "exporters/torchtitan_defaults.h"

namespace accel::exporters {

const char* TorchtitanDefaultDump() {
  return R"json(
{
  "model_spec": {
    "name": "",
    "flavor": ""
  },
  "hf_assets_path": "./tests/assets/tokenizer",
  "dump_folder": "./outputs",
  "profiling": {
    "enable_profiling": false,
    "save_traces_folder": "profile_traces",
    "profile_freq": 10,
    "profiler_active": 1,
    "profiler_warmup": 3,
    "enable_memory_snapshot": false,
    "save_memory_snapshot_folder": "memory_snapshot"
  },
  "metrics": {
    "log_freq": 10,
    "enable_tensorboard": false,
    "disable_color_printing": false,
    "save_tb_folder": "tb",
    "save_for_all_ranks": false,
    "enable_wandb": false
  },
  "tokenizer": {},
  "dataloader": {
    "dataset": "c4_test",
    "dataset_path": null,
    "num_workers": 0,
    "persistent_workers": false,
    "pin_memory": false,
    "prefetch_factor": null,
    "infinite": true
  },
  "model_converters": {
    "converters": [],
    "print_after_conversion": false
  },
  "optimizer": {
    "name": "AdamW",
    "lr": 0.0008,
    "beta1": 0.9,
    "beta2": 0.95,
    "eps": 1e-08,
    "weight_decay": 0.1,
    "implementation": "fused"
  },
  "lr_scheduler": {
    "warmup_steps": 200,
    "total_steps": null,
    "decay_ratio": null,
    "decay_type": "linear",
    "min_lr_factor": 0.0
  },
  "training": {
    "local_batch_size": 8,
    "global_batch_size": -1,
    "seq_len": 2048,
    "max_norm": 1.0,
    "steps": 10000,
    "enable_cpu_offload": false,
    "dtype": "float32",
    "mixed_precision_param": "bfloat16",
    "mixed_precision_reduce": "float32",
    "gc_freq": 50,
    "gc_debug": false
  },
  "parallelism": {
    "data_parallel_replicate_degree": 1,
    "data_parallel_shard_degree": -1,
    "fsdp_reshard_after_forward": "default",
    "tensor_parallel_degree": 1,
    "disable_loss_parallel": false,
    "enable_async_tensor_parallel": false,
    "pipeline_parallel_degree": 1,
    "module_fqns_per_model_part": null,
    "pipeline_parallel_first_stage_less_layers": 1,
    "pipeline_parallel_last_stage_less_layers": 1,
    "pipeline_parallel_layers_per_stage": null,
    "pipeline_parallel_schedule": "1F1B",
    "pipeline_parallel_schedule_csv": "",
    "pipeline_parallel_microbatch_size": 1,
    "pipeline_parallel_expert_parallel_overlap": true,
    "context_parallel_degree": 1,
    "context_parallel_load_balancer": "headtail",
    "context_parallel_rotate_method": "allgather",
    "expert_parallel_degree": 1,
    "expert_tensor_parallel_degree": 1,
    "expert_parallel_comm_backend": "standard"
  },
  "checkpoint": {
    "enable": false,
    "enable_ft_dataloader_checkpoints": true,
    "folder": "checkpoint",
    "interval": 500,
    "initial_load_path": null,
    "initial_load_model_only": true,
    "initial_load_in_hf": false,
    "initial_load_in_hf_quantized": false,
    "last_save_model_only": true,
    "last_save_in_hf": false,
    "export_dtype": "float32",
    "async_mode": "disabled",
    "keep_latest_k": 10,
    "load_step": -1,
    "exclude_from_loading": [],
    "enable_first_step_checkpoint": false,
    "create_seed_checkpoint": false,
    "load_only": false
  },
  "activation_checkpoint": {
    "mode": "selective",
    "selective_ac_option": "2",
    "per_op_sac_force_recompute_mm_shapes_by_fqns": [
      "moe.router.gate"
    ],
    "early_stop": false,
    "memory_budget": 0.5,
    "visualize_memory_budget_pareto": false,
    "preserve_rng_state": true,
    "determinism_check": "default",
    "debug": false
  },
  "compile": {
    "enable": false,
    "components": [
      "model",
      "loss"
    ],
    "backend": "inductor"
  },
  "comm": {
    "init_timeout_seconds": 300,
    "train_timeout_seconds": 100,
    "trace_buf_size": 20000,
    "save_traces_folder": "comm_traces",
    "save_traces_file_prefix": "rank_",
    "mode": "default"
  },
  "validator": {
    "freq": 10,
    "enable": false,
    "steps": -1,
    "dataloader": {
      "dataset": "c4_validation",
      "dataset_path": null,
      "num_workers": 0,
      "persistent_workers": false,
      "pin_memory": false,
      "prefetch_factor": null,
      "infinite": false
    }
  },
  "debug": {
    "seed": null,
    "deterministic": false,
    "deterministic_warn_only": false,
    "moe_force_load_balance": false,
    "print_config": false,
    "save_config_file": null
  }
}
)json";
}

}  // namespace accel::exporters
