// torchtitan's job config as `Trainer.Config.to_dict()` writes it (`--debug.save_config_file`),
// at torchtitan 9810191b (PR #2386, Feb 2026: the TOML files became Python dataclasses; the
// dump is JSON with one object per Trainer.Config field). Every field is written, in field
// order: torchtitan's defaults (torchtitan_defaults.h) with the keys accel decides set.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "exporters/plan_layout.h"
#include "exporters/torchtitan_defaults.h"
#include "exporters/writers.h"

namespace accel::exporters {
namespace {

using json = nlohmann::ordered_json;
namespace a = aspect;

// torchtitan's ScheduleClass names (torch.distributed.pipelining); accel's zb_h1 has no
// one-chunk-per-rank torchtitan schedule: InterleavedZeroBubble is the looped ZB-H1.
const char* ScheduleName(ir::PipelineSchedule s) {
  switch (s) {
    case ir::PIPELINE_SCHEDULE_GPIPE: return "GPipe";
    case ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B: return "Interleaved1F1B";
    case ir::PIPELINE_SCHEDULE_ZB_H1: return "InterleavedZeroBubble";
    case ir::PIPELINE_SCHEDULE_ZBV: return "ZBVZeroBubble";
    default: return "1F1B";
  }
}

void TtModel(const spec::JobSpec& job, const ir::Plan& plan, json& tt, ExportReport& report) {
  const ir::Model& m = plan.model();
  // torchtitan's model families accel's architectures correspond to; "" when none does
  // (GPT-2; Mixtral-style and Qwen2 experts).
  const std::string& type = m.model_type();
  std::string name = m.qk_norm() || type.starts_with("qwen3") ? "qwen3" : "llama3";
  if (type.starts_with("deepseek")) name = "deepseek_v3";
  else if (m.arch() == ir::ARCHITECTURE_GPT2 || (m.moe().num_experts() > 0 && name != "qwen3")) name = "";
  tt["model_spec"]["name"] = name;
  if (!job.model.config.empty()) {
    const std::filesystem::path config =
        std::filesystem::path(job.file).parent_path() / job.model.config;
    tt["hf_assets_path"] = config.parent_path().lexically_normal().string();
  }
  report.Missing(a::kModel, "torchtitan builds models from its registry (model_spec name and "
                            "flavor, e.g. llama3 8B); flavor is left empty: pick the registry entry "
                            "with the job's dimensions (" + std::to_string(m.num_layers()) + " layers, hidden " +
                            std::to_string(m.hidden_size()) + ")" +
                            (name.empty() ? "; torchtitan has no model family for it" : "") +
                            (job.model.config.empty() ? "; hf_assets_path stays at torchtitan's default "
                                                        "(the job names no config.json)" : ""));
  report.Missing(a::kData, "dataloader stays at torchtitan's default (dataset c4_test): torchtitan "
                           "reads its registered datasets or a dataset_path in their format, not "
                           "accel's data.train.path");
}

void TtOptimizer(const ir::Plan& plan, json& tt, ExportReport& report) {
  const ir::Optimizer& o = plan.training().optimizer();
  const bool sgd = o.kind() == ir::OPTIMIZER_KIND_SGD;
  json& opt = tt["optimizer"];
  opt["name"] = sgd ? "SGD" : "AdamW";
  opt["lr"] = o.lr();
  opt["beta1"] = o.beta1();
  opt["beta2"] = o.beta2();
  opt["eps"] = o.eps();
  opt["weight_decay"] = o.weight_decay();
  if (sgd) {
    report.Missing(a::kOptimizer, "torchtitan's OptimizersContainer builds only Adam and AdamW: "
                                  "name SGD is refused by torchtitan and by accel import (E0703)");
  } else {
    report.Exact(a::kOptimizer, "optimizer.name, lr, beta1, beta2, eps, weight_decay");
  }
  const ir::LrSchedule& s = plan.training().lr_schedule();
  json& lr = tt["lr_scheduler"];
  lr["warmup_steps"] = s.warmup_steps();
  if (s.kind() == ir::LR_SCHEDULE_KIND_CONSTANT) {
    lr["decay_ratio"] = 0.0;
    lr["decay_type"] = "linear";
    lr["min_lr_factor"] = 0.0;
  } else {
    lr["decay_ratio"] = nullptr;
    lr["decay_type"] = s.kind() == ir::LR_SCHEDULE_KIND_COSINE ? "cosine" : "linear";
    lr["min_lr_factor"] = s.min_lr_ratio();
  }
  report.Exact(a::kLrSchedule, "lr_scheduler.warmup_steps, decay_type, min_lr_factor (decay_ratio 0: constant)");
}

// training: the batch in sequences. torchtitan splits local_batch_size into pipeline
// microbatches of pipeline_parallel_microbatch_size, and accumulates global / (local x dp).
void TtTraining(const ir::Plan& plan, const PlanLayout& l, json& tt, ExportReport& report) {
  const ir::Batch& b = plan.batch();
  const ir::Precision& p = plan.precision();
  json& t = tt["training"];
  t["local_batch_size"] = l.pp > 1 ? b.micro_batch_size() * b.grad_accum_steps() : b.micro_batch_size();
  t["global_batch_size"] = b.global_batch_size();
  t["seq_len"] = b.seq_len();
  t["max_norm"] = plan.training().grad_clip_norm();
  t["steps"] = b.steps();
  t["enable_cpu_offload"] = plan.sharding().offload() == ir::OFFLOAD_ALL;
  const std::string compute = DtypeName(p.compute_dtype());
  const std::string params = DtypeName(p.param_dtype());
  t["dtype"] = params == "bf16" ? "bfloat16" : "float32";
  t["mixed_precision_param"] = compute == "bf16" ? "bfloat16" : "float32";
  t["mixed_precision_reduce"] = "float32";
  report.Exact(a::kGlobalBatch, "training.global_batch_size");
  report.Exact(a::kMicroBatch, l.pp > 1 ? "parallelism.pipeline_parallel_microbatch_size"
                                        : "training.local_batch_size");
  report.Exact(a::kGradAccum, l.pp > 1 ? "training.local_batch_size / pipeline_parallel_microbatch_size"
                                       : "global_batch_size / (local_batch_size x data-parallel ranks)");
  report.Exact(a::kSeqLen, "training.seq_len");
  report.Exact(a::kSteps, "training.steps");
  report.Exact(a::kGradClip, "training.max_norm");
  if (compute == "fp16") {
    report.Missing(a::kComputeDtype, "torchtitan's mixed_precision_param is bfloat16 or float32: fp16 "
                                     "written as float32");
    report.Missing(a::kLossScaling, "torchtitan has no loss scaling");
  } else {
    report.Exact(a::kComputeDtype, "training.mixed_precision_param");
  }
  if (params == "fp32") {
    report.Exact(a::kParamDtype, "training.dtype float32 (FSDP2 keeps fp32 parameters)");
  } else if (params == "bf16") {
    report.Approximate(a::kParamDtype, "training.dtype bfloat16: torchtitan then trains all in bf16 "
                                       "without accel's fp32 master copy");
  } else {
    report.Missing(a::kParamDtype, "torchtitan's training.dtype is bfloat16 or float32, not fp16");
  }
  if (std::string(DtypeName(p.reduce_dtype())) == "fp32") {
    report.Exact(a::kReduceDtype, "training.mixed_precision_reduce");
  } else {
    report.Missing(a::kReduceDtype, "torchtitan's mixed_precision_reduce is float32 only; the job reduces in " +
                                        std::string(DtypeName(p.reduce_dtype())));
  }
}

// FSDP2 shards whenever data_parallel_shard_degree > 1: resharding after forward is ZeRO-3,
// `never` ZeRO-2; torchtitan has no ZeRO-1 and no sharding-free dp_shard axis.
std::string TtReshard(const ir::Plan& plan, const PlanLayout& l, ExportReport& report) {
  const ir::Sharding& s = plan.sharding();
  if (l.dp_shard == 1) {
    if (s.stage() == 0) report.Exact(a::kStage, "no FSDP (data_parallel_shard_degree 1)");
    else report.Approximate(a::kStage, "torchtitan shards only over dp_shard, which is 1: ZeRO stage " +
                                           std::to_string(s.stage()) + " becomes none");
    return "default";
  }
  if (s.stage() == 3) {
    report.Exact(a::kStage, "FSDP2 over data_parallel_shard_degree, fsdp_reshard_after_forward default (ZeRO-3)");
    return "default";
  }
  if (s.stage() == 0) {
    report.Approximate(a::kStage, "torchtitan's FSDP2 shards whenever data_parallel_shard_degree > 1: "
                                  "the job's unsharded dp_shard axis becomes ZeRO-3");
    return "default";
  }
  if (s.stage() == 2) {
    report.Exact(a::kStage, "fsdp_reshard_after_forward never (ZeRO-2)");
  } else {
    report.Approximate(a::kStage, "torchtitan has no ZeRO-" + std::to_string(s.stage()) +
                                      ": written as FSDP2 without resharding (ZeRO-2)");
  }
  return "never";
}

// The pipeline schedule by torchtitan's name; looped schedules take 2 stages per rank unless
// pipeline_parallel_layers_per_stage says otherwise.
void TtSchedule(const ir::Plan& plan, const PlanLayout& l, json& p, ExportReport& report) {
  const ir::Pipeline& pipe = plan.pipeline();
  if (l.pp > 1) {
    if (pipe.schedule() == ir::PIPELINE_SCHEDULE_ZB_H1) {
      report.Approximate(a::kSchedule, "InterleavedZeroBubble is torchtitan's looped ZB-H1 (2 stages per "
                                       "rank by default); accel's zb_h1 runs one stage per rank");
    } else {
      report.Exact(a::kSchedule, std::string("parallelism.pipeline_parallel_schedule ") + ScheduleName(pipe.schedule()));
    }
    const int64_t chunks = l.pp * pipe.virtual_stages();
    if (pipe.schedule() == ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B && pipe.virtual_stages() != 2 &&
        plan.model().num_layers() % chunks != 0) {
      report.Missing(a::kVirtualStages, "torchtitan sets stages per rank by layers per stage, and " +
                                            std::to_string(plan.model().num_layers()) + " layers do not split into " +
                                            std::to_string(chunks) + " equal stages");
    } else if (pipe.schedule() == ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B && pipe.virtual_stages() != 2) {
      p["pipeline_parallel_layers_per_stage"] = plan.model().num_layers() / chunks;
      report.Approximate(a::kVirtualStages, "pipeline_parallel_layers_per_stage gives " +
                                                std::to_string(pipe.virtual_stages()) +
                                                " stages per rank; accel import reads only torchtitan's default of 2");
    } else if (pipe.virtual_stages() > 1) {
      report.Exact(a::kVirtualStages, "torchtitan's 2 stages per rank for looped schedules");
    }
  }
}

void TtParallelism(const ir::Plan& plan, const PlanLayout& l, json& tt, ExportReport& report) {
  const ir::Pipeline& pipe = plan.pipeline();
  json& p = tt["parallelism"];
  p["data_parallel_replicate_degree"] = l.dp_replicate;
  p["data_parallel_shard_degree"] = l.dp_shard;
  p["fsdp_reshard_after_forward"] = TtReshard(plan, l, report);
  p["tensor_parallel_degree"] = l.tp;
  p["pipeline_parallel_degree"] = l.pp;
  p["pipeline_parallel_schedule"] = ScheduleName(pipe.schedule());
  p["pipeline_parallel_microbatch_size"] = plan.batch().micro_batch_size();
  p["context_parallel_degree"] = l.cp;
  p["expert_parallel_degree"] = l.ep;
  p["expert_tensor_parallel_degree"] = l.ep > 1 ? l.tp : 1;
  for (auto [aspect, key] : {std::pair{a::kDataReplicate, "data_parallel_replicate_degree"},
                             {a::kDataShard, "data_parallel_shard_degree"},
                             {a::kTensor, "tensor_parallel_degree"},
                             {a::kPipeline, "pipeline_parallel_degree"},
                             {a::kContext, "context_parallel_degree (ring attention)"}}) {
    report.Exact(aspect, std::string("parallelism.") + key);
  }
  if (l.ep > 1) report.Exact(a::kExpert, "parallelism.expert_parallel_degree with expert_tensor_parallel_degree = tp");
  // FSDP2 over both data-parallel degrees is HSDP whenever it reshards after forward.
  const bool hsdp = l.dp_replicate > 1 && l.dp_shard > 1 && p["fsdp_reshard_after_forward"] != "never";
  if (plan.sharding().hybrid() == hsdp) {
    report.Exact(a::kHybrid, hsdp ? "HSDP: both data-parallel degrees > 1" : "no hybrid sharding");
  } else {
    report.Approximate(a::kHybrid, hsdp ? "FSDP2 over both data-parallel degrees is HSDP; the job leaves "
                                          "sharding.hybrid false"
                                        : "torchtitan's HSDP reshards after forward (ZeRO-3)");
  }
  if (plan.sharding().offload() == ir::OFFLOAD_OPTIMIZER) {
    report.Missing(a::kOffload, "training.enable_cpu_offload moves parameters, gradients and optimizer "
                                "states together; optimizer-only offload is not expressible (written false)");
  } else {
    report.Exact(a::kOffload, "training.enable_cpu_offload");
  }
  TtSchedule(plan, l, p, report);
}

void TtRecompute(const ir::Plan& plan, json& tt, ExportReport& report) {
  json& ac = tt["activation_checkpoint"];
  switch (plan.training().recompute()) {
    case ir::RECOMPUTE_FULL:
      ac["mode"] = "full";
      report.Exact(a::kRecompute, "activation_checkpoint.mode full");
      break;
    case ir::RECOMPUTE_OP:
      ac["mode"] = "selective";
      ac["selective_ac_option"] = "op";
      report.Exact(a::kRecompute, "activation_checkpoint.mode selective, selective_ac_option op");
      break;
    case ir::RECOMPUTE_SELECTIVE:
      ac["mode"] = "selective";
      ac["selective_ac_option"] = "op";
      report.Approximate(a::kRecompute, "torchtitan has no attention-core recompute: written as its per-op "
                                        "selective policy (selective_ac_option op)");
      break;
    default:
      ac["mode"] = "none";
      report.Exact(a::kRecompute, "activation_checkpoint.mode none");
  }
}

// checkpoint.dir is torchtitan's dump_folder / checkpoint.folder.
std::filesystem::path CheckpointDir(const ir::Plan& plan) {
  return plan.checkpoint().dir().empty() ? "checkpoint" : plan.checkpoint().dir();
}

void TtCheckpoint(const ir::Plan& plan, json& tt) {
  const ir::Checkpoint& c = plan.checkpoint();
  const std::filesystem::path dir = CheckpointDir(plan);
  json& ck = tt["checkpoint"];
  ck["enable"] = true;
  ck["folder"] = dir.filename().string();
  if (c.every_steps() > 0) ck["interval"] = c.every_steps();
  ck["keep_latest_k"] = c.keep();
}

}  // namespace

std::string WriteTorchtitan(const spec::JobSpec& job, const ir::Plan& plan, ExportReport& report) {
  const PlanLayout l = ReadLayout(plan);
  json tt = json::parse(TorchtitanDefaultDump());
  // The keys in Trainer.Config's field order, as to_dict writes them.
  TtModel(job, plan, tt, report);
  const std::filesystem::path dir = CheckpointDir(plan);
  tt["dump_folder"] = dir.has_parent_path() ? dir.parent_path().string() : ".";
  tt["metrics"]["log_freq"] = plan.training().log_every_steps();
  TtOptimizer(plan, tt, report);
  TtTraining(plan, l, tt, report);
  TtParallelism(plan, l, tt, report);
  TtCheckpoint(plan, tt);
  TtRecompute(plan, tt, report);
  tt["debug"]["seed"] = plan.training().seed();
  if (l.cp > 1 && plan.mesh().context_parallel().method() == ir::CONTEXT_PARALLEL_METHOD_ULYSSES) {
    report.Approximate(a::kContext, "torchtitan's context parallelism is ring attention; the job uses Ulysses");
  }
  report.Missing(a::kWorld, "the launcher's (torchrun --nproc_per_node / NGPU); the degrees multiply to " +
                                std::to_string(l.world));
  return tt.dump(2) + "\n";
}

}  // namespace accel::exporters
