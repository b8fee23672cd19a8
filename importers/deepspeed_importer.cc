#include "importers/deepspeed_importer.h"

#include <optional>
#include <string>

#include "common/diag_codes.h"

namespace accel::importers {
namespace {

// The facts that combine several keys; filled by the key rules, applied by Finish.
struct DeepSpeedState {
  std::optional<Sourced> train_batch, micro_batch, accum;
  int64_t stage = 0;
  std::string stage_path;
  std::string offload_optimizer_path, offload_param_path;
  std::string precision;  // "fp16" / "bf16" when enabled
  std::string precision_path;
  std::string loss_scaling, loss_scaling_path;
  bool has_optimizer = false, optimizer_lr = false, betas = false, weight_decay = false;
  std::string optimizer_type, type_text;
  std::optional<bool> adam_w_mode;
  std::optional<double> decay;
  SourceLocation type_at;
  std::optional<double> warmup_max_lr;
  std::string warmup_max_lr_path;
  bool grad_clip = false;
};

class DeepSpeedImporter {
 public:
  explicit DeepSpeedImporter(ImportContext& context) : c_(context) {}

  void Run(const YamlNode& root) {
    c_.Walk(root, "", TopRules());
    if (c_.sink().HasErrors()) return;
    Finish();
  }

 private:
  // A rule that stores a positive integer (or "auto") of the batch arithmetic.
  KeyRule Batch(const char* key, std::optional<Sourced>* target, const char* field) {
    return {key, [this, target, field](const SourceKey& k) {
              if (ImportContext::IsAuto(k.value)) return c_.Auto(field, k);
              auto v = c_.IntAtLeast(k, 1);
              if (v && c_.InRange(field, *v, k)) *target = Sourced{*v, k.path, k.value.location};
            }};
  }

  // A rule that walks a nested mapping with its own rules.
  KeyRule Nested(const char* key, std::vector<KeyRule> (DeepSpeedImporter::*rules)()) {
    return {key, [this, rules](const SourceKey& k) {
              if (!k.value.is_null()) c_.Walk(k.value, k.path, (this->*rules)());
            }};
  }

  std::vector<KeyRule> TopRules() {
    return {
        Batch("train_batch_size", &s_.train_batch, "data.global_batch_size"),
        Batch("train_micro_batch_size_per_gpu", &s_.micro_batch, "data.micro_batch_size"),
        Batch("gradient_accumulation_steps", &s_.accum, "data.grad_accum_steps"),
        {"gradient_clipping",
         [this](const SourceKey& k) {
           s_.grad_clip = true;
           if (ImportContext::IsAuto(k.value)) return c_.Auto("training.grad_clip_norm", k);
           if (auto v = c_.Number(k)) {
             if (*v < 0) return c_.WrongType(k, "'" + k.path + "' must not be negative");
             c_.SetFloat("training.grad_clip_norm", *v, k);
           }
         }},
        {"steps_per_print",
         [this](const SourceKey& k) {
           if (auto v = c_.IntAtLeast(k, 1)) c_.SetInt("training.log_every_steps", *v, k);
         }},
        {"communication_data_type",
         [this](const SourceKey& k) {
           auto v = c_.String(k);
           if (!v) return;
           if (*v == "fp16" || *v == "bf16" || *v == "fp32") {
             c_.Set("precision.reduce", *v, k.path);
           } else if (*v == "bfp16") {
             c_.Set("precision.reduce", "bf16", k.path);
           } else {
             c_.Unsupported(k, "accel reduces gradients in fp32, bf16 or fp16");
           }
         }},
        Nested("fp16", &DeepSpeedImporter::Fp16Rules),
        {"bf16", [this](const SourceKey& k) { if (!k.value.is_null()) c_.Walk(k.value, k.path, Bf16Rules()); }},
        {"bfloat16", [this](const SourceKey& k) { if (!k.value.is_null()) c_.Walk(k.value, k.path, Bf16Rules()); }},
        Nested("zero_optimization", &DeepSpeedImporter::ZeroRules),
        Nested("optimizer", &DeepSpeedImporter::OptimizerRules),
        Nested("scheduler", &DeepSpeedImporter::SchedulerRules),
        {"activation_checkpointing",
         [this](const SourceKey& k) {
           c_.Walk(k.value, k.path,
                   {{"partition_activations", {}, {"false"}},
                    {"cpu_checkpointing", {}, {"false"}},
                    {"contiguous_memory_optimization", {}, {"false"}},
                    {"number_checkpoints", {}, {}},
                    {"synchronize_checkpoint_boundary", {}, {"false"}},
                    {"profile", {}, {"false"}}});
         }},
        {"wall_clock_breakdown", {}, {"false"}},
        {"memory_breakdown", {}, {"false"}},
        {"prescale_gradients", {}, {"false"}},
        {"gradient_predivide_factor", {}, {"1.0"}},
        {"sparse_gradients", {}, {"false"}},
        {"zero_allow_untested_optimizer", {}, {"false"}},
        {"zero_force_ds_cpu_optimizer", {}, {"true"}},
        {"dump_state", {}, {"false"}},
        {"disable_allgather", {}, {"false"}},
    };
  }

  std::vector<KeyRule> Fp16Rules() {
    return {
        {"enabled",
         [this](const SourceKey& k) {
           if (ImportContext::IsAuto(k.value)) {
             c_.spec().Note("precision", "fp16 not imported: " + k.path +
                                             " is \"auto\" (the Trainer's --fp16 decides)");
             return;
           }
           if (auto v = c_.Bool(k); v && *v) {
             s_.precision = "fp16";
             s_.precision_path = k.path;
             if (s_.loss_scaling.empty()) {
               s_.loss_scaling = "dynamic";
               s_.loss_scaling_path = k.path + " (loss_scale absent: 0, dynamic)";
             }
           }
         }},
        {"loss_scale",
         [this](const SourceKey& k) {
           if (ImportContext::IsAuto(k.value)) return;
           if (auto v = c_.Number(k)) {
             s_.loss_scaling = *v == 0 ? "dynamic" : "static";
             s_.loss_scaling_path = k.path + ": " + ImportContext::Shown(k.value) +
                                    (*v == 0 ? " (dynamic)" : "");
             if (*v != 0) {
               c_.spec().Note("precision", "the static scale " + ImportContext::Shown(k.value) +
                                               " of " + k.path + " is not a spec field");
             }
           }
         }},
        {"initial_scale_power", {}, {"16"}},
        {"loss_scale_window", {}, {"1000"}},
        {"hysteresis", {}, {"2"}},
        {"consecutive_hysteresis", {}, {"false"}},
        {"min_loss_scale", {}, {"1"}},
        {"auto_cast", {}, {"false"}},
        {"fp16_master_weights_and_grads", {}, {"false"}},
    };
  }

  std::vector<KeyRule> Bf16Rules() {
    return {
        {"enabled",
         [this](const SourceKey& k) {
           if (ImportContext::IsAuto(k.value)) {
             c_.spec().Note("precision", "bf16 not imported: " + k.path +
                                             " is \"auto\" (the Trainer's --bf16 decides)");
             return;
           }
           if (auto v = c_.Bool(k); v && *v) {
             s_.precision = "bf16";
             s_.precision_path = k.path;
           }
         }},
        {"immediate_grad_update", {}, {"false"}},
        {"check_grad_overflow", {}, {"false"}},
    };
  }

  std::vector<KeyRule> ZeroRules() {
    auto bucket = [this](const char* field) {
      return [this, field](const SourceKey& k) {
        if (ImportContext::IsAuto(k.value)) return c_.Auto(field, k);
        if (auto v = c_.IntAtLeast(k, 0)) {
          if (*v == 0 && std::string(field) != "sharding.param_persistence_threshold") {
            return c_.WrongType(k, "'" + k.path + "' must be at least 1");
          }
          c_.SetInt(field, *v, k);
        }
      };
    };
    auto legacy_offload = [this](std::string* path) {
      return [this, path](const SourceKey& k) {
        if (auto v = c_.Bool(k); v && *v) *path = k.path + ": true";
      };
    };
    return {
        {"stage",
         [this](const SourceKey& k) {
           if (auto v = c_.Int(k)) {
             if (*v < 0 || *v > 3) {
               return c_.WrongType(k, "'" + k.path + "' must be 0, 1, 2 or 3, got " +
                                          std::to_string(*v));
             }
             s_.stage = *v;
             s_.stage_path = k.path;
           }
         }},
        {"offload_optimizer",
         [this](const SourceKey& k) { OffloadSection(k, &s_.offload_optimizer_path); }},
        {"offload_param",
         [this](const SourceKey& k) { OffloadSection(k, &s_.offload_param_path); }},
        {"cpu_offload", legacy_offload(&s_.offload_optimizer_path)},
        {"cpu_offload_params", legacy_offload(&s_.offload_param_path)},
        {"reduce_bucket_size", bucket("sharding.bucket_size")},
        {"stage3_prefetch_bucket_size", bucket("sharding.prefetch_bucket_size")},
        {"stage3_param_persistence_threshold", bucket("sharding.param_persistence_threshold")},
        {"cpu_offload_use_pin_memory", {}, {"false"}},
        {"allgather_partitions", {}, {"true"}},
        {"allgather_bucket_size", {}, {"5e8"}},
        // DeepSpeed turns overlap_comm on for stage 3 and off below: both are its default.
        {"overlap_comm", {}, {"false", "true"}},
        {"reduce_scatter", {}, {"true"}},
        {"contiguous_gradients", {}, {"true"}},
        {"round_robin_gradients", {}, {"false"}},
        {"stage3_max_live_parameters", {}, {"1e9"}},
        {"stage3_max_reuse_distance", {}, {"1e9"}},
        {"sub_group_size", {}, {"1e9"}},
        {"stage3_gather_16bit_weights_on_model_save", {}, {"false"}},
        {"stage3_gather_fp16_weights_on_model_save", {}, {"false"}},
        {"elastic_checkpoint", {}, {"false"}},
        {"load_from_fp32_weights", {}, {"true"}},
        {"ignore_unused_parameters", {}, {"true"}},
        {"legacy_stage1", {}, {"false"}},
        {"zero_hpz_partition_size", {}, {"1"}},
        {"zero_quantized_weights", {}, {"false"}},
        {"zero_quantized_gradients", {}, {"false"}},
        {"mics_shard_size", {}, {"-1"}},
        {"memory_efficient_linear", {}, {"true"}},
    };
  }

  void OffloadSection(const SourceKey& k, std::string* path) {
    c_.Walk(k.value, k.path,
            {{"device",
              [this, path](const SourceKey& d) {
                auto v = c_.String(d);
                if (!v || *v == "none") return;
                if (*v != "cpu") return c_.Unsupported(d, "accel offloads to CPU memory only");
                *path = d.path + ": cpu";
              }},
             {"pin_memory", {}, {"false"}},
             {"buffer_count", {}, {"4", "5"}},
             {"buffer_size", {}, {"1e8"}},
             {"max_in_cpu", {}, {"1e9"}},
             {"fast_init", {}, {"false"}},
             {"pipeline_read", {}, {"false"}},
             {"pipeline_write", {}, {"false"}},
             {"ratio", {}, {"1.0"}},
             {"nvme_path", {}, {}}});
  }

  std::vector<KeyRule> OptimizerRules() {
    s_.has_optimizer = true;
    return {
        {"type",
         [this](const SourceKey& k) {
           if (auto v = c_.String(k)) {
             std::string t;
             for (char ch : *v) t += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
             if (t != "adam" && t != "adamw" && t != "sgd") {
               return c_.Unsupported(k, "accel's optimizers are adamw and sgd");
             }
             s_.optimizer_type = t;
             s_.type_text = *v;
             s_.type_at = k.value.location;
             c_.Set("training.optimizer.name", t == "sgd" ? "sgd" : "adamw", k.path);
           }
         }},
        Nested("params", &DeepSpeedImporter::OptimizerParamRules),
        {"legacy_fusion", {}, {"false"}},
    };
  }

  std::vector<KeyRule> OptimizerParamRules() {
    auto number = [this](const char* field, bool* seen) {
      return [this, field, seen](const SourceKey& k) {
        if (seen) *seen = true;
        if (ImportContext::IsAuto(k.value)) return c_.Auto(field, k);
        if (auto v = c_.Number(k)) {
          if (std::string(field) == "training.optimizer.weight_decay") s_.decay = *v;
          c_.SetFloat(field, *v, k);
        }
      };
    };
    return {
        {"lr", number("training.optimizer.lr", &s_.optimizer_lr)},
        {"eps", number("training.optimizer.eps", nullptr)},
        {"weight_decay", number("training.optimizer.weight_decay", &s_.weight_decay)},
        {"momentum", number("training.optimizer.momentum", nullptr)},
        {"betas", [this](const SourceKey& k) { Betas(k); }},
        {"adam_w_mode",
         [this](const SourceKey& k) {
           if (auto v = c_.Bool(k)) s_.adam_w_mode = *v;
         }},
        {"torch_adam", {}, {"false"}},
        {"bias_correction", {}, {"true"}},
        {"amsgrad", {}, {"false"}},
    };
  }

  void Betas(const SourceKey& k) {
    s_.betas = true;
    if (ImportContext::IsAuto(k.value)) return c_.Auto("training.optimizer.betas", k);
    const YamlNode& v = k.value.content();
    if (v.kind != YamlNode::Kind::kSequence || v.items.size() != 2) {
      return c_.WrongType(k, "'" + k.path + "' must be a list of two numbers");
    }
    std::string text = "[";
    for (size_t i = 0; i < 2; ++i) {
      SourceKey item{k.key, *v.items[i], k.path + "[" + std::to_string(i) + "]"};
      std::optional<double> b = c_.Number(item);
      if (!b || !c_.InRange("training.optimizer.betas", *b, item)) return;
      text += (i ? ", " : "") + YamlFloat(*b);
    }
    c_.Set("training.optimizer.betas", text + "]", k.path);
  }

  std::vector<KeyRule> SchedulerRules() {
    auto steps = [this](const char* field) {
      return [this, field](const SourceKey& k) {
        if (ImportContext::IsAuto(k.value)) return c_.Auto(field, k);
        if (auto v = c_.IntAtLeast(k, std::string(field) == "training.steps" ? 1 : 0)) {
          c_.SetInt(field, *v, k);
        }
      };
    };
    return {
        {"type",
         [this](const SourceKey& k) {
           auto v = c_.String(k);
           if (!v) return;
           const char* name = *v == "WarmupLR"         ? "constant"
                              : *v == "WarmupDecayLR"  ? "linear"
                              : *v == "WarmupCosineLR" ? "cosine"
                                                       : nullptr;
           if (name == nullptr) {
             return c_.Unsupported(k, "accel's schedules are warmup then constant, linear or "
                                      "cosine (WarmupLR, WarmupDecayLR, WarmupCosineLR)");
           }
           c_.Set("training.lr_schedule.name", name, k.path + ": " + *v);
           // WarmupDecayLR decays linearly to 0.
           if (*v == "WarmupDecayLR") c_.Set("training.lr_schedule.min_lr_ratio", "0.0", k.path + ": " + *v);
         }},
        {"params",
         [this, steps](const SourceKey& k) {
           c_.Walk(k.value, k.path,
                   {{"warmup_num_steps", steps("training.lr_schedule.warmup_steps")},
                    {"total_num_steps", steps("training.steps")},
                    {"warmup_max_lr",
                     [this](const SourceKey& m) {
                       if (ImportContext::IsAuto(m.value)) return;
                       if (auto v = c_.Number(m)) {
                         s_.warmup_max_lr = *v;
                         s_.warmup_max_lr_path = m.path;
                       }
                     }},
                    {"cos_min_ratio",
                     [this](const SourceKey& m) {
                       if (ImportContext::IsAuto(m.value)) return c_.Auto("training.lr_schedule.min_lr_ratio", m);
                       if (auto v = c_.Number(m)) {
                         if (*v < 0 || *v > 1) return c_.WrongType(m, "'" + m.path + "' must be between 0 and 1");
                         c_.SetFloat("training.lr_schedule.min_lr_ratio", *v, m);
                       }
                     }},
                    {"warmup_type",
                     [this](const SourceKey& m) {
                       auto v = c_.String(m);
                       if (v && *v != "linear") {
                         c_.Unmapped(m, "has no accel equivalent: accel warms up linearly; not imported");
                       }
                     }},
                    {"warmup_min_lr", {}, {"0"}},
                    {"warmup_min_ratio", {}, {"0"}},
                    {"last_batch_iteration", {}, {"-1"}}});
         }},
    };
  }

  void Finish() {
    FinishBatch();
    FinishOptimizer();
    if (!s_.grad_clip) {
      c_.Set("training.grad_clip_norm", "0.0", "gradient_clipping absent (DeepSpeed's 0: no clipping)");
    }
    if (!s_.precision.empty()) {
      c_.Set("precision.params", s_.precision, s_.precision_path);
      c_.Set("precision.compute", s_.precision, s_.precision_path);
      if (!c_.spec().Has("precision.reduce")) {
        c_.Set("precision.reduce", s_.precision, s_.precision_path + " (communication_data_type absent)");
      }
      if (s_.precision == "fp16") c_.Set("precision.loss_scaling", s_.loss_scaling, s_.loss_scaling_path);
    }
    FinishSharding();
    c_.Set("cluster.device", "cuda", "DeepSpeed trains on GPUs");
  }

  void FinishBatch() {
    if (s_.train_batch) c_.Set("data.global_batch_size", YamlInt(s_.train_batch->value), s_.train_batch->path);
    if (s_.micro_batch) c_.Set("data.micro_batch_size", YamlInt(s_.micro_batch->value), s_.micro_batch->path);
    if (s_.accum) c_.Set("data.grad_accum_steps", YamlInt(s_.accum->value), s_.accum->path);
    if (s_.train_batch && s_.accum && !s_.micro_batch) {
      // DeepSpeed derives the micro batch from the world size, which only the launcher knows:
      // take one sample per rank, so the world is what the batch sizes imply.
      s_.micro_batch = Sourced{1, "importer default: train_micro_batch_size_per_gpu absent", {}};
      c_.Set("data.micro_batch_size", "1", s_.micro_batch->path);
    }
    if (!s_.train_batch || !s_.micro_batch || !s_.accum) return;
    // DeepSpeed requires train = micro x accumulation x data-parallel world; the world is
    // otherwise the launcher's, so this is the only place a DeepSpeed config gives it.
    const int64_t per_rank = s_.micro_batch->value * s_.accum->value;
    if (s_.train_batch->value % per_rank != 0) {
      c_.sink().Error(codes::kImportUnsupported, c_.file(), s_.train_batch->at, "",
                      "DeepSpeed key 'train_batch_size' = " + std::to_string(s_.train_batch->value) +
                          " cannot be expressed in accel: it is not train_micro_batch_size_per_gpu"
                          " x gradient_accumulation_steps (" + std::to_string(per_rank) +
                          ") x a whole number of ranks");
      return;
    }
    const int64_t world = s_.train_batch->value / per_rank;
    if (world > 1024 && (world % 8 != 0 || world / 8 > 65536)) {
      c_.sink().Error(codes::kImportUnsupported, c_.file(), s_.train_batch->at, "",
                      "DeepSpeed key 'train_batch_size' = " + std::to_string(s_.train_batch->value) +
                          " cannot be expressed in accel: it implies " + std::to_string(world) +
                          " ranks, more than accel's cluster fields hold");
      return;
    }
    const std::string from = "train_batch_size / (train_micro_batch_size_per_gpu x gradient_accumulation_steps)";
    if (world > 8 && world % 8 == 0) {
      c_.Set("cluster.nodes", YamlInt(world / 8), from + " = " + std::to_string(world) + " ranks, 8 per node");
      c_.Set("cluster.devices_per_node", "8", from + " = " + std::to_string(world) + " ranks, 8 per node");
    } else {
      c_.Set("cluster.devices_per_node", YamlInt(world), from);
    }
  }

  void FinishOptimizer() {
    if (!s_.has_optimizer) return;
    if (s_.optimizer_type == "adam" && s_.adam_w_mode == false && s_.decay.value_or(0) != 0) {
      c_.sink().Error(codes::kImportUnsupported, c_.file(), s_.type_at, "",
                      "DeepSpeed key 'optimizer.type' = \"" + s_.type_text + "\" cannot be "
                      "expressed in accel: with adam_w_mode false, Adam adds weight decay to the "
                      "gradient (L2); accel's adamw decouples it (Loshchilov & Hutter 2019)");
      return;
    }
    if (!s_.optimizer_lr && s_.warmup_max_lr) {
      c_.Set("training.optimizer.lr", YamlFloat(*s_.warmup_max_lr), s_.warmup_max_lr_path);
    }
    if (s_.optimizer_type != "sgd") {
      // Absent keys take torch's/DeepSpeed's defaults, which differ from accel's.
      if (!s_.betas) c_.Set("training.optimizer.betas", "[0.9, 0.999]", "optimizer.params.betas absent (DeepSpeed default)");
      if (!s_.weight_decay) c_.Set("training.optimizer.weight_decay", "0.0", "optimizer.params.weight_decay absent (DeepSpeed default)");
    }
  }

  void FinishSharding() {
    if (!s_.stage_path.empty()) c_.Set("sharding.stage", YamlInt(s_.stage), s_.stage_path);
    if (!s_.offload_param_path.empty()) {
      c_.Set("sharding.offload", "all", s_.offload_param_path);
    } else if (!s_.offload_optimizer_path.empty()) {
      c_.Set("sharding.offload", "optimizer", s_.offload_optimizer_path);
    }
    if (s_.stage == 0) {
      c_.Set("parallel.data_replicate", "auto", s_.stage_path.empty() ? "zero_optimization absent: stage 0" : s_.stage_path);
    } else {
      c_.Set("parallel.data_replicate", "1", s_.stage_path + " (ZeRO shards over all data-parallel ranks)");
      c_.Set("parallel.data_shard", "auto", s_.stage_path + " (ZeRO shards over all data-parallel ranks)");
    }
  }

  ImportContext& c_;
  DeepSpeedState s_;
};

}  // namespace

void ImportDeepSpeed(const YamlNode& root, ImportContext& context) {
  DeepSpeedImporter(context).Run(root);
}

}  // namespace accel::importers
