#include "importers/accelerate_importer.h"

#include <optional>
#include <string>

#include "common/diag_codes.h"

namespace accel::importers {
namespace {

// A value read from the source with the key path it came from, for the output's comments.
// The facts that combine several keys; filled by the key rules, applied by Finish.
struct AccelerateState {
  std::string dist = "NO";
  std::string dist_path;
  std::string precision = "no";
  std::string precision_path;
  std::optional<Sourced> processes, machines;
  bool use_cpu = false;
  std::string use_cpu_path;
  std::optional<Sourced> stage;  // sharding.stage from fsdp/deepspeed/megatron keys
  bool hybrid = false;
  std::string offload_optimizer, offload_optimizer_path, offload_param, offload_param_path;
  std::optional<Sourced> replicate, shard, tensor, context;  // parallelism_config
  std::optional<Sourced> ulysses;  // parallelism_config_sp_size > 1: Ulysses sequence parallelism
  bool supported = true;
};

constexpr const char* kDevices =
    "accel plans NO, MULTI_GPU, MULTI_CPU, FSDP, DEEPSPEED and MEGATRON_LM on cpu or cuda "
    "devices; XLA/TPU, XPU, NPU, MLU, MUSA, HPU, SDAA and SageMaker's DATA_PARALLEL are not "
    "planned";

// FSDP sharding strategies (names, or the numbers of torch's ShardingStrategy enum + 1 that old
// configs write) as ZeRO stages; docs/design.md "Terms". -1: not expressible.
int StageOfStrategy(const std::string& name, bool* hybrid) {
  *hybrid = false;
  if (name == "FULL_SHARD" || name == "1") return 3;
  if (name == "SHARD_GRAD_OP" || name == "2") return 2;
  if (name == "NO_SHARD" || name == "3") return 0;
  if (name == "HYBRID_SHARD" || name == "4") {
    *hybrid = true;
    return 3;
  }
  return -1;
}

class AccelerateImporter {
 public:
  AccelerateImporter(ImportContext& context) : c_(context) {}

  void Run(const YamlNode& root) {
    ReadDistributedType(root);
    c_.Walk(root, "", TopRules());
    if (c_.sink().HasErrors() || !s_.supported) return;
    Finish();
  }

 private:
  void ReadDistributedType(const YamlNode& root) {
    if (!root.is_mapping()) return;
    for (const spec::YamlEntry& e : root.content().entries) {
      if (e.key->content().value != "distributed_type") continue;
      SourceKey key{*e.key, *e.value, "distributed_type"};
      if (std::optional<std::string> v = c_.String(key)) {
        s_.dist = *v;
        s_.dist_path = "distributed_type";
        static const char* kKnown[] = {"NO", "MULTI_GPU", "MULTI_CPU", "FSDP", "DEEPSPEED",
                                       "MEGATRON_LM"};
        bool known = false;
        for (const char* k : kKnown) known = known || s_.dist == k;
        if (!known) {
          c_.Unsupported(key, kDevices);
          s_.supported = false;
        }
      }
    }
  }

  // A mapped section that Accelerate reads only for one distributed_type.
  KeyRule Section(const std::string& name, const std::string& dist,
                  std::vector<KeyRule> (AccelerateImporter::*rules)()) {
    return {name, [this, dist, rules](const SourceKey& k) {
              if (k.value.is_null()) return;
              if (s_.dist == dist) {
                c_.Walk(k.value, k.path, (this->*rules)());
              } else if (!k.value.is_null() &&
                         !(k.value.is_mapping() && k.value.content().entries.empty())) {
                c_.Unmapped(k, "is ignored by Accelerate unless distributed_type is " + dist +
                                   "; not imported");
              }
            }};
  }

  std::vector<KeyRule> TopRules() {
    return {
        {"distributed_type", [](const SourceKey&) {}},  // read first
        {"mixed_precision",
         [this](const SourceKey& k) {
           if (auto v = c_.String(k)) {
             s_.precision = *v;
             s_.precision_path = k.path;
             if (*v != "no" && *v != "fp16" && *v != "bf16") {
               c_.Unsupported(k, "accel computes in fp32, bf16 or fp16");
               s_.supported = false;
             }
           }
         }},
        {"num_processes",
         [this](const SourceKey& k) {
           if (auto v = c_.IntAtLeast(k, 1)) s_.processes = Sourced{*v, k.path, k.value.location};
         }},
        {"num_machines",
         [this](const SourceKey& k) {
           auto v = c_.IntAtLeast(k, 1);
           if (v && c_.InRange("cluster.nodes", *v, k)) s_.machines = Sourced{*v, k.path, k.value.location};
         }},
        {"use_cpu",
         [this](const SourceKey& k) {
           if (auto v = c_.Bool(k)) {
             s_.use_cpu = *v;
             s_.use_cpu_path = k.path;
           }
         }},
        Section("fsdp_config", "FSDP", &AccelerateImporter::FsdpRules),
        Section("deepspeed_config", "DEEPSPEED", &AccelerateImporter::DeepSpeedRules),
        Section("megatron_lm_config", "MEGATRON_LM", &AccelerateImporter::MegatronRules),
        {"parallelism_config",
         [this](const SourceKey& k) { c_.Walk(k.value, k.path, ParallelismRules()); }},
        {"compute_environment", {}, {"LOCAL_MACHINE"}},
        {"machine_rank", {}, {"0"}, "accel run takes it as --node-rank"},
        {"main_process_ip", {}, {}, "accel run takes it as MASTER_ADDR"},
        {"main_process_port", {}, {}, "accel run takes it as MASTER_PORT"},
        {"rdzv_backend", {}, {"static"}},
        {"same_network", {}, {"true"}},
        {"main_training_function", {}, {"main"}},
        {"gpu_ids", {}, {"all"}},
        {"debug", {}, {"false"}},
        {"downcast_bf16", {}, {"no", "false"}},
        {"enable_cpu_affinity", {}, {"false"}},
        {"tpu_use_cluster", {}, {"false"}},
        {"tpu_use_sudo", {}, {"false"}},
        {"tpu_env", {}, {}},
        {"tpu_name", {}, {}},
        {"tpu_zone", {}, {}},
        {"commands", {}, {}},
        {"command_file", {}, {}},
        {"dynamo_backend", {}, {"NO"}},
        {"dynamo_config", {}, {}},
        {"ipex_config", {}, {}},
        {"mpirun_config", {}, {}},
        {"fp8_config", {}, {}},
        {"use_mps_device", {}, {"false"}},
    };
  }

  std::vector<KeyRule> FsdpRules() {
    return {
        {"fsdp_sharding_strategy", [this](const SourceKey& k) { Strategy(k); }},
        {"fsdp_reshard_after_forward",
         [this](const SourceKey& k) {
           const YamlNode& v = k.value.content();
           if (v.kind == YamlNode::Kind::kScalar && v.scalar_type == spec::ScalarType::kBool) {
             // FSDP2: resharding after forward is ZeRO-3, keeping the gathered parameters
             // until backward is ZeRO-2.
             if (auto b = c_.Bool(k)) s_.stage = Sourced{*b ? 3 : 2, k.path, {}};
           } else {
             Strategy(k);
           }
         }},
        {"fsdp_version",
         [this](const SourceKey& k) {
           if (auto v = c_.Int(k); v && *v != 1 && *v != 2) {
             c_.WrongType(k, "'" + k.path + "' must be 1 or 2, got " + std::to_string(*v));
           }
         }},
        {"fsdp_offload_params",
         [this](const SourceKey& k) {
           if (auto v = c_.Bool(k); v && *v) {
             s_.offload_param = "cpu";
             s_.offload_param_path = k.path;
           }
         }},
        {"fsdp_activation_checkpointing",
         [this](const SourceKey& k) {
           if (auto v = c_.Bool(k); v && *v) c_.Set("training.recompute", "full", k.path);
         }},
        {"fsdp_auto_wrap_policy",
         [this](const SourceKey& k) {
           auto v = c_.String(k);
           if (v && *v != "TRANSFORMER_BASED_WRAP") {
             c_.Unmapped(k, "has no accel equivalent: accel shards per transformer block "
                            "(TRANSFORMER_BASED_WRAP); not imported");
           }
         }},
        {"fsdp_transformer_layer_cls_to_wrap", [](const SourceKey&) {}},  // accel's blocks
        {"fsdp_backward_prefetch", {}, {"BACKWARD_PRE"}},
        {"fsdp_backward_prefetch_policy", {}, {"BACKWARD_PRE"}},
        {"fsdp_forward_prefetch", {}, {"false"}},
        {"fsdp_state_dict_type", {}, {"FULL_STATE_DICT"}},
        {"fsdp_use_orig_params", {}, {"true"}},
        {"fsdp_sync_module_states", {}, {"true"}},
        {"fsdp_cpu_ram_efficient_loading", {}, {"true"}},
        {"fsdp_ignored_modules", {}, {}},
        {"fsdp_min_num_params", {}, {"0", "100000000"}},
        {"fsdp_activation_checkpointing_policy", {}, {}},
    };
  }

  void Strategy(const SourceKey& k) {
    std::optional<std::string> v = c_.String(k);
    if (!v) return;
    bool hybrid = false;
    int stage = StageOfStrategy(*v, &hybrid);
    if (stage < 0) {
      c_.Unsupported(k, "accel shards by ZeRO stage (NO_SHARD, SHARD_GRAD_OP, FULL_SHARD, "
                        "HYBRID_SHARD); a replicated ZeRO-2 (HYBRID_SHARD_ZERO2) is not planned");
      return;
    }
    s_.stage = Sourced{stage, k.path, {}};
    s_.hybrid = hybrid;
  }

  std::vector<KeyRule> DeepSpeedRules() {
    return {
        {"zero_stage",
         [this](const SourceKey& k) {
           if (auto v = c_.Int(k)) {
             if (*v < 0 || *v > 3) {
               c_.WrongType(k, "'" + k.path + "' must be 0, 1, 2 or 3, got " + std::to_string(*v));
             } else {
               s_.stage = Sourced{*v, k.path, {}};
             }
           }
         }},
        {"offload_optimizer_device",
         [this](const SourceKey& k) { Offload(k, s_.offload_optimizer, s_.offload_optimizer_path); }},
        {"offload_param_device",
         [this](const SourceKey& k) { Offload(k, s_.offload_param, s_.offload_param_path); }},
        {"gradient_accumulation_steps",
         [this](const SourceKey& k) {
           if (ImportContext::IsAuto(k.value)) return c_.Auto("data.grad_accum_steps", k);
           if (auto v = c_.IntAtLeast(k, 1)) c_.SetInt("data.grad_accum_steps", *v, k);
         }},
        {"gradient_clipping",
         [this](const SourceKey& k) {
           if (ImportContext::IsAuto(k.value)) return c_.Auto("training.grad_clip_norm", k);
           if (auto v = c_.Number(k)) c_.SetFloat("training.grad_clip_norm", *v, k);
         }},
        {"zero3_init_flag", {}, {"false"}},
        {"zero3_save_16bit_model", {}, {"false"}},
        {"deepspeed_multinode_launcher", {}, {"pdsh"}},
        {"deepspeed_config_file", {}, {"none"},
         "its settings are not read from here; run accel import on that DeepSpeed JSON"},
    };
  }

  void Offload(const SourceKey& k, std::string& target, std::string& path) {
    std::optional<std::string> v = c_.String(k);
    if (!v || *v == "none") return;
    if (*v != "cpu") {
      c_.Unsupported(k, "accel offloads to CPU memory only");
      return;
    }
    target = *v;
    path = k.path;
  }

  std::vector<KeyRule> MegatronRules() {
    auto degree = [this](const char* field) {
      return [this, field](const SourceKey& k) {
        if (auto v = c_.IntAtLeast(k, 1)) c_.SetInt(field, *v, k);
      };
    };
    return {
        {"megatron_lm_tp_degree", degree("parallel.tensor")},
        {"megatron_lm_pp_degree", degree("parallel.pipeline")},
        {"megatron_lm_num_micro_batches", degree("parallel.pipeline_microbatches")},
        {"megatron_lm_sequence_parallelism",
         [this](const SourceKey& k) {
           if (auto v = c_.Bool(k); v && *v) c_.Set("parallel.sequence_parallel", "true", k.path);
         }},
        {"megatron_lm_recompute_activations",
         [this](const SourceKey& k) {
           // Megatron's --recompute-activations is its selective recomputation.
           if (auto v = c_.Bool(k); v && *v) c_.Set("training.recompute", "selective", k.path);
         }},
        {"megatron_lm_use_distributed_optimizer",
         [this](const SourceKey& k) {
           // The distributed optimizer shards optimizer states over data-parallel ranks: ZeRO-1.
           if (auto v = c_.Bool(k); v && *v) s_.stage = Sourced{1, k.path, {}};
         }},
        {"megatron_lm_gradient_clipping",
         [this](const SourceKey& k) {
           if (auto v = c_.Number(k)) c_.SetFloat("training.grad_clip_norm", *v, k);
         }},
    };
  }

  std::vector<KeyRule> ParallelismRules() {
    auto size = [this](std::optional<Sourced>* target, const char* field) {
      return [this, target, field](const SourceKey& k) {
        auto v = c_.IntAtLeast(k, 1);
        if (v && c_.InRange(field, *v, k)) *target = Sourced{*v, k.path, k.value.location};
      };
    };
    return {
        {"parallelism_config_dp_replicate_size", size(&s_.replicate, "parallel.data_replicate")},
        {"parallelism_config_dp_shard_size", size(&s_.shard, "parallel.data_shard")},
        {"parallelism_config_tp_size", size(&s_.tensor, "parallel.tensor")},
        {"parallelism_config_cp_size", size(&s_.context, "parallel.context")},
        // Accelerate's sp_size is DeepSpeed-Ulysses sequence parallelism: accel's context axis
        // with context_method ulysses.
        {"parallelism_config_sp_size", size(&s_.ulysses, "parallel.context")},
    };
  }

  void Finish() {
    FinishCluster();
    FinishPrecision();
    FinishLayout();
  }

  void FinishCluster() {
    const int64_t world = s_.processes ? s_.processes->value : 1;
    const int64_t nodes = s_.machines ? s_.machines->value : 1;
    // Without num_processes (1), the error is about num_machines.
    const SourceLocation at = s_.processes ? s_.processes->at : s_.machines->at;
    const std::string key = s_.processes ? "num_processes" : "num_machines";
    if (world % nodes != 0) {
      c_.sink().Error(codes::kImportUnsupported, c_.file(), at, "",
                      "Accelerate key '" + key + "' = " + std::to_string(s_.processes ? world : nodes) +
                          " cannot be expressed in accel: num_processes " + std::to_string(world) +
                          " is not a multiple of num_machines " +
                          std::to_string(nodes) + ", and accel needs the same number of devices "
                          "on every node");
      return;
    }
    if (world / nodes > 1024) {
      c_.sink().Error(codes::kImportUnsupported, c_.file(), at, "",
                      "Accelerate key 'num_processes' = " + std::to_string(world) +
                          " cannot be expressed in accel: more than 1024 devices per node");
      return;
    }
    std::string proc = s_.processes ? s_.processes->path : "num_processes absent: 1";
    if (s_.machines) c_.Set("cluster.nodes", YamlInt(nodes), s_.machines->path);
    c_.Set("cluster.devices_per_node", YamlInt(world / nodes),
           s_.machines ? proc + " / num_machines" : proc);
    const bool cpu = s_.use_cpu || s_.dist == "MULTI_CPU";
    c_.Set("cluster.device", cpu ? "cpu" : "cuda",
           cpu ? (s_.use_cpu ? s_.use_cpu_path + ": true" : "distributed_type: MULTI_CPU")
               : "distributed_type: " + s_.dist + (s_.dist_path.empty() ? " (default)" : ""));
  }

  void FinishPrecision() {
    if (s_.precision_path.empty()) return;
    const std::string from = s_.precision_path + ": " + s_.precision;
    if (s_.precision == "no") {
      c_.Set("precision.compute", "fp32", from);
      return;
    }
    c_.Set("precision.compute", s_.precision, from);
    if (s_.dist == "DEEPSPEED") {
      // Accelerate turns on DeepSpeed's fp16/bf16 mode: 16-bit parameters (fp32 master copy
      // in the optimizer) reduced in 16 bits.
      c_.Set("precision.params", s_.precision, from + " (DeepSpeed stores 16-bit parameters)");
      c_.Set("precision.reduce", s_.precision, from + " (DeepSpeed reduces in 16 bits)");
    } else {
      c_.Set("precision.params", "fp32", from + " (autocast over fp32 parameters)");
    }
    if (s_.precision == "fp16") c_.Set("precision.loss_scaling", "dynamic", from + " (GradScaler)");
  }

  void FinishLayout() {
    const int64_t nodes = s_.machines ? s_.machines->value : 1;
    int64_t stage = 0;
    if (s_.dist == "FSDP" && !s_.stage) s_.stage = Sourced{3, "distributed_type: FSDP (FULL_SHARD default)", {}};
    if (s_.dist == "DEEPSPEED" && !s_.stage) {
      s_.stage = Sourced{2, "deepspeed_config.zero_stage absent (Accelerate's default 2)", {}};
    }
    if (s_.stage) {
      stage = s_.stage->value;
      c_.Set("sharding.stage", YamlInt(stage), s_.stage->path);
    }
    FinishOffload(stage);
    if (s_.replicate || s_.shard || s_.tensor || s_.context || s_.ulysses) {
      FinishExplicitMesh(stage);
      return;
    }
    if (stage == 0) {
      c_.Set("parallel.data_replicate", "auto", "distributed_type: " + s_.dist + " (replicated data parallel)");
      return;
    }
    // Sharded data parallelism: every data-parallel rank holds a shard. FSDP's HYBRID_SHARD
    // shards within a machine and replicates across machines.
    if (s_.hybrid && nodes > 1) {
      c_.Set("parallel.data_replicate", YamlInt(nodes), s_.stage->path + ": HYBRID_SHARD (one replica per machine)");
      c_.Set("sharding.hybrid", "true", s_.stage->path);
    } else {
      if (s_.hybrid) c_.spec().Note("sharding", "HYBRID_SHARD on one machine shards like FULL_SHARD");
      c_.Set("parallel.data_replicate", "1", s_.stage->path + " (sharded data parallel)");
    }
    c_.Set("parallel.data_shard", "auto", s_.stage->path + " (sharded data parallel)");
  }

  void FinishOffload(int64_t stage) {
    if (!s_.offload_param.empty()) {
      c_.Set("sharding.offload", "all", s_.offload_param_path + ": " + s_.offload_param);
    } else if (!s_.offload_optimizer.empty()) {
      c_.Set("sharding.offload", "optimizer", s_.offload_optimizer_path + ": " + s_.offload_optimizer);
    }
  }

  // parallelism_config gives the mesh sizes (each defaults to 1 in Accelerate's
  // ParallelismConfig).
  // cp_size (ring attention, torch's context_parallel) and sp_size (Ulysses) are both accel's
  // context axis, by different methods: one of them may exceed 1.
  void FinishContext() {
    const bool ring = s_.context && s_.context->value > 1;
    const bool ulysses = s_.ulysses && s_.ulysses->value > 1;
    if (ring && ulysses) {
      c_.sink().Error(codes::kImportUnsupported, c_.file(), s_.ulysses->at, "",
                      "Accelerate key '" + s_.ulysses->path + "' = " + std::to_string(s_.ulysses->value) +
                          " cannot be expressed in accel: parallelism_config_cp_size is " +
                          std::to_string(s_.context->value) +
                          " too, and accel splits the sequence over one context axis, by ring "
                          "attention or by Ulysses, not both");
      return;
    }
    if (ulysses) {
      c_.Set("parallel.context", YamlInt(s_.ulysses->value), s_.ulysses->path);
      c_.Set("parallel.context_method", "ulysses", s_.ulysses->path + " (DeepSpeed-Ulysses all-to-all)");
      return;
    }
    c_.Set("parallel.context", s_.context ? YamlInt(s_.context->value) : "1",
           s_.context ? s_.context->path : std::string("parallelism_config: absent, 1"));
    if (ring) c_.Set("parallel.context_method", "ring", s_.context->path + " (ring attention)");
  }

  void FinishExplicitMesh(int64_t stage) {
    auto put = [this](const char* field, const std::optional<Sourced>& v) {
      c_.Set(field, v ? YamlInt(v->value) : "1",
             v ? v->path : std::string("parallelism_config: absent, 1"));
    };
    put("parallel.data_replicate", s_.replicate);
    put("parallel.data_shard", s_.shard);
    put("parallel.tensor", s_.tensor);
    FinishContext();
    if (stage == 3 && s_.replicate && s_.replicate->value > 1 && s_.shard && s_.shard->value > 1) {
      c_.Set("sharding.hybrid", "true", s_.replicate->path + " with " + s_.shard->path + " (HSDP)");
    }
  }

  ImportContext& c_;
  AccelerateState s_;
};

}  // namespace

void ImportAccelerate(const YamlNode& root, ImportContext& context) {
  AccelerateImporter(context).Run(root);
}

}  // namespace accel::importers
