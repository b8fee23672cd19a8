// Hugging Face Accelerate's config YAML (`accelerate config` / `accelerate launch
// --config_file`), as importers/accelerate_importer.cc reads it. The batch sizes, optimizer,
// schedule and model are the training script's: the report says so.
#include <string>

#include "exporters/plan_layout.h"
#include "exporters/writers.h"

namespace accel::exporters {
namespace {

namespace a = aspect;

// The lines of the YAML: "key: value", or "key:" with indented children.
class YamlLines {
 public:
  void Put(const std::string& key, const std::string& value, int indent = 0) {
    text_ += std::string(indent, ' ') + key + ": " + value + "\n";
  }
  void Section(const std::string& key) { text_ += key + ":\n"; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

std::string YamlBool(bool v) { return v ? "true" : "false"; }
std::string YamlNum(int64_t v) { return std::to_string(v); }

// Which launcher plugin holds the job: a pipeline needs Megatron-LM's; ZeRO-1, or optimizer-only
// offload, DeepSpeed's; other sharding FSDP2's; none plain DDP.
std::string DistributedType(const ir::Plan& plan, const PlanLayout& l) {
  const ir::Sharding& s = plan.sharding();
  if (l.pp > 1) return "MEGATRON_LM";
  if (s.stage() == 1 || (s.stage() >= 2 && s.offload() == ir::OFFLOAD_OPTIMIZER)) return "DEEPSPEED";
  if (s.stage() >= 2) return "FSDP";
  if (l.world == 1) return "NO";
  return l.cpu ? "MULTI_CPU" : "MULTI_GPU";
}

// fsdp_config: FSDP2, resharding after forward for ZeRO-3 (keeping the gathered parameters until
// backward is ZeRO-2), CPU offload of parameters (and with them the optimizer step).
void FsdpConfig(const ir::Plan& plan, YamlLines& y, ExportReport& report) {
  const ir::Sharding& s = plan.sharding();
  y.Section("fsdp_config");
  y.Put("fsdp_version", "2", 2);
  y.Put("fsdp_reshard_after_forward", YamlBool(s.stage() == 3), 2);
  report.Exact(a::kStage, "fsdp_config.fsdp_reshard_after_forward (FSDP2: true = ZeRO-3, false = ZeRO-2)");
  y.Put("fsdp_offload_params", YamlBool(s.offload() == ir::OFFLOAD_ALL), 2);
  report.Exact(a::kOffload, "fsdp_config.fsdp_offload_params");
  y.Put("fsdp_auto_wrap_policy", "TRANSFORMER_BASED_WRAP", 2);
  const ir::Recompute r = plan.training().recompute();
  y.Put("fsdp_activation_checkpointing", YamlBool(r != ir::RECOMPUTE_NONE), 2);
  if (r == ir::RECOMPUTE_NONE || r == ir::RECOMPUTE_FULL) {
    report.Exact(a::kRecompute, "fsdp_config.fsdp_activation_checkpointing (whole blocks)");
  } else {
    report.Approximate(a::kRecompute, "fsdp_config.fsdp_activation_checkpointing recomputes whole "
                                      "blocks; the job recomputes selectively");
  }
  y.Put("fsdp_state_dict_type", "SHARDED_STATE_DICT", 2);
  y.Put("fsdp_cpu_ram_efficient_loading", "true", 2);
}

void DeepSpeedConfig(const ir::Plan& plan, YamlLines& y, ExportReport& report) {
  const ir::Sharding& s = plan.sharding();
  y.Section("deepspeed_config");
  y.Put("zero_stage", YamlNum(s.stage()), 2);
  report.Exact(a::kStage, "deepspeed_config.zero_stage");
  const bool opt = s.offload() != ir::OFFLOAD_NONE;
  y.Put("offload_optimizer_device", opt ? "cpu" : "none", 2);
  y.Put("offload_param_device", s.offload() == ir::OFFLOAD_ALL ? "cpu" : "none", 2);
  report.Exact(a::kOffload, "deepspeed_config.offload_optimizer_device / offload_param_device");
  y.Put("gradient_accumulation_steps", YamlNum(plan.batch().grad_accum_steps()), 2);
  report.Exact(a::kGradAccum, "deepspeed_config.gradient_accumulation_steps");
  y.Put("gradient_clipping", ShortFloat(plan.training().grad_clip_norm()), 2);
  report.Exact(a::kGradClip, "deepspeed_config.gradient_clipping");
  y.Put("zero3_init_flag", YamlBool(s.stage() == 3), 2);
}

// Megatron-LM's plugin: tp, pp, microbatches, sequence parallelism, recompute, distributed
// optimizer; it has no schedule, context-parallel or expert keys.
void MegatronConfig(const ir::Plan& plan, const PlanLayout& l, YamlLines& y, ExportReport& report) {
  y.Section("megatron_lm_config");
  y.Put("megatron_lm_tp_degree", YamlNum(l.tp), 2);
  y.Put("megatron_lm_pp_degree", YamlNum(l.pp), 2);
  report.Exact(a::kTensor, "megatron_lm_config.megatron_lm_tp_degree");
  report.Exact(a::kPipeline, "megatron_lm_config.megatron_lm_pp_degree");
  y.Put("megatron_lm_num_micro_batches", YamlNum(plan.pipeline().microbatches()), 2);
  y.Put("megatron_lm_sequence_parallelism", YamlBool(plan.mesh().sequence_parallel()), 2);
  y.Put("megatron_lm_recompute_activations", YamlBool(plan.training().recompute() != ir::RECOMPUTE_NONE), 2);
  report.Approximate(a::kRecompute, "megatron_lm_config.megatron_lm_recompute_activations: on or off, "
                                    "Megatron's selective recompute when on");
  y.Put("megatron_lm_use_distributed_optimizer", YamlBool(plan.sharding().stage() >= 1), 2);
  if (plan.sharding().stage() <= 1) {
    report.Exact(a::kStage, "megatron_lm_config.megatron_lm_use_distributed_optimizer (ZeRO-1)");
  } else {
    report.Approximate(a::kStage, "megatron_lm_config.megatron_lm_use_distributed_optimizer shards the "
                                  "optimizer only (ZeRO-1), not stage " + std::to_string(plan.sharding().stage()));
  }
  if (plan.sharding().offload() != ir::OFFLOAD_NONE) {
    report.Missing(a::kOffload, "the Megatron-LM plugin has no offload key");
  }
  y.Put("megatron_lm_gradient_clipping", ShortFloat(plan.training().grad_clip_norm()), 2);
  report.Exact(a::kGradClip, "megatron_lm_config.megatron_lm_gradient_clipping");
  report.Missing(a::kSchedule, "Accelerate's Megatron-LM plugin cannot choose a pipeline schedule "
                               "(Megatron runs 1F1B)");
  if (plan.pipeline().virtual_stages() > 1) {
    report.Missing(a::kVirtualStages, "the Megatron-LM plugin has no virtual-stage key");
  }
}

// parallelism_config (Accelerate >= 1.10's ParallelismConfig): the mesh sizes.
void ParallelismConfig(const PlanLayout& l, YamlLines& y, ExportReport& report) {
  y.Section("parallelism_config");
  y.Put("parallelism_config_dp_replicate_size", YamlNum(l.dp_replicate), 2);
  y.Put("parallelism_config_dp_shard_size", YamlNum(l.dp_shard), 2);
  y.Put("parallelism_config_tp_size", YamlNum(l.tp), 2);
  y.Put("parallelism_config_cp_size", YamlNum(l.cp), 2);
  report.Exact(a::kDataReplicate, "parallelism_config.parallelism_config_dp_replicate_size");
  report.Exact(a::kDataShard, "parallelism_config.parallelism_config_dp_shard_size");
  report.Exact(a::kTensor, "parallelism_config.parallelism_config_tp_size");
  report.Exact(a::kContext, "parallelism_config.parallelism_config_cp_size (ring attention)");
}

// mixed_precision: autocast over fp32 parameters, except under DeepSpeed, whose 16-bit mode
// stores 16-bit parameters and reduces in 16 bits.
void AcceleratePrecision(const ir::Plan& plan, const std::string& dist, YamlLines& y, ExportReport& report) {
  const ir::Precision& p = plan.precision();
  const std::string compute = DtypeName(p.compute_dtype());
  y.Put("mixed_precision", compute == "fp32" ? "'no'" : compute);
  report.Exact(a::kComputeDtype, "mixed_precision");
  const bool ds = dist == "DEEPSPEED" && compute != "fp32";
  const std::string params = ds ? compute : "fp32";
  const std::string reduce = ds ? compute : "fp32";
  auto note = [&](std::string_view aspect, const std::string& job, const std::string& target, const char* what) {
    if (job == target) {
      report.Exact(aspect, std::string("mixed_precision (") + what + " " + target + ")");
    } else {
      report.Approximate(aspect, std::string("mixed_precision gives ") + what + " " + target +
                                     " under " + dist + "; the job has " + job);
    }
  };
  note(a::kParamDtype, DtypeName(p.param_dtype()), params, "parameters");
  if (dist == "DEEPSPEED" || dist == "MEGATRON_LM") {
    note(a::kReduceDtype, DtypeName(p.reduce_dtype()), reduce, "gradient reduction in");
  } else {
    if (std::string(DtypeName(p.reduce_dtype())) == "fp32") {
      report.Exact(a::kReduceDtype, "fp32 gradient reduction (Accelerate's default)");
    } else {
      report.Missing(a::kReduceDtype, std::string("the config has no reduce dtype: the job reduces in ") +
                                          DtypeName(p.reduce_dtype()) + ", Accelerate in fp32");
    }
  }
  if (compute == "fp16") report.Exact(a::kLossScaling, "mixed_precision fp16 (dynamic GradScaler)");
}

// What the launcher config never holds: it launches a script, which owns these.
void ScriptOwned(const ir::Plan& plan, const std::string& dist, ExportReport& report) {
  report.Missing(a::kGlobalBatch, "the training script's (Accelerate's config has no batch size)");
  report.Missing(a::kMicroBatch, "the training script's (its DataLoader batch_size)");
  if (dist != "DEEPSPEED") {
    report.Missing(a::kGradAccum, "the training script's (Accelerator(gradient_accumulation_steps=" +
                                      std::to_string(plan.batch().grad_accum_steps()) + "))");
  }
  report.Missing(a::kSeqLen, "the training script's");
  report.Missing(a::kOptimizer, "the training script's");
  report.Missing(a::kLrSchedule, "the training script's");
  report.Missing(a::kSteps, "the training script's");
  report.Missing(a::kModel, "the training script's");
  report.Missing(a::kData, "the training script's");
}

// The mesh under the plugins that have no parallelism_config of their own here.
void MeshWithoutParallelismConfig(const ir::Plan& plan, const PlanLayout& l, const std::string& dist,
                                  ExportReport& report) {
  const bool replicated = plan.sharding().stage() == 0;
  const std::string all = std::to_string(l.dp()) + " data-parallel ranks";
  const int64_t lost = dist == "MEGATRON_LM" ? l.cp : l.tp * l.cp;  // axes without a key here
  if (lost > 1) {
    const std::string why = "num_processes counts the ranks of the tensor/context axes this "
                            "plugin cannot express: " + dist + " makes them data-parallel ranks too";
    report.Approximate(a::kDataReplicate, why);
    report.Approximate(a::kDataShard, why);
  } else if (replicated ? l.dp_shard == 1 : l.dp_replicate == 1) {
    report.Exact(a::kDataReplicate, dist + " over num_processes: " + all);
    report.Exact(a::kDataShard, dist + " over num_processes: " + all);
  } else {
    const std::string why = dist + " treats all " + all + " alike; the job's dp_replicate " +
                            std::to_string(l.dp_replicate) + " x dp_shard " + std::to_string(l.dp_shard) +
                            " split has no key here";
    report.Approximate(a::kDataReplicate, why);
    report.Approximate(a::kDataShard, why);
  }
  if (dist != "MEGATRON_LM") {
    if (l.tp > 1) report.Missing(a::kTensor, dist + " has no tensor-parallel key in Accelerate's config");
    else report.Exact(a::kTensor, "no tensor parallelism");
    report.Exact(a::kPipeline, "no pipeline");
  }
  if (l.cp > 1) report.Missing(a::kContext, dist + " has no context-parallel key in Accelerate's config");
  else report.Exact(a::kContext, "no context parallelism");
}

// HSDP: FSDP2 over dp_replicate and dp_shard sizes both > 1 (what accel import reads as hybrid).
void HybridNote(const ir::Plan& plan, const PlanLayout& l, bool fsdp_mesh, ExportReport& report) {
  const ir::Sharding& s = plan.sharding();
  if (!fsdp_mesh || s.stage() != 3) {
    if (s.hybrid()) report.Missing(a::kHybrid, "hybrid sharding needs FSDP2 with stage 3 here");
    else report.Exact(a::kHybrid, "no hybrid sharding");
  } else if (s.hybrid()) {
    report.Exact(a::kHybrid, "dp_replicate and dp_shard sizes both > 1 (HSDP)");
  } else if (l.dp_replicate > 1 && l.dp_shard > 1) {
    report.Approximate(a::kHybrid, "FSDP2 over dp_replicate and dp_shard sizes both > 1 is HSDP; "
                                   "the job leaves sharding.hybrid false");
  } else {
    report.Exact(a::kHybrid, "no hybrid sharding");
  }
}

// What the chosen plugin leaves to the script or cannot hold.
void PluginGaps(const ir::Plan& plan, const PlanLayout& l, const std::string& dist, ExportReport& report) {
  if (dist == "MULTI_GPU" || dist == "MULTI_CPU" || dist == "NO") {
    report.Exact(a::kStage, "no sharding (" + dist + ")");
    report.Exact(a::kOffload, "no offload");
  }
  if (dist != "FSDP" && dist != "MEGATRON_LM" && plan.training().recompute() != ir::RECOMPUTE_NONE) {
    report.Missing(a::kRecompute, "the model's gradient_checkpointing_enable() in the script");
  }
  if (dist != "MEGATRON_LM" && dist != "DEEPSPEED") {
    report.Missing(a::kGradClip, "the training script's (accelerator.clip_grad_norm_)");
  }
  if (l.pp <= 1 && plan.pipeline().virtual_stages() > 1) {
    report.Missing(a::kVirtualStages, "no pipeline in Accelerate's config");
  }
  if (l.ep > 1) report.Missing(a::kExpert, "Accelerate's config has no expert-parallel key");
}

}  // namespace

std::string WriteAccelerate(const spec::JobSpec& job, const ir::Plan& plan, ExportReport& report) {
  const PlanLayout l = ReadLayout(plan);
  const std::string dist = DistributedType(plan, l);
  YamlLines y;
  y.Put("compute_environment", "LOCAL_MACHINE");
  y.Put("distributed_type", dist);
  y.Put("machine_rank", "0");
  y.Put("main_training_function", "main");
  AcceleratePrecision(plan, dist, y, report);
  y.Put("num_machines", YamlNum(l.nodes));
  y.Put("num_processes", YamlNum(l.world));
  y.Put("use_cpu", YamlBool(l.cpu));
  report.Exact(a::kWorld, "num_machines x (num_processes / num_machines)");
  const bool fsdp_mesh = dist == "FSDP" || ((dist == "MULTI_GPU" || dist == "MULTI_CPU" || dist == "NO") &&
                                            (l.tp > 1 || l.cp > 1));
  if (dist == "FSDP") FsdpConfig(plan, y, report);
  if (dist == "DEEPSPEED") DeepSpeedConfig(plan, y, report);
  if (dist == "MEGATRON_LM") MegatronConfig(plan, l, y, report);
  if (fsdp_mesh) {
    ParallelismConfig(l, y, report);
    if (l.tp > 1 && l.dp_replicate > 1 && l.dp_shard == 1) {
      report.Approximate(a::kTensor, "Accelerate's ParallelismConfig refuses dp_replicate > 1 with tp > 1 "
                                     "unless dp_shard > 1 (DDP + TP is not supported)");
    }
    report.Exact(a::kPipeline, "no pipeline");
  } else {
    MeshWithoutParallelismConfig(plan, l, dist, report);
  }
  HybridNote(plan, l, fsdp_mesh, report);
  PluginGaps(plan, l, dist, report);
  ScriptOwned(plan, dist, report);
  return "# Accelerate config for job '" + job.name + "', written by `accel export-config` from " +
         job.file + ".\n" + y.text();
}

}  // namespace accel::exporters
