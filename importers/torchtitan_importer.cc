#include "importers/torchtitan_importer.h"

#include <filesystem>
#include <optional>
#include <string>

#include "common/diag_codes.h"

namespace accel::importers {
namespace {

// The facts that combine several keys; filled by the key rules, applied by Finish.
struct TorchtitanState {
  std::optional<Sourced> replicate, shard, tensor, context, pipeline;
  // Mixture of experts: expert_parallel_degree and expert_tensor_parallel_degree.
  std::optional<Sourced> expert, expert_tensor;
  bool shard_auto = true;  // torchtitan's data_parallel_shard_degree default is -1
  std::string shard_path;
  std::optional<Sourced> local_batch, pp_microbatch;
  std::optional<Sourced> interleaved;  // pipeline_parallel_schedule = "Interleaved1F1B"
  std::optional<Sourced> zbv;          // pipeline_parallel_schedule = "ZBVZeroBubble"
  std::string reshard = "default", reshard_path;
  std::string model_name, model_flavor, dataset;
  bool optimizer_lr = false, decay_type = false, lr_min = false, warmup = false;
  bool seq_len = false, steps = false;
  std::string constant_path;  // decay_ratio = 0: no decay
  bool param_dtype = false, reduce_dtype = false;
  std::string checkpoint_folder = "checkpoint", dump_folder = "./torchtitan/outputs";
  // model.tokenizer_path and model.hf_assets_path: the nodes live as long as the import.
  std::optional<SourceKey> tokenizer_path, hf_assets_path;
};

class TorchtitanImporter {
 public:
  explicit TorchtitanImporter(ImportContext& context) : c_(context) {}

  void Run(const YamlNode& root) {
    c_.Walk(root, "", TopRules());
    if (c_.sink().HasErrors()) return;
    Finish();
  }

 private:
  KeyRule Section(const char* key, std::vector<KeyRule> (TorchtitanImporter::*rules)()) {
    return {key, [this, rules](const SourceKey& k) { c_.Walk(k.value, k.path, (this->*rules)()); }};
  }

  // A key whose value is set into `field` as an integer of at least `minimum`.
  KeyRule IntField(const char* key, const char* field, int64_t minimum, bool* seen = nullptr) {
    return {key, [this, field, minimum, seen](const SourceKey& k) {
              if (seen) *seen = true;
              if (auto v = c_.IntAtLeast(k, minimum)) c_.SetInt(field, *v, k);
            }};
  }

  KeyRule NumberField(const char* key, const char* field, bool* seen = nullptr) {
    return {key, [this, field, seen](const SourceKey& k) {
              if (seen) *seen = true;
              if (auto v = c_.Number(k)) c_.SetFloat(field, *v, k);
            }};
  }

  KeyRule Degree(const char* key, std::optional<Sourced>* target, const char* field) {
    return {key, [this, target, field](const SourceKey& k) {
              auto v = c_.IntAtLeast(k, 1);
              if (v && c_.InRange(field, *v, k)) *target = Sourced{*v, k.path, k.value.location};
            }};
  }

  // The feature is a refusal when on: it changes the numerics or the model.
  KeyRule Refuse(const char* key, std::string why) {
    return {key, [this, why](const SourceKey& k) {
              const YamlNode& v = k.value.content();
              bool on = v.kind == YamlNode::Kind::kSequence ? !v.items.empty()
                                                            : !(v.is_null() || v.value == "false");
              if (on) c_.Unsupported(k, why);
              else c_.Defaulted(k.path);
            }};
  }

  std::vector<KeyRule> TopRules() {
    return {
        Section("job", &TorchtitanImporter::JobRules),
        Section("metrics", &TorchtitanImporter::MetricsRules),
        Section("model", &TorchtitanImporter::ModelRules),
        Section("optimizer", &TorchtitanImporter::OptimizerRules),
        Section("lr_scheduler", &TorchtitanImporter::SchedulerRules),
        Section("training", &TorchtitanImporter::TrainingRules),
        Section("parallelism", &TorchtitanImporter::ParallelRules),
        Section("experimental", &TorchtitanImporter::ExperimentalRules),
        {"checkpoint", [this](const SourceKey& k) { Checkpoint(k); }},
        Section("activation_checkpoint", &TorchtitanImporter::RecomputeRules),
        Section("float8", &TorchtitanImporter::Float8Rules),
        {"quantize",
         [this](const SourceKey& k) {
           c_.Walk(k.value, k.path,
                   {{"linear", [this](const SourceKey& l) {
                       c_.Walk(l.value, l.path, {Section("float8", &TorchtitanImporter::Float8Rules)});
                     }}});
         }},
        // The 2026 dump (Trainer.Config.to_dict() at torchtitan 9810191b): model.name/flavor
        // moved to model_spec, hf_assets_path and dump_folder to the top, the data set to
        // dataloader, float8 to model_converters, the seed to debug.
        Section("model_spec", &TorchtitanImporter::ModelRules),
        {"hf_assets_path", [this](const SourceKey& k) { s_.hf_assets_path.emplace(k); }},
        {"dump_folder", [this](const SourceKey& k) { DumpFolder(k, "./outputs"); }},
        {"tokenizer", {}, {}},
        Section("dataloader", &TorchtitanImporter::DataloaderRules),
        Section("model_converters", &TorchtitanImporter::ModelRules),
        Section("debug", &TorchtitanImporter::DebugRules),
        {"validator", {}, {}},
        {"profiling", {}, {}},
        {"comm", {}, {}},
        {"compile", {}, {}},
        {"validation", {}, {}},
        {"memory_estimation", {}, {}},
    };
  }

  std::vector<KeyRule> JobRules() {
    return {
        {"dump_folder", [this](const SourceKey& k) { DumpFolder(k, "./torchtitan/outputs"); }},
        {"description", {}, {"default job"}},
        {"config_file", {}, {}},
        {"use_for_integration_test", {}, {"false"}},
        {"print_args", {}, {"false"}},
        {"print_config", {}, {"false"}},
        {"custom_config_module", {}, {""}},
    };
  }

  // Read for checkpoint.dir; otherwise (logs, traces) it has no accel equivalent.
  void DumpFolder(const SourceKey& k, const char* torchtitan_default) {
    auto v = c_.String(k);
    if (!v) return;
    s_.dump_folder = *v;
    if (*v == torchtitan_default) return c_.Defaulted(k.path);
    c_.Unmapped(k, "has no accel equivalent beyond checkpoint.dir; not imported");
  }

  // A key whose value changes nothing accel plans, listed in the header whatever it is.
  KeyRule Listed(const char* key) {
    return {key, [this](const SourceKey& k) { c_.Defaulted(k.path); }};
  }

  std::vector<KeyRule> DataloaderRules() {
    return {
        {"dataset", [this](const SourceKey& k) { if (auto v = c_.String(k)) s_.dataset = k.path + " = " + *v; }},
        {"dataset_path",
         [this](const SourceKey& k) {
           if (k.value.is_null()) return c_.Defaulted(k.path);
           if (auto v = c_.String(k)) s_.dataset = k.path + " = " + *v;
         }},
        {"num_workers", {}, {"0"}},
        {"persistent_workers", {}, {"false"}},
        {"pin_memory", {}, {"false"}},
        {"prefetch_factor", {}, {}},
        {"infinite", {}, {"true"}},
    };
  }

  std::vector<KeyRule> DebugRules() {
    return {
        {"seed",
         [this](const SourceKey& k) {
           if (k.value.is_null()) return c_.Defaulted(k.path);
           if (auto v = c_.IntAtLeast(k, 0)) c_.SetInt("training.seed", *v, k);
         }},
        {"deterministic", {}, {"false"}},
        {"deterministic_warn_only", {}, {"false"}},
        {"moe_force_load_balance", {}, {"false"}},
        {"print_config", {}, {"false"}},
        Listed("save_config_file"),  // the dump's own name
    };
  }

  std::vector<KeyRule> MetricsRules() {
    return {
        IntField("log_freq", "training.log_every_steps", 1),
        {"enable_tensorboard", {}, {"false"}},
        {"save_tb_folder", {}, {"tb"}},
        {"enable_wandb", {}, {"false"}},
        {"disable_color_printing", {}, {"false"}},
        {"enable_color_printing", {}, {"true"}},
        {"rank_0_only", {}, {"true"}},
        {"save_for_all_ranks", {}, {"false"}},
    };
  }

  std::vector<KeyRule> ModelRules() {
    return {
        {"name", [this](const SourceKey& k) { if (auto v = c_.String(k)) s_.model_name = *v; }},
        {"flavor", [this](const SourceKey& k) { if (auto v = c_.String(k)) s_.model_flavor = *v; }},
        Refuse("converters", "accel has no float8/MX model converters"),
        {"norm_type", {}, {"rmsnorm"}},
        {"print_after_conversion", {}, {"false"}},
        {"tokenizer_path", [this](const SourceKey& k) { s_.tokenizer_path.emplace(k); }},
        {"hf_assets_path", [this](const SourceKey& k) { s_.hf_assets_path.emplace(k); }},
    };
  }

  std::vector<KeyRule> OptimizerRules() {
    return {
        {"name",
         [this](const SourceKey& k) {
           auto v = c_.String(k);
           if (!v) return;
           if (*v != "AdamW" && *v != "Adam") return c_.Unsupported(k, "accel's optimizers are adamw and sgd");
           c_.Set("training.optimizer.name", "adamw", k.path + ": " + *v);
         }},
        NumberField("lr", "training.optimizer.lr", &s_.optimizer_lr),
        NumberField("eps", "training.optimizer.eps"),
        NumberField("weight_decay", "training.optimizer.weight_decay"),
        {"beta1", [this](const SourceKey& k) { Beta(k, 0); }},
        {"beta2", [this](const SourceKey& k) { Beta(k, 1); }},
        {"implementation", {}, {"fused", "foreach", "for-loop"}},
        {"early_step_in_backward", {}, {"false"}},
    };
  }

  void Beta(const SourceKey& k, int index) {
    std::optional<double> v = c_.Number(k);
    if (!v || !c_.InRange("training.optimizer.betas", *v, k)) return;
    betas_[index] = *v;
    betas_path_ += (betas_path_.empty() ? "" : ", ") + k.path;
    c_.Set("training.optimizer.betas", "[" + YamlFloat(betas_[0]) + ", " + YamlFloat(betas_[1]) + "]",
           betas_path_);
  }

  std::vector<KeyRule> SchedulerRules() {
    auto ratio = [this](const SourceKey& k) {
      s_.lr_min = true;
      if (auto v = c_.Number(k)) {
        if (*v < 0 || *v > 1) return c_.WrongType(k, "'" + k.path + "' must be between 0 and 1");
        c_.SetFloat("training.lr_schedule.min_lr_ratio", *v, k);
      }
    };
    return {
        IntField("warmup_steps", "training.lr_schedule.warmup_steps", 0, &s_.warmup),
        {"total_steps", {}, {}},
        {"decay_type",
         [this](const SourceKey& k) {
           s_.decay_type = true;
           auto v = c_.String(k);
           if (!v) return;
           if (*v != "linear" && *v != "cosine") return c_.Unsupported(k, "accel decays linearly or by cosine");
           c_.Set("training.lr_schedule.name", *v, k.path);
         }},
        {"lr_min", ratio},
        {"min_lr_factor", ratio},
        {"decay_ratio",
         [this](const SourceKey& k) {
           // The fraction of the steps after warmup spent decaying (torchtitan's WSD
           // schedule): 0 is a constant rate, 1 accel's decay; a stable phase between is not.
           // null (the 2026 dumps' default) decays over all steps, as 1.
           if (k.value.is_null()) return c_.Defaulted(k.path);
           auto v = c_.Number(k);
           if (!v) return;
           if (*v == 0) {
             s_.constant_path = k.path;
           } else if (*v == 1) {
             c_.Defaulted(k.path);
           } else {
             c_.Unmapped(k, "has no accel equivalent: accel decays over all steps after warmup, "
                            "without a stable phase; not imported");
           }
         }},
    };
  }

  std::vector<KeyRule> TrainingRules() {
    std::vector<KeyRule> rules = {
        {"local_batch_size", [this](const SourceKey& k) { LocalBatch(k); }},
        {"batch_size", [this](const SourceKey& k) { LocalBatch(k); }},
        {"global_batch_size",
         [this](const SourceKey& k) {
           if (auto v = c_.Int(k)) {
             if (*v == -1) return c_.Set("data.global_batch_size", "auto", k.path + ": -1");
             if (*v < 1) return c_.WrongType(k, "'" + k.path + "' must be -1 or positive");
             c_.SetInt("data.global_batch_size", *v, k);
           }
         }},
        IntField("seq_len", "data.seq_len", 1, &s_.seq_len),
        IntField("steps", "training.steps", 1, &s_.steps),
        NumberField("max_norm", "training.grad_clip_norm"),
        IntField("seed", "training.seed", 0),
        IntField("warmup_steps", "training.lr_schedule.warmup_steps", 0, &s_.warmup),
        {"mixed_precision_param", [this](const SourceKey& k) { Dtype(k, "precision.compute", &s_.param_dtype); }},
        {"mixed_precision_reduce", [this](const SourceKey& k) { Dtype(k, "precision.reduce", &s_.reduce_dtype); }},
        {"enable_cpu_offload",
         [this](const SourceKey& k) {
           if (auto v = c_.Bool(k); v && *v) c_.Set("sharding.offload", "all", k.path);
         }},
        {"dataset", [this](const SourceKey& k) { if (auto v = c_.String(k)) s_.dataset = k.path + " = " + *v; }},
        {"dataset_path", [this](const SourceKey& k) { if (auto v = c_.String(k)) s_.dataset = k.path + " = " + *v; }},
        {"compile", {}, {"false"}},
        {"deterministic", {}, {"false"}},
        {"gc_freq", {}, {"50"}},
        {"gc_debug", {}, {"false"}},
        {"dtype",
         [this](const SourceKey& k) {
           // bfloat16: parameters, gradients and optimizer states all in bf16 (no fp32 copy).
           auto v = c_.String(k);
           if (!v) return;
           if (*v == "float32") return c_.Defaulted(k.path);
           if (*v != "bfloat16") return c_.Unsupported(k, "accel's torchtitan dtypes are float32 and bfloat16");
           c_.Set("precision.params", "bf16", k.path + ": bfloat16");
         }},
        {"enable_float8_linear", {}, {"false"}},
    };
    // The 2024 layout kept the parallel degrees here.
    for (KeyRule& rule : ParallelRules()) rules.push_back(std::move(rule));
    return rules;
  }

  void LocalBatch(const SourceKey& k) {
    auto v = c_.IntAtLeast(k, 1);
    if (v && c_.InRange("data.micro_batch_size", *v, k)) s_.local_batch = Sourced{*v, k.path, k.value.location};
  }

  void Dtype(const SourceKey& k, const char* field, bool* seen) {
    *seen = true;
    auto v = c_.String(k);
    if (!v) return;
    const char* d = *v == "bfloat16" ? "bf16" : *v == "float32" ? "fp32" : *v == "float16" ? "fp16" : nullptr;
    if (d == nullptr) return c_.Unsupported(k, "accel's dtypes are float32, bfloat16 and float16");
    c_.Set(field, d, k.path + ": " + *v);
  }

  std::vector<KeyRule> ParallelRules() {
    return {
        Degree("data_parallel_replicate_degree", &s_.replicate, "parallel.data_replicate"),
        {"data_parallel_shard_degree",
         [this](const SourceKey& k) {
           auto v = c_.Int(k);
           if (!v) return;
           s_.shard_path = k.path;
           if (*v == -1) return;
           if (*v < 1) return c_.WrongType(k, "'" + k.path + "' must be -1 or positive");
           if (!c_.InRange("parallel.data_shard", *v, k)) return;
           s_.shard_auto = false;
           s_.shard = Sourced{*v, k.path, k.value.location};
         }},
        Degree("tensor_parallel_degree", &s_.tensor, "parallel.tensor"),
        Degree("context_parallel_degree", &s_.context, "parallel.context"),
        Degree("pipeline_parallel_degree", &s_.pipeline, "parallel.pipeline"),
        {"pipeline_parallel_schedule",
         [this](const SourceKey& k) {
           auto v = c_.String(k);
           if (!v) return;
           if (*v == "1F1B") return c_.Set("parallel.pipeline_schedule", "1f1b", k.path);
           if (*v == "GPipe") return c_.Set("parallel.pipeline_schedule", "gpipe", k.path);
           if (*v == "Interleaved1F1B") {
             s_.interleaved = Sourced{1, k.path, k.value.location};
             return c_.Set("parallel.pipeline_schedule", "interleaved_1f1b", k.path);
           }
           if (*v == "ZBVZeroBubble") {
             s_.zbv = Sourced{1, k.path, k.value.location};
             return c_.Set("parallel.pipeline_schedule", "zbv", k.path);
           }
           // PyTorch's ScheduleInterleavedZeroBubble with one stage per rank is ZB-H1; accel has no
           // interleaved zero-bubble schedule, so the stages run one model chunk each.
           if (*v == "InterleavedZeroBubble") {
             return c_.Set("parallel.pipeline_schedule", "zb_h1",
                           k.path + " = InterleavedZeroBubble, one model chunk per stage");
           }
           c_.Unsupported(k, "accel schedules pipelines with GPipe, 1F1B, Interleaved1F1B, "
                             "ZBVZeroBubble or InterleavedZeroBubble");
         }},
        {"pipeline_parallel_microbatch_size",
         [this](const SourceKey& k) {
           auto v = c_.IntAtLeast(k, 1);
           if (v && c_.InRange("data.micro_batch_size", *v, k)) s_.pp_microbatch = Sourced{*v, k.path, k.value.location};
         }},
        {"fsdp_reshard_after_forward",
         [this](const SourceKey& k) {
           auto v = c_.String(k);
           if (!v) return;
           if (*v != "default" && *v != "always" && *v != "never") {
             return c_.WrongType(k, "'" + k.path + "' must be default, always or never");
           }
           s_.reshard = *v;
           s_.reshard_path = k.path;
         }},
        Degree("expert_parallel_degree", &s_.expert, "parallel.expert"),
        Degree("expert_tensor_parallel_degree", &s_.expert_tensor, "parallel.tensor"),
        {"enable_async_tensor_parallel", {}, {"false"}},
        {"enable_compiled_autograd", {}, {"false"}},
        {"disable_loss_parallel", {}, {"false"}},
        {"pipeline_parallel_split_points", {}, {}},
        {"pipeline_parallel_layers_per_stage", {}, {}},
        {"pipeline_parallel_first_stage_less_layers", {}, {"1"}},
        {"pipeline_parallel_last_stage_less_layers", {}, {"1"}},
        {"context_parallel_rotate_method", {}, {"allgather"}},
        {"module_fqns_per_model_part", {}, {}},
        {"pipeline_parallel_schedule_csv", {}, {""}},
        {"pipeline_parallel_expert_parallel_overlap", {}, {"true"}},
        {"context_parallel_load_balancer", {}, {"headtail"}},
        {"expert_parallel_comm_backend", {}, {"standard"}},
    };
  }

  std::vector<KeyRule> ExperimentalRules() {
    std::vector<KeyRule> rules = ParallelRules();
    rules.push_back({"custom_import", {}, {""}});
    rules.push_back({"custom_args_module", {}, {""}});
    rules.push_back({"custom_model_path", {}, {""}});
    return rules;
  }

  void Checkpoint(const SourceKey& k) {
    // A disabled checkpoint section has no effect: list it once instead of key by key.
    bool enabled = false;
    if (k.value.is_mapping()) {
      for (const spec::YamlEntry& e : k.value.content().entries) {
        const std::string& name = e.key->content().value;
        if (name == "enable" || name == "enable_checkpoint") {
          SourceKey flag{*e.key, *e.value, k.path + "." + name};
          enabled = c_.Bool(flag).value_or(false);
        }
      }
    }
    if (!enabled) {
      c_.Defaulted(k.path + " (disabled)");
      return;
    }
    c_.Walk(k.value, k.path, CheckpointRules());
    c_.Set("checkpoint.dir", YamlString(s_.dump_folder + "/" + s_.checkpoint_folder),
           "job.dump_folder / checkpoint.folder");
    if (!c_.spec().Has("checkpoint.every_steps")) {
      c_.Set("checkpoint.every_steps", "500", "checkpoint.interval absent (torchtitan default)");
    }
  }

  std::vector<KeyRule> CheckpointRules() {
    return {
        {"enable", [](const SourceKey&) {}},
        {"enable_checkpoint", [](const SourceKey&) {}},
        {"folder", [this](const SourceKey& k) { if (auto v = c_.String(k)) s_.checkpoint_folder = *v; }},
        IntField("interval", "checkpoint.every_steps", 1),
        {"interval_type",
         [this](const SourceKey& k) {
           auto v = c_.String(k);
           if (v && *v != "steps") c_.Unsupported(k, "accel checkpoints every N steps");
         }},
        {"keep_latest_k",
         [this](const SourceKey& k) {
           auto v = c_.IntAtLeast(k, 0);
           if (v && *v > 0) c_.SetInt("checkpoint.keep", *v, k);
           if (v && *v == 0) c_.spec().Note("checkpoint", "keep omitted: " + k.path + " = 0 keeps all; accel keeps at least 1");
         }},
        {"model_weights_only", {}, {"false"}},
        {"last_save_model_only", {}, {"true", "false"}},
        {"last_save_model_weights_only", {}, {"false"}},
        {"export_dtype", {}, {"float32"}},
        {"async_mode", {}, {"disabled"}},
        {"create_seed_checkpoint", {}, {"false"}},
        {"load_step", {}, {"-1"}},
        {"exclude_from_loading", {}, {}},
        {"enable_ft_dataloader_checkpoints", {}, {"true"}},
        {"initial_load_path", {}, {}},
        {"initial_load_model_only", {}, {"true"}},
        {"initial_load_in_hf", {}, {"false"}},
        {"initial_load_in_hf_quantized", {}, {"false"}},
        {"last_save_in_hf", {}, {"false"}},
        {"enable_first_step_checkpoint", {}, {"false"}},
        {"load_only", {}, {"false"}},
    };
  }

  std::vector<KeyRule> RecomputeRules() {
    std::vector<KeyRule> rules = {
        {"mode",
         [this](const SourceKey& k) {
           auto v = c_.String(k);
           if (!v) return;
           if (*v != "none" && *v != "selective" && *v != "full") {
             return c_.WrongType(k, "'" + k.path + "' must be none, selective or full");
           }
           recompute_mode_ = *v;
           c_.Set("training.recompute", *v == "selective" && op_option_ ? "op" : *v, k.path);
         }},
        {"selective_ac_option",
         [this](const SourceKey& k) {
           auto v = c_.String(k);
           // Read only in selective mode: a 2026 dump lists it (default "2") with any mode.
           if (v && (recompute_mode_ == "full" || recompute_mode_ == "none")) return c_.Defaulted(k.path);
           if (v && *v != "op") {
             c_.Unmapped(k, "has no accel equivalent: accel recomputes every block, not every N-th "
                            "layer; not imported");
           }
           // torchtitan's per-op policy is accel's `op` (planner/recompute_policy.h).
           if (v && *v == "op") {
             op_option_ = true;
             if (recompute_mode_ == "selective") c_.Set("training.recompute", "op", k.path);
           }
         }},
    };
    AddRecomputeTuning(rules);
    return rules;
  }

  // The keys of torchtitan's ActivationCheckpointConfig beyond mode and option (2026 dumps
  // write them all): tuning of torch's checkpoint that changes nothing accel plans.
  void AddRecomputeTuning(std::vector<KeyRule>& rules) {
    rules.push_back(Listed("per_op_sac_force_recompute_mm_shapes_by_fqns"));
    rules.push_back({"early_stop", {}, {"false"}});
    rules.push_back({"memory_budget", {}, {"0.5"}});
    rules.push_back({"visualize_memory_budget_pareto", {}, {"false"}});
    rules.push_back({"preserve_rng_state", {}, {"true", "false"}});
    rules.push_back({"determinism_check", {}, {"default"}});
    rules.push_back({"debug", {}, {"false"}});
  }

  std::vector<KeyRule> Float8Rules() {
    return {
        Refuse("enable_float8_linear", "accel computes in fp32, bf16 or fp16, not float8"),
        Refuse("enable_fsdp_float8_all_gather", "accel gathers parameters in their own dtype, not float8"),
        {"precompute_float8_dynamic_scale_for_fsdp", {}, {"false"}},
        {"recipe_name", {}, {}},
        {"filter_fqns", {}, {}},
        {"force_recompute_fp8_weight_in_bwd", {}, {"false"}},
    };
  }

  void Finish();
  void FinishTokenizer();
  bool FindModelConfig(const std::string& assets);
  void FinishLayout();
  void FinishExpertParallel();
  void FinishDefaults();

  ImportContext& c_;
  TorchtitanState s_;
  double betas_[2] = {0.9, 0.95};  // torchtitan's defaults
  std::string betas_path_;
  // activation_checkpoint.mode and whether selective_ac_option is "op", which together make
  // accel's per-op recompute, in whichever order the keys come.
  std::string recompute_mode_;
  bool op_option_ = false;
};

void TorchtitanImporter::Finish() {
  if (!s_.model_name.empty() || !s_.model_flavor.empty()) {
    c_.spec().Note("model", "torchtitan model.name/flavor: " + s_.model_name + " " + s_.model_flavor +
                                "; accel reads the dimensions from model.config");
  }
  if (!s_.dataset.empty()) c_.spec().Note("data", s_.dataset + ": accel reads data.train.path");
  FinishTokenizer();
  FinishDefaults();
  FinishLayout();
}

// torchtitan's tokenizer, as its versions in the corpus find it (paths relative to the directory
// it runs from, the launch directory):
//  - until mid-2025, model.tokenizer_path names a file: `tokenizer.model`, read with SentencePiece
//    for model.name llama2 (until Dec 2024) and with tiktoken for llama3 and later models;
//  - from July 2025 (HuggingFaceTokenizer) it names a directory, and from August 2025
//    model.hf_assets_path does, which a tokenizer_path still overrides; the tokenizer is the
//    directory's tokenizer.json (torchtitan falls back to vocab.json/merges.txt, which accel does
//    not read), and a path ending in tokenizer.model is refused there.
// accel reads tokenizer.json and SentencePiece models (data.train.tokenizer), not tiktoken.
// Neither key given leaves accel's default: torchtitan's is a test tokenizer of its repository.
void TorchtitanImporter::FinishTokenizer() {
  if (s_.tokenizer_path && s_.hf_assets_path) {
    // torchtitan still reads config.json (and the weights) from hf_assets_path; only the
    // tokenizer comes from tokenizer_path. With a config.json here the key is imported (as
    // model.config) and nothing is lost.
    const std::optional<std::string> assets = c_.String(*s_.hf_assets_path);
    if (!(assets && !assets->empty() && FindModelConfig(*assets))) {
      c_.Unmapped(*s_.hf_assets_path, "is replaced by model.tokenizer_path as the tokenizer, as "
                                      "torchtitan does when both are set, and holds no config.json "
                                      "here; not imported");
    }
  }
  const std::optional<SourceKey>& key = s_.tokenizer_path ? s_.tokenizer_path : s_.hf_assets_path;
  if (!key) return;
  std::optional<std::string> path = c_.String(*key);
  if (!path) return;
  if (path->empty()) return c_.Unmapped(*key, "names no path; not imported");
  if (key->path == "model.hf_assets_path") FindModelConfig(*path);
  const std::string name = std::filesystem::path(*path).filename().string();
  if (name.ends_with(".model") && key->path == "model.hf_assets_path") {
    return c_.Unmapped(*key, "has no accel equivalent: torchtitan refuses a tokenizer.model here and "
                             "wants the directory of a tokenizer.json; not imported");
  }
  if (name.ends_with(".model")) {
    const std::string model = s_.model_name.empty() ? "absent" : s_.model_name;
    if (s_.model_name == "llama2") {
      return c_.Set("data.train.tokenizer", YamlString(c_.SpecPath(*path)),
                    key->path + " (SentencePiece, as torchtitan reads it for model.name llama2)");
    }
    return c_.Unmapped(*key, "has no accel equivalent: torchtitan reads a tokenizer.model with "
                             "tiktoken (model.name " + model + "), which accel cannot read; give "
                             "data.train.tokenizer the model's Hugging Face tokenizer.json; not "
                             "imported");
  }
  if (name.ends_with(".json")) {
    // Not a directory as torchtitan expects, but plainly the tokenizer file itself.
    return c_.Set("data.train.tokenizer", YamlString(c_.SpecPath(*path)), key->path);
  }
  c_.Set("data.train.tokenizer",
         YamlString(c_.SpecPath((std::filesystem::path(*path) / "tokenizer.json").string())),
         key->path + "/tokenizer.json");
}

// torchtitan reads the model's Hugging Face config.json (and weights) from the
// model.hf_assets_path directory: when that directory holds one on this machine, it becomes
// model.config (FinishSpec in importer.cc; `accel import --model` wins over it). Returns whether
// it found one.
bool TorchtitanImporter::FindModelConfig(const std::string& assets) {
  const std::string local = (std::filesystem::path(c_.LaunchPath(assets)) / "config.json").string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(local, ec)) return false;
  c_.FoundConfig({local, "model.hf_assets_path/config.json"});
  return true;
}

// torchtitan's defaults for what the file leaves out, where accel's differ (JobConfig of the
// torchtitan versions in the corpus).
void TorchtitanImporter::FinishDefaults() {
  const std::string dflt = " (torchtitan default)";
  if (!s_.optimizer_lr) c_.Set("training.optimizer.lr", "0.0008", "optimizer.lr absent" + dflt);
  if (!s_.constant_path.empty()) {
    c_.Set("training.lr_schedule.name", "constant", s_.constant_path + ": 0");
  } else if (!s_.decay_type) {
    c_.Set("training.lr_schedule.name", "linear", "lr_scheduler.decay_type absent" + dflt);
  }
  if (!s_.lr_min) c_.Set("training.lr_schedule.min_lr_ratio", "0.0", "lr_scheduler.lr_min absent" + dflt);
  if (!s_.warmup) c_.Set("training.lr_schedule.warmup_steps", "200", "lr_scheduler.warmup_steps absent" + dflt);
  if (!s_.seq_len) c_.Set("data.seq_len", "2048", "training.seq_len absent" + dflt);
  if (!s_.steps) c_.Set("training.steps", "10000", "training.steps absent" + dflt);
  if (!s_.param_dtype) c_.Set("precision.compute", "bf16", "training.mixed_precision_param absent" + dflt);
  if (!s_.reduce_dtype) c_.Set("precision.reduce", "fp32", "training.mixed_precision_reduce absent" + dflt);
  if (!c_.spec().Has("precision.params")) {
    c_.Set("precision.params", "fp32", "FSDP2 mixed precision keeps fp32 parameters");
  }
  if (!c_.spec().Has("training.grad_clip_norm")) c_.Set("training.grad_clip_norm", "1.0", "training.max_norm absent" + dflt);
  if (!c_.spec().Has("training.log_every_steps")) c_.Set("training.log_every_steps", "10", "metrics.log_freq absent" + dflt);
  const Sourced local = s_.local_batch.value_or(Sourced{8, "training.local_batch_size absent" + dflt});
  const int64_t pp = s_.pipeline ? s_.pipeline->value : 1;
  if (pp > 1) {
    // torchtitan splits the local batch into microbatches of pipeline_parallel_microbatch_size;
    // in accel the pipeline microbatches are the accumulation steps.
    const Sourced mb = s_.pp_microbatch.value_or(Sourced{1, "parallelism.pipeline_parallel_microbatch_size absent" + dflt});
    if (local.value % mb.value != 0) {
      // Both keys were given (the defaults divide): point at the microbatch size.
      c_.sink().Error(codes::kImportUnsupported, c_.file(), mb.at, "",
                      "torchtitan key '" + mb.path + "' = " + std::to_string(mb.value) +
                          " cannot be expressed in accel: it does not divide " + local.path +
                          " = " + std::to_string(local.value));
      return;
    }
    const int64_t microbatches = local.value / mb.value;  // both at most 65536
    c_.Set("data.micro_batch_size", YamlInt(mb.value), mb.path);
    c_.Set("data.grad_accum_steps", YamlInt(microbatches), local.path + " / " + mb.path);
    if (microbatches < pp && c_.spec().Get("parallel.pipeline_schedule") != "gpipe") {
      // 1F1B with fewer microbatches than stages never reaches its steady state: it runs as
      // GPipe, which accel's 1F1B refuses to pretend otherwise.
      c_.Set("parallel.pipeline_schedule", "gpipe",
             "1F1B with " + std::to_string(microbatches) + " microbatches < " +
                 std::to_string(pp) + " stages is GPipe");
    }
    if (s_.interleaved) {
      // torchtitan gives a looped schedule 2 stages per rank unless layers_per_stage says
      // otherwise; accel's virtual_stages auto is the same 2.
      c_.Set("parallel.virtual_stages", "auto", "torchtitan's default of 2 stages per rank for Interleaved1F1B");
    }
  } else {
    c_.Set("data.micro_batch_size", YamlInt(local.value), local.path);
    if (s_.interleaved) {
      // One stage: nothing to interleave (accel refuses interleaved_1f1b there, E0422).
      c_.Set("parallel.pipeline_schedule", "1f1b",
             s_.interleaved->path + " = Interleaved1F1B has no effect with one pipeline stage");
    }
    if (s_.zbv) {
      // One stage: no V to run (accel refuses zbv there, E0422).
      c_.Set("parallel.pipeline_schedule", "1f1b",
             s_.zbv->path + " = ZBVZeroBubble has no effect with one pipeline stage");
    }
  }
}

// torchtitan's expert parallelism (ParallelDims._build_mesh_with_ep): with
// expert_tensor_parallel_degree equal to tensor_parallel_degree, ep is carved out of dp_shard ×
// cp, which is accel's parallel.expert; with expert_tensor_parallel_degree 1 (torchtitan's
// default) and tp > 1, ep also takes the tp ranks and each expert is whole on one rank, which
// accel does not plan (it splits every expert over tp). Without expert parallelism the expert
// tensor degree has no effect.
void TorchtitanImporter::FinishExpertParallel() {
  const int64_t ep = s_.expert ? s_.expert->value : 1;
  if (s_.expert && ep == 1) c_.Defaulted(s_.expert->path);
  if (ep <= 1) {
    if (s_.expert_tensor) c_.Defaulted(s_.expert_tensor->path);
    return;
  }
  const int64_t tp = s_.tensor ? s_.tensor->value : 1;
  const int64_t etp = s_.expert_tensor ? s_.expert_tensor->value : 1;
  if (etp == tp) {
    c_.Set("parallel.expert", YamlInt(ep), s_.expert->path);
    if (s_.expert_tensor) c_.Defaulted(s_.expert_tensor->path);
    return;
  }
  const Sourced& at = s_.expert_tensor ? *s_.expert_tensor : *s_.expert;
  c_.sink().Error(codes::kImportUnsupported, c_.file(), at.at, "",
                  "torchtitan key '" + at.path + "' = " + std::to_string(at.value) +
                      " cannot be expressed in accel: expert_tensor_parallel_degree " +
                      std::to_string(etp) + (s_.expert_tensor ? "" : " (torchtitan's default)") +
                      " differs from tensor_parallel_degree " + std::to_string(tp) +
                      ", and accel splits every routed expert over the tensor-parallel ranks");
}

void TorchtitanImporter::FinishLayout() {
  auto put = [this](const char* field, const std::optional<Sourced>& v, const char* key) {
    c_.Set(field, v ? YamlInt(v->value) : "1", v ? v->path : std::string(key) + " absent: 1");
  };
  put("parallel.data_replicate", s_.replicate, "data_parallel_replicate_degree");
  put("parallel.tensor", s_.tensor, "tensor_parallel_degree");
  put("parallel.context", s_.context, "context_parallel_degree");
  // torchtitan's context parallelism is ring attention (torch's context_parallel; its
  // context_parallel_rotate_method only picks how key/value blocks rotate).
  if (s_.context && s_.context->value > 1) {
    c_.Set("parallel.context_method", "ring", s_.context->path + " (torchtitan: ring attention)");
  }
  put("parallel.pipeline", s_.pipeline, "pipeline_parallel_degree");
  FinishExpertParallel();
  if (s_.shard_auto) {
    c_.Set("parallel.data_shard", "auto", (s_.shard_path.empty() ? "data_parallel_shard_degree absent" : s_.shard_path) + ": -1");
  } else {
    c_.Set("parallel.data_shard", YamlInt(s_.shard->value), s_.shard->path);
  }
  if (s_.tensor && s_.tensor->value > 1) {
    c_.Set("parallel.sequence_parallel", "true", s_.tensor->path + " (torchtitan's TP shards norms along the sequence)");
  }
  // FSDP2 wraps the model whenever the shard degree is not 1; resharding after forward is ZeRO-3.
  if (s_.shard_auto || s_.shard->value > 1) {
    const bool never = s_.reshard == "never";
    c_.Set("sharding.stage", never ? "2" : "3",
           (s_.shard_path.empty() ? "data_parallel_shard_degree" : s_.shard_path) + " (FSDP2)" +
               (s_.reshard_path.empty() ? "" : ", " + s_.reshard_path + ": " + s_.reshard));
    if (s_.replicate && s_.replicate->value > 1 && !never) {
      c_.Set("sharding.hybrid", "true", s_.replicate->path + " with sharding (HSDP)");
    }
  }
  // The world size is run_train.sh's NGPU (default 8); the explicit degrees may need more.
  // Each degree is at most 65536, so the product is computed step by step against the largest
  // cluster accel's fields hold (65536 nodes x 1024 devices) before it can overflow.
  int64_t fixed = 1;
  for (const auto* v : {&s_.replicate, &s_.tensor, &s_.context, &s_.pipeline, &s_.shard}) {
    if (!*v) continue;
    fixed *= (*v)->value;
    if (fixed > int64_t{65536} * 1024) {
      c_.sink().Error(codes::kImportUnsupported, c_.file(), (*v)->at, "",
                      "torchtitan key '" + (*v)->path + "' = " + std::to_string((*v)->value) +
                          " cannot be expressed in accel: the parallel degrees multiply to more "
                          "ranks than accel's cluster fields hold");
      return;
    }
  }
  const std::string ngpu = "run_train.sh's NGPU default; the file does not give the world size";
  if (fixed <= 8 && 8 % fixed == 0) {
    c_.Set("cluster.devices_per_node", "8", ngpu);
  } else if (fixed % 8 == 0 && fixed / 8 <= 65536) {
    c_.Set("cluster.devices_per_node", "8", ngpu);
    c_.Set("cluster.nodes", YamlInt(fixed / 8), "the product of the parallel degrees, 8 per node");
  } else if (fixed <= 1024) {
    c_.Set("cluster.devices_per_node", YamlInt(fixed), "the product of the parallel degrees");
  } else {
    c_.sink().Error(codes::kImportUnsupported, c_.file(), s_.tensor ? s_.tensor->at : SourceLocation{1, 1}, "",
                    "the parallel degrees multiply to " + std::to_string(fixed) +
                        " ranks, which do not split into nodes of 8 or one node of at most 1024");
  }
  c_.Set("cluster.device", "cuda", "torchtitan trains on GPUs");
}

}  // namespace

void ImportTorchtitan(const YamlNode& root, ImportContext& context) {
  TorchtitanImporter(context).Run(root);
}

}  // namespace accel::importers
