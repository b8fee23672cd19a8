// DeepSpeed's config JSON (deepspeed.ai/docs/config-json): what accel import reads back
// (importers/deepspeed_importer.cc) is what this writes, so a round trip keeps every exact
// aspect.
#include <cmath>

#include <nlohmann/json.hpp>

#include "exporters/plan_layout.h"
#include "exporters/writers.h"

namespace accel::exporters {
namespace {

using json = nlohmann::ordered_json;
namespace a = aspect;

// train_batch_size, train_micro_batch_size_per_gpu, gradient_accumulation_steps: DeepSpeed
// checks train = micro x accumulation x data-parallel world.
void DsBatch(const ir::Plan& plan, json& ds, ExportReport& report) {
  const ir::Batch& b = plan.batch();
  ds["train_batch_size"] = b.global_batch_size();
  ds["train_micro_batch_size_per_gpu"] = b.micro_batch_size();
  ds["gradient_accumulation_steps"] = b.grad_accum_steps();
  report.Exact(a::kGlobalBatch, "train_batch_size");
  report.Exact(a::kMicroBatch, "train_micro_batch_size_per_gpu");
  report.Exact(a::kGradAccum, "gradient_accumulation_steps");
  report.Missing(a::kSeqLen, "the sequence length is the data pipeline's, not DeepSpeed's");
  report.Missing(a::kWorld, "the launcher sets the world size; the batch sizes imply only the "
                            "data-parallel ranks (train / (micro x accumulation))");
}

// ZeRO partitions over every data-parallel rank; MiCS (mics_shard_size) is DeepSpeed's
// shard-within-a-group, replicate-across-groups layout, accel's HSDP.
void DsSharding(const ir::Plan& plan, const PlanLayout& l, json& ds, ExportReport& report) {
  const ir::Sharding& s = plan.sharding();
  json zero;
  zero["stage"] = s.stage();
  report.Exact(a::kStage, "zero_optimization.stage");
  if (s.offload() == ir::OFFLOAD_OPTIMIZER || s.offload() == ir::OFFLOAD_ALL) {
    zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
  }
  if (s.offload() == ir::OFFLOAD_ALL) zero["offload_param"] = {{"device", "cpu"}, {"pin_memory", true}};
  report.Exact(a::kOffload, "zero_optimization.offload_optimizer / offload_param (device cpu)");
  const bool replicated = s.stage() == 0;
  if (replicated ? l.dp_shard == 1 : l.dp_replicate == 1) {
    report.Exact(a::kDataReplicate, replicated ? "ZeRO stage 0: every data-parallel rank replicates"
                                               : "ZeRO partitions over all data-parallel ranks");
    report.Exact(a::kDataShard, "the data-parallel ranks the batch sizes imply");
  } else if (s.hybrid() && s.stage() == 3) {
    zero["mics_shard_size"] = l.dp_shard;
    const std::string why = "zero_optimization.mics_shard_size = " + std::to_string(l.dp_shard) +
                            " (MiCS: ZeRO-3 within groups of that many ranks, replicated across "
                            "groups, as HSDP); accel import does not read MiCS (W0701) and shards "
                            "over all data-parallel ranks";
    report.Approximate(a::kDataReplicate, why);
    report.Approximate(a::kDataShard, why);
    report.Approximate(a::kHybrid, why);
  } else {
    const std::string why = "DeepSpeed's ZeRO stage " + std::to_string(s.stage()) +
                            " covers all " + std::to_string(l.dp()) + " data-parallel ranks; the "
                            "job's dp_replicate " + std::to_string(l.dp_replicate) + " x dp_shard " +
                            std::to_string(l.dp_shard) + " split has no key";
    report.Approximate(a::kDataReplicate, why);
    report.Approximate(a::kDataShard, why);
  }
  if (!s.hybrid()) report.Exact(a::kHybrid, "no hybrid sharding");
  ds["zero_optimization"] = zero;
}

// bf16 / fp16 mode: DeepSpeed then keeps 16-bit parameters with an fp32 master copy in the
// optimizer, which accel import reads as params = compute = that dtype.
void DsPrecision(const ir::Plan& plan, json& ds, ExportReport& report) {
  const ir::Precision& p = plan.precision();
  const std::string compute = DtypeName(p.compute_dtype());
  const std::string params = DtypeName(p.param_dtype());
  if (compute == "bf16") {
    ds["bf16"] = {{"enabled", true}};
  } else if (compute == "fp16") {
    json fp16 = {{"enabled", true}};
    if (p.loss_scaling() == ir::LOSS_SCALING_STATIC) {
      fp16["loss_scale"] = p.initial_loss_scale();
    } else {
      fp16["loss_scale"] = 0;
      if (p.initial_loss_scale() > 0) {
        fp16["initial_scale_power"] = static_cast<int64_t>(std::lround(std::log2(p.initial_loss_scale())));
      }
      if (p.loss_scale_growth_interval() > 0) fp16["loss_scale_window"] = p.loss_scale_growth_interval();
    }
    ds["fp16"] = fp16;
  }
  report.Exact(a::kComputeDtype, compute == "fp32" ? "neither bf16 nor fp16 enabled" : compute + ".enabled");
  if (compute == "fp16") report.Exact(a::kLossScaling, "fp16.loss_scale (0 = dynamic)");
  if (params == (compute == "fp32" ? "fp32" : compute)) {
    report.Exact(a::kParamDtype, compute == "fp32" ? "fp32 parameters" : compute + " mode: " + compute +
                                                                          " parameters, fp32 master copy");
  } else {
    report.Approximate(a::kParamDtype, "the job stores " + params + " parameters; DeepSpeed's " +
                                           (compute == "fp32" ? std::string("fp32 mode stores fp32")
                                                              : compute + " mode stores " + compute) +
                                           " parameters");
  }
  ds["communication_data_type"] = DtypeName(p.reduce_dtype());
  report.Exact(a::kReduceDtype, "communication_data_type");
}

void DsOptimizer(const ir::Plan& plan, json& ds, ExportReport& report) {
  const ir::Optimizer& o = plan.training().optimizer();
  if (o.kind() == ir::OPTIMIZER_KIND_SGD) {
    ds["optimizer"] = {{"type", "SGD"},
                       {"params", {{"lr", o.lr()}, {"momentum", o.momentum()}, {"weight_decay", o.weight_decay()}}}};
  } else {
    ds["optimizer"] = {{"type", "AdamW"},
                       {"params", {{"lr", o.lr()}, {"betas", {o.beta1(), o.beta2()}}, {"eps", o.eps()},
                                   {"weight_decay", o.weight_decay()}}}};
  }
  report.Exact(a::kOptimizer, "optimizer.type and optimizer.params");
  const ir::LrSchedule& s = plan.training().lr_schedule();
  json params = {{"warmup_num_steps", s.warmup_steps()}, {"warmup_type", "linear"}};
  std::string type = "WarmupLR";
  if (s.kind() == ir::LR_SCHEDULE_KIND_COSINE) {
    type = "WarmupCosineLR";
    params["total_num_steps"] = s.total_steps();
    params["cos_min_ratio"] = s.min_lr_ratio();
    report.Exact(a::kLrSchedule, "scheduler WarmupCosineLR (warmup_num_steps, total_num_steps, cos_min_ratio)");
  } else if (s.kind() == ir::LR_SCHEDULE_KIND_LINEAR) {
    type = "WarmupDecayLR";
    params["total_num_steps"] = s.total_steps();
    params["warmup_min_lr"] = 0;
    params["warmup_max_lr"] = o.lr();
    if (s.min_lr_ratio() == 0) {
      report.Exact(a::kLrSchedule, "scheduler WarmupDecayLR (linear decay to 0)");
    } else {
      report.Approximate(a::kLrSchedule, "scheduler WarmupDecayLR decays to 0, not to lr x " +
                                             ShortFloat(s.min_lr_ratio()));
    }
  } else {
    params["warmup_min_lr"] = 0;
    params["warmup_max_lr"] = o.lr();
    report.Exact(a::kLrSchedule, "scheduler WarmupLR (warmup, then constant)");
  }
  ds["scheduler"] = {{"type", type}, {"params", params}};
  ds["gradient_clipping"] = plan.training().grad_clip_norm();
  report.Exact(a::kGradClip, "gradient_clipping (0 = none)");
  ds["steps_per_print"] = plan.training().log_every_steps();
}

// What DeepSpeed's JSON leaves to the model code and the launcher.
void DsModelParallel(const PlanLayout& l, const ir::Plan& plan, json& ds, ExportReport& report) {
  if (l.tp > 1 && plan.sharding().stage() <= 2) {
    ds["tensor_parallel"] = {{"autotp_size", l.tp}};
    report.Approximate(a::kTensor, "tensor_parallel.autotp_size = " + std::to_string(l.tp) +
                                       " (DeepSpeed AutoTP training, which splits the layers by "
                                       "its own rules); accel import does not read it (W0701)");
  } else if (l.tp > 1) {
    report.Missing(a::kTensor, "DeepSpeed AutoTP (tensor_parallel.autotp_size) works with ZeRO "
                               "stages 0-2 only; with stage 3 tensor parallelism is the model code's");
  } else {
    report.Exact(a::kTensor, "no tensor parallelism");
  }
  if (l.pp > 1) {
    report.Missing(a::kPipeline, "pipeline stages are the model code's (deepspeed.pipe.PipelineModule"
                                 "(num_stages=" + std::to_string(l.pp) + ")), not the JSON's");
    report.Missing(a::kSchedule, "DeepSpeed's pipeline engine runs its own TrainSchedule (1F1B); "
                                 "the JSON cannot choose one");
  } else {
    report.Exact(a::kPipeline, "no pipeline");
  }
  if (plan.pipeline().virtual_stages() > 1) {
    report.Missing(a::kVirtualStages, "DeepSpeed has no interleaved (virtual-stage) pipeline");
  }
  if (l.cp > 1) {
    report.Missing(a::kContext, "DeepSpeed's JSON has no context-parallel degree (Ulysses sequence "
                                "parallelism is set up in code)");
  } else {
    report.Exact(a::kContext, "no context parallelism");
  }
  if (l.ep > 1) {
    report.Missing(a::kExpert, "expert parallelism is the model code's (deepspeed.moe.layer.MoE(ep_size="
                               + std::to_string(l.ep) + "))");
  }
  if (plan.training().recompute() != ir::RECOMPUTE_NONE) {
    report.Missing(a::kRecompute, "activation checkpointing is the model code's; the JSON's "
                                  "activation_checkpointing section only tunes it");
  }
  report.Missing(a::kSteps, "the training loop's length is the script's (scheduler.params."
                            "total_num_steps only shapes the schedule)");
  report.Missing(a::kModel, "the model is the script's");
  report.Missing(a::kData, "the data and tokenizer are the script's");
}

}  // namespace

std::string WriteDeepSpeed(const spec::JobSpec& job, const ir::Plan& plan, ExportReport& report) {
  (void)job;
  const PlanLayout l = ReadLayout(plan);
  json ds;
  DsBatch(plan, ds, report);
  DsSharding(plan, l, ds, report);
  DsPrecision(plan, ds, report);
  DsOptimizer(plan, ds, report);
  DsModelParallel(l, plan, ds, report);
  return ds.dump(2) + "\n";
}

}  // namespace accel::exporters
