// Megatron-LM's arguments (megatron/training/arguments.py at NVIDIA/Megatron-LM d98e8a64, the
// version importers/megatron_importer.cc reads) as a launch script: one bash array and the
// torchrun line that passes it to pretrain_gpt.py.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "exporters/plan_layout.h"
#include "exporters/writers.h"

namespace accel::exporters {
namespace {

namespace a = aspect;

std::string Round12(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.12g", value);
  return buffer;
}

// The argument lines of the array, one flag (and its value) per line.
class ArgLines {
 public:
  void Flag(const std::string& flag) { lines_.push_back(flag); }
  void Put(const std::string& flag, const std::string& value) { lines_.push_back(flag + " " + value); }
  void Put(const std::string& flag, int64_t value) { Put(flag, std::to_string(value)); }
  void Num(const std::string& flag, double value) { Put(flag, ShortFloat(value)); }
  std::string Array(const std::string& name) const {
    std::string out = name + "=(\n";
    for (const std::string& line : lines_) out += "    " + line + "\n";
    return out + ")\n";
  }

 private:
  std::vector<std::string> lines_;
};

// The model arguments: llama is rope + swiglu + RMSNorm, gpt2 Megatron's defaults.
void MgModel(const ir::Plan& plan, ArgLines& args, ExportReport& report) {
  const ir::Model& m = plan.model();
  args.Put("--num-layers", m.num_layers());
  args.Put("--hidden-size", m.hidden_size());
  args.Put("--num-attention-heads", m.num_heads());
  args.Put("--ffn-hidden-size", m.ffn_hidden_size());
  if (m.num_kv_heads() > 0 && m.num_kv_heads() != m.num_heads()) {
    args.Flag("--group-query-attention");
    args.Put("--num-query-groups", m.num_kv_heads());
  }
  if (m.head_dim() > 0 && m.head_dim() * m.num_heads() != m.hidden_size()) args.Put("--kv-channels", m.head_dim());
  args.Put("--max-position-embeddings", m.max_seq_len());
  if (m.arch() == ir::ARCHITECTURE_LLAMA) {
    args.Put("--position-embedding-type", "rope");
    args.Put("--rotary-base", static_cast<int64_t>(m.rope_theta()));  // an int argument
    args.Flag("--swiglu");
    args.Put("--normalization", "RMSNorm");
    args.Flag("--disable-bias-linear");
    if (m.qkv_bias()) args.Flag("--add-qkv-bias");
    if (m.qk_norm()) args.Flag("--qk-layernorm");  // per head, of --normalization's kind (Qwen3)
  }
  args.Num("--norm-epsilon", m.norm_eps());
  if (!m.tie_word_embeddings()) args.Flag("--untie-embeddings-and-output-weights");
  args.Put("--vocab-size", m.vocab_size());
  if (m.moe().num_experts() > 0) {
    const ir::MixtureOfExperts& e = m.moe();
    args.Put("--num-experts", e.num_experts());
    args.Put("--moe-router-topk", e.experts_per_token());
    args.Put("--moe-ffn-hidden-size", e.expert_ffn_size());
    if (e.num_shared_experts() > 0) {
      args.Put("--moe-shared-expert-intermediate-size", e.num_shared_experts() * e.shared_expert_ffn_size());
    }
    if (e.router_scoring() == ir::ROUTER_SCORING_SIGMOID) args.Put("--moe-router-score-function", "sigmoid");
    if (e.router_aux_loss_coef() > 0) args.Num("--moe-aux-loss-coeff", e.router_aux_loss_coef());
    if (e.capacity_factor() > 0) args.Num("--moe-expert-capacity-factor", e.capacity_factor());
  }
  // OLMo 2's and Gemma's blocks (ir::Model.norm_placement and the fields after it) have no
  // Megatron-LM arguments: the ones above build Llama's block.
  if (m.norm_placement() != ir::NORM_PLACEMENT_UNSPECIFIED) {
    report.Missing(a::kModel, m.model_type() + "'s block (norms after the sublayers, and for gemma GeGLU, " +
                                  "x*(1 + w) norms, scaled embeddings, soft caps, sliding windows) has no " +
                                  "Megatron-LM arguments: the arguments written build Llama's block");
    return;
  }
  report.Approximate(a::kModel, "the model's dimensions as Megatron-LM arguments; Megatron pads the "
                                "vocabulary to a multiple of 128 x tp, and its initialization and "
                                "tokenizer are its own (--tokenizer-type and --data-path are left to you)");
}

// The mesh, the pipeline schedule and the sharding.
void MgLayout(const ir::Plan& plan, const PlanLayout& l, ArgLines& args, ExportReport& report) {
  args.Put("--tensor-model-parallel-size", l.tp);
  args.Put("--pipeline-model-parallel-size", l.pp);
  report.Exact(a::kTensor, "--tensor-model-parallel-size");
  report.Exact(a::kPipeline, "--pipeline-model-parallel-size");
  const ir::Pipeline& pipe = plan.pipeline();
  if (l.pp > 1 && pipe.virtual_stages() > 1) {
    const int64_t chunks = l.pp * pipe.virtual_stages();
    if (plan.model().num_layers() % chunks == 0) {
      args.Put("--num-layers-per-virtual-pipeline-stage", plan.model().num_layers() / chunks);
      report.Exact(a::kVirtualStages, "--num-layers-per-virtual-pipeline-stage (layers / (pp x virtual stages))");
    } else {
      // Uneven chunks: Megatron-LM takes the count of chunks instead.
      args.Put("--virtual-pipeline-model-parallel-size", pipe.virtual_stages());
      report.Exact(a::kVirtualStages, "--virtual-pipeline-model-parallel-size (the layers do not split "
                                      "evenly into pp x virtual stages)");
    }
  }
  if (l.pp > 1) {
    const ir::PipelineSchedule s = pipe.schedule();
    if (s == ir::PIPELINE_SCHEDULE_ZB_H1 || s == ir::PIPELINE_SCHEDULE_ZBV) {
      report.Approximate(a::kSchedule, "Megatron-LM has no zero-bubble schedule (zb_h1, zbv): it runs 1F1B");
    } else if (s == ir::PIPELINE_SCHEDULE_GPIPE && pipe.microbatches() >= l.pp) {
      report.Approximate(a::kSchedule, "Megatron-LM has no GPipe schedule: with as many microbatches as "
                                       "stages it runs 1F1B");
    } else {
      report.Exact(a::kSchedule, "Megatron-LM's choice: interleaved 1F1B with virtual stages, 1F1B "
                                 "otherwise (GPipe-like when microbatches < stages)");
    }
  }
  if (plan.mesh().sequence_parallel()) args.Flag("--sequence-parallel");
  args.Put("--context-parallel-size", l.cp);
  report.Exact(a::kContext, "--context-parallel-size");
  if (l.cp > 1 && plan.mesh().context_parallel().method() == ir::CONTEXT_PARALLEL_METHOD_ULYSSES) {
    args.Put("--cp-comm-type", "a2a");
    report.Approximate(a::kContext, "--cp-comm-type a2a is Megatron's Ulysses-style all-to-all; accel "
                                    "import does not read it (W0701) and takes ring attention");
  }
  if (l.ep > 1) {
    args.Put("--expert-model-parallel-size", l.ep);
    report.Exact(a::kExpert, "--expert-model-parallel-size (expert tensor parallel = tp, Megatron's default)");
  }
  const ir::Sharding& sh = plan.sharding();
  if (sh.stage() == 1) {
    args.Flag("--use-distributed-optimizer");
  } else if (sh.stage() >= 2) {
    args.Flag("--use-megatron-fsdp");
    args.Put("--data-parallel-sharding-strategy", sh.stage() == 3 ? "optim_grads_params" : "optim_grads");
  }
  report.Exact(a::kStage, "--use-distributed-optimizer (1), --use-megatron-fsdp with "
                          "--data-parallel-sharding-strategy optim_grads (2) / optim_grads_params (3)");
  if (sh.offload() == ir::OFFLOAD_OPTIMIZER) {
    args.Flag("--optimizer-cpu-offload");
    report.Exact(a::kOffload, "--optimizer-cpu-offload");
  } else if (sh.offload() == ir::OFFLOAD_ALL) {
    args.Flag("--optimizer-cpu-offload");
    report.Approximate(a::kOffload, "--optimizer-cpu-offload moves the optimizer only; Megatron-LM has "
                                    "no parameter offload");
  } else {
    report.Exact(a::kOffload, "no offload");
  }
  const bool replicated = sh.stage() == 0;
  if (replicated ? l.dp_shard == 1 : l.dp_replicate == 1) {
    report.Exact(a::kDataReplicate, "the data-parallel ranks are world / (tp x pp x cp)");
    report.Exact(a::kDataShard, "the data-parallel ranks are world / (tp x pp x cp)");
  } else {
    const std::string why = "Megatron-LM shards over all " + std::to_string(l.dp()) +
                            " data-parallel ranks; the job's dp_replicate x dp_shard split has no "
                            "argument accel import reads";
    report.Approximate(a::kDataReplicate, why);
    report.Approximate(a::kDataShard, why);
  }
  if (sh.hybrid()) report.Approximate(a::kHybrid, "written as sharding over all data-parallel ranks");
  else report.Exact(a::kHybrid, "no hybrid sharding");
}

void MgBatchAndPrecision(const ir::Plan& plan, ArgLines& args, ExportReport& report) {
  const ir::Batch& b = plan.batch();
  args.Put("--seq-length", b.seq_len());
  args.Put("--micro-batch-size", b.micro_batch_size());
  args.Put("--global-batch-size", b.global_batch_size());
  report.Exact(a::kSeqLen, "--seq-length");
  report.Exact(a::kMicroBatch, "--micro-batch-size");
  report.Exact(a::kGlobalBatch, "--global-batch-size");
  report.Exact(a::kGradAccum, "global / (micro x data-parallel ranks), as Megatron-LM derives it");
  const ir::Precision& p = plan.precision();
  const std::string compute = DtypeName(p.compute_dtype());
  if (compute != "fp32") args.Flag("--" + compute);
  report.Exact(a::kComputeDtype, "--bf16 / --fp16");
  if (compute == "fp16") {
    if (p.loss_scaling() == ir::LOSS_SCALING_STATIC) args.Num("--loss-scale", p.initial_loss_scale());
    report.Exact(a::kLossScaling, "--fp16 scales dynamically unless --loss-scale");
  }
  if (std::string(DtypeName(p.param_dtype())) == "fp32") {
    report.Exact(a::kParamDtype, "Megatron-LM keeps fp32 main parameters");
  } else {
    report.Approximate(a::kParamDtype, "Megatron-LM keeps fp32 main parameters; the job stores " +
                                           std::string(DtypeName(p.param_dtype())));
  }
  const std::string reduce = DtypeName(p.reduce_dtype());
  if (reduce == "bf16") args.Flag("--grad-reduce-in-bf16");
  if (reduce == "fp16") report.Approximate(a::kReduceDtype, "Megatron-LM reduces in fp32 or bf16: fp16 written as fp32");
  else report.Exact(a::kReduceDtype, "--grad-reduce-in-bf16 (absent: fp32)");
}

void MgTraining(const ir::Plan& plan, ArgLines& args, ExportReport& report) {
  const ir::Training& t = plan.training();
  const ir::Optimizer& o = t.optimizer();
  args.Put("--train-iters", plan.batch().steps());
  report.Exact(a::kSteps, "--train-iters");
  if (o.kind() == ir::OPTIMIZER_KIND_SGD) {
    args.Put("--optimizer", "sgd");
    args.Num("--sgd-momentum", o.momentum());
  } else {
    args.Put("--optimizer", "adam");
    args.Num("--adam-beta1", o.beta1());
    args.Num("--adam-beta2", o.beta2());
    args.Num("--adam-eps", o.eps());
  }
  args.Num("--lr", o.lr());
  args.Num("--weight-decay", o.weight_decay());
  report.Exact(a::kOptimizer, "--optimizer (adam is AdamW: decoupled weight decay), --lr, --adam-*, --weight-decay");
  const ir::LrSchedule& s = t.lr_schedule();
  const char* style = s.kind() == ir::LR_SCHEDULE_KIND_COSINE   ? "cosine"
                      : s.kind() == ir::LR_SCHEDULE_KIND_LINEAR ? "linear"
                                                                : "constant";
  args.Put("--lr-decay-style", style);
  args.Put("--lr-warmup-iters", s.warmup_steps());
  // lr x ratio to 12 significant digits: 1.5e-4 x 0.1 is 1.4999999999999999e-05 in binary.
  args.Num("--min-lr", std::strtod(Round12(o.lr() * s.min_lr_ratio()).c_str(), nullptr));
  report.Exact(a::kLrSchedule, "--lr-decay-style, --lr-warmup-iters, --min-lr (= lr x min_lr_ratio)");
  args.Num("--clip-grad", t.grad_clip_norm());
  report.Exact(a::kGradClip, "--clip-grad");
  switch (t.recompute()) {
    case ir::RECOMPUTE_FULL:
      args.Put("--recompute-granularity", "full");
      args.Put("--recompute-method", "uniform");
      args.Put("--recompute-num-layers", 1);
      report.Exact(a::kRecompute, "--recompute-granularity full (every block)");
      break;
    case ir::RECOMPUTE_SELECTIVE:
      args.Put("--recompute-granularity", "selective");
      report.Exact(a::kRecompute, "--recompute-granularity selective (core_attn)");
      break;
    case ir::RECOMPUTE_OP:
      args.Put("--recompute-granularity", "selective");
      report.Approximate(a::kRecompute, "Megatron-LM has no per-op policy: written as selective "
                                        "(the attention core)");
      break;
    default:
      report.Exact(a::kRecompute, "no recompute");
  }
  args.Put("--seed", t.seed());
  args.Put("--log-interval", t.log_every_steps());
}

}  // namespace

std::string WriteMegatron(const spec::JobSpec& job, const ir::Plan& plan, ExportReport& report) {
  const PlanLayout l = ReadLayout(plan);
  ArgLines args;
  MgModel(plan, args, report);
  MgLayout(plan, l, args, report);
  MgBatchAndPrecision(plan, args, report);
  MgTraining(plan, args, report);
  report.Exact(a::kWorld, "torchrun --nproc_per_node x --nnodes");
  report.Missing(a::kData, "--data-path (Megatron's indexed .bin/.idx data) and the tokenizer "
                           "arguments are left to you");
  std::string out = "#!/bin/bash\n# Megatron-LM arguments for job '" + job.name +
                    "', written by `accel export-config` from " + job.file + ".\n"
                    "# Add --data-path and the tokenizer arguments; run it on each node with its "
                    "--node_rank.\n\n";
  out += args.Array("GPT_ARGS");
  out += "\ntorchrun --nproc_per_node " + std::to_string(l.devices_per_node) + " --nnodes " +
         std::to_string(l.nodes) + " pretrain_gpt.py \"${GPT_ARGS[@]}\"\n";
  return out;
}

}  // namespace accel::exporters
