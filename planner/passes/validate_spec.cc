// validate-spec: copies the parts of the spec that need no resolution into the plan (job, model
// dimensions and exact parameter counts, data, training, precision, checkpoint) and checks the
// cross-field rules that do not depend on any `auto` value.
#include <cstdio>
#include <filesystem>

#include "common/diag_codes.h"
#include "planner/ir_enums.h"
#include "planner/model_params.h"
#include "planner/moe_layers.h"
#include "planner/pass.h"
#include "spec/limits.h"

namespace accel::planner {
namespace {

using spec::Name;

// Joins a relative data path to the spec file's directory, lexically, so the plan names the
// same file whatever directory `accel run` is started from; absolute paths stay as written.
std::string ResolveDataPath(const std::string& spec_file, const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute() || path.empty()) return path;
  std::filesystem::path base = std::filesystem::path(spec_file).parent_path();
  return (base / p).lexically_normal().string();
}

class ValidateSpecPass : public Pass {
 public:
  std::string_view name() const override { return "validate-spec"; }

  void Run(PlanContext& context) override {
    const spec::JobSpec& s = context.spec();
    ir::Plan& plan = context.plan();

    ir::Job* job = plan.mutable_job();
    job->set_name(s.name);
    job->set_spec_file(s.file);
    for (const std::string& o : s.overrides) job->add_overrides(o);
    job->set_backend(s.cluster.device == spec::DeviceType::kCuda ? ir::BACKEND_NCCL : ir::BACKEND_GLOO);

    const spec::ModelSpec& m = s.model;
    ir::Model* model = plan.mutable_model();
    model->set_arch(ToIr(m.arch));
    model->set_model_type(m.model_type);
    model->set_hidden_size(m.hidden_size);
    model->set_num_layers(m.num_layers);
    model->set_num_heads(m.num_heads);
    model->set_num_kv_heads(m.num_kv_heads);
    model->set_head_dim(HeadDimOf(m));
    model->set_ffn_hidden_size(m.ffn_hidden_size);
    model->set_vocab_size(m.vocab_size);
    model->set_padded_vocab_size(m.vocab_size);
    model->set_max_seq_len(m.max_seq_len);
    model->set_tie_word_embeddings(m.tie_word_embeddings);
    model->set_qkv_bias(m.qkv_bias);
    model->set_norm_eps(m.norm_eps);
    model->set_rope_theta(m.rope_theta);
    model->set_qk_norm(m.qk_norm);
    SetDecoderVariant(m, *model);
    // Dense plans carry no MixtureOfExperts message at all.
    if (m.moe.num_experts > 0) *model->mutable_moe() = MoeFromSpec(m.moe, m.num_layers);
    if (!m.init_from.empty()) model->set_init_from(ResolveDataPath(s.file, m.init_from));

    ir::Data* data = plan.mutable_data();
    data->set_path(ResolveDataPath(s.file, s.data.train.path));
    data->set_format(ToIr(s.data.train.format));
    SetTokenizer(context, *data);
    if (s.data.train.format == spec::DataFormat::kTokens) {
      data->set_token_dtype(ToIr(s.data.train.dtype));
    }
    data->set_shuffle(s.data.shuffle);

    ir::Training* training = plan.mutable_training();
    training->set_seed(s.training.seed);
    training->set_log_every_steps(s.training.log_every_steps);
    training->set_recompute(ToIr(s.training.recompute));
    training->set_sample_tokens(s.training.sample_tokens);
    training->set_grad_clip_norm(s.training.grad_clip_norm);
    ir::Optimizer* opt = training->mutable_optimizer();
    opt->set_kind(ToIr(s.training.optimizer.name));
    opt->set_lr(s.training.optimizer.lr);
    opt->set_beta1(s.training.optimizer.beta1);
    opt->set_beta2(s.training.optimizer.beta2);
    opt->set_eps(s.training.optimizer.eps);
    opt->set_weight_decay(s.training.optimizer.weight_decay);
    opt->set_momentum(s.training.optimizer.momentum);
    ir::LrSchedule* lr = training->mutable_lr_schedule();
    lr->set_kind(ToIr(s.training.lr_schedule.name));
    lr->set_warmup_steps(s.training.lr_schedule.warmup_steps);
    lr->set_total_steps(s.training.steps);
    lr->set_min_lr_ratio(s.training.lr_schedule.min_lr_ratio);

    ir::Precision* precision = plan.mutable_precision();
    precision->set_param_dtype(ToIr(s.precision.params));
    precision->set_compute_dtype(ToIr(s.precision.compute));
    precision->set_reduce_dtype(ToIr(s.precision.reduce));
    if (s.precision.params != spec::DType::kFp32) precision->set_master_dtype(ir::DTYPE_FP32);
    precision->set_loss_scaling(ToIr(s.precision.loss_scaling));
    if (s.precision.loss_scaling != spec::LossScaling::kNone) {
      // PyTorch GradScaler's defaults (torch/amp/grad_scaler.py): init_scale 2^16,
      // growth_interval 2000.
      precision->set_initial_loss_scale(65536.0);
      precision->set_loss_scale_growth_interval(2000);
    }

    ir::Checkpoint* ckpt = plan.mutable_checkpoint();
    ckpt->set_dir(s.checkpoint.dir);
    ckpt->set_every_steps(s.checkpoint.every_steps);
    ckpt->set_keep(s.checkpoint.keep);
    ckpt->set_skip_final(!s.checkpoint.at_end);
    ckpt->set_resume(ToIr(s.checkpoint.resume));

    CheckWorldSize(context);
    CheckRules(context);
    CheckMoe(context);
    WarnFp16WithoutLossScaling(context);
    WarnWarmupBeyondSteps(context);

    if (m.hidden_size > 0 && m.num_heads > 0 && m.num_layers > 0 && m.vocab_size > 0) {
      *model->mutable_parameters() = CountParameters(*model);
    }
    // A few names per block (not per layer): in summary plans too.
    for (std::string& op : RecomputeKeptOutputs(*model, training->recompute())) {
      training->add_recompute_kept_outputs(std::move(op));
    }
    // One name per block: left out of summary plans, which nothing runs.
    if (context.summary_only()) return;
    for (std::string& module : RecomputeModules(*model, training->recompute())) {
      training->add_recompute_modules(std::move(module));
    }
  }

 private:
  // The plan lists every rank and process group, so its size is linear in the world size; the
  // limit keeps that bounded (spec/limits.h). Each factor is capped by the loader, so the
  // product cannot overflow.
  static void CheckWorldSize(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    if (s.world_size() <= spec::kMaxWorldSize) return;
    Diagnostic& d = context.Error(
        codes::kOverPlanLimit, "cluster.nodes",
        "world size " + std::to_string(s.world_size()) + " = cluster.nodes(" +
            std::to_string(s.cluster.nodes) + ") * cluster.devices_per_node(" +
            std::to_string(s.cluster.devices_per_node) + ") exceeds accel's limit of " +
            std::to_string(spec::kMaxWorldSize) + " ranks");
    context.NoteField(d, "cluster.devices_per_node", "devices_per_node set here");
    d.Note("the plan lists every rank and process group; larger worlds are not planned");
  }

  // fp16 has 5 exponent bits: without loss scaling, gradients below its smallest subnormal
  // (2^-24) become zero and training stalls without an error (Micikevicius et al. 2018,
  // "Mixed Precision Training"). Valid, so a warning. 16-bit gradients follow the parameter
  // dtype, so fp16 parameters are at risk even with fp32 compute.
  static void WarnFp16WithoutLossScaling(PlanContext& context) {
    const spec::PrecisionSpec& p = context.spec().precision;
    if (p.loss_scaling != spec::LossScaling::kNone) return;
    const bool compute = p.compute == spec::DType::kFp16;
    if (!compute && p.params != spec::DType::kFp16) return;
    const std::string field = compute ? "precision.compute" : "precision.params";
    Diagnostic& d = context.Warning(
        codes::kFp16WithoutLossScaling, field,
        field + " is fp16 but precision.loss_scaling is none: gradients below 2^-24 (the "
                "smallest fp16 value) flush to zero and training stalls silently");
    context.NoteField(d, "precision.loss_scaling", "loss_scaling set here");
    d.Note("set precision.loss_scaling: dynamic, or use bf16 (the exponent range of fp32)");
  }

  // The warmup ramps the learning rate linearly to training.optimizer.lr over warmup_steps
  // (executor/train/lr_schedule.cc); with more warmup steps than steps, training ends on the ramp
  // at steps / warmup_steps of the peak, and the decay never starts. Valid, so a warning.
  static void WarnWarmupBeyondSteps(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const int64_t warmup = s.training.lr_schedule.warmup_steps;
    if (warmup <= s.training.steps) return;
    char percent[32];
    std::snprintf(percent, sizeof percent, "%.2g",
                  100.0 * static_cast<double>(s.training.steps) / static_cast<double>(warmup));
    Diagnostic& d = context.Warning(
        codes::kWarmupBeyondSteps, "training.lr_schedule.warmup_steps",
        "warmup_steps " + std::to_string(warmup) + " exceeds training.steps " +
            std::to_string(s.training.steps) + ": training ends during the warmup, at " + percent +
            "% of the peak learning rate, and the schedule's decay never starts");
    context.NoteField(d, "training.steps", "steps set here");
    d.Note("set warmup_steps below training.steps (a few percent of it is common)");
  }

  // Records the tokenizer kind and file (see ir::Data.tokenizer). The kind comes from the file
  // name alone: validate and plan read no data files, and `accel run` loads the file before
  // launch (launcher/plan_support.h CheckTokenizer).
  static void SetTokenizer(PlanContext& context, ir::Data& data) {
    const spec::JobSpec& s = context.spec();
    const std::string& tokenizer = s.data.train.tokenizer;
    if (tokenizer == "bytes") {
      data.set_tokenizer(ir::TOKENIZER_KIND_BYTES);
      return;
    }
    const std::string file = std::filesystem::path(tokenizer).filename().string();
    if (file.ends_with(".json")) {
      data.set_tokenizer(ir::TOKENIZER_KIND_HUGGINGFACE);
    } else if (file.ends_with(".model")) {
      data.set_tokenizer(ir::TOKENIZER_KIND_SENTENCEPIECE);
    } else {
      Diagnostic& d = context.Error(
          codes::kBadTokenizer, "data.train.tokenizer",
          "tokenizer '" + tokenizer + "' is neither `bytes` nor a tokenizer file (*.json or *.model)");
      d.Note("use bytes, the path of a Hugging Face tokenizer.json, or of a SentencePiece tokenizer.model");
      return;
    }
    data.set_tokenizer_path(ResolveDataPath(s.file, tokenizer));
    if (s.data.train.format != spec::DataFormat::kText) {
      Diagnostic& d = context.Error(
          codes::kConflict, "data.train.tokenizer",
          "a tokenizer file applies to format: text, but data.train.format is tokens (already tokenized)");
      context.NoteField(d, "data.train.format", "format set here");
    }
  }

  // model.moe's cross-field rules (docs/planner-facts.md §9): the registry checks each value's
  // range, this whether they describe an MoE model.
  static void CheckMoe(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::MoeSpec& moe = s.model.moe;
    const auto set = [&](const char* field) { return s.sources.count(field) > 0; };
    const std::string e = std::to_string(moe.num_experts);
    if (moe.num_experts <= 0) {
      if (set("model.moe")) {
        Diagnostic& d = context.Error(codes::kBadMoe, "model.moe",
                                      "model.moe has no num_experts, so it describes no experts");
        d.Note("set model.moe.num_experts, or remove model.moe for a dense model");
      }
      return;
    }
    if (s.model.arch != spec::Arch::kLlama) {
      Diagnostic& d = context.Error(codes::kBadMoe, "model.moe",
                                    "mixture-of-experts blocks need model.arch llama; gpt2 has none");
      context.NoteField(d, "model.arch", "arch set here");
      return;
    }
    if (moe.experts_per_token <= 0) {
      Diagnostic& d = context.Error(codes::kBadMoe, "model.moe.num_experts",
                                    "model.moe.num_experts " + e +
                                        " needs model.moe.experts_per_token (top-k, at least 1)");
      d.Note("Mixtral uses 2 of 8 experts per token");
    } else if (moe.experts_per_token > moe.num_experts) {
      Diagnostic& d = context.Error(
          codes::kBadMoe, "model.moe.experts_per_token",
          "experts_per_token " + std::to_string(moe.experts_per_token) + " exceeds num_experts " +
              e + ": a token cannot be routed to more experts than there are");
      context.NoteField(d, "model.moe.num_experts", "num_experts set here");
    }
    if (moe.expert_ffn_size <= 0) {
      context.Error(codes::kBadMoe, "model.moe.num_experts",
                    "model.moe.num_experts " + e +
                        " needs model.moe.expert_ffn_size (the inner width of one expert)");
    }
    if (moe.num_shared_experts > 0 && moe.shared_expert_ffn_size <= 0) {
      context.Error(codes::kBadMoe, "model.moe.num_shared_experts",
                    "model.moe.num_shared_experts " + std::to_string(moe.num_shared_experts) +
                        " needs model.moe.shared_expert_ffn_size (the inner width of one shared expert)");
    }
    if (moe.capacity_factor > 0 && moe.capacity_factor < 1) {
      Diagnostic& d = context.Error(
          codes::kBadMoe, "model.moe.capacity_factor",
          "capacity_factor " + FormatFactor(moe.capacity_factor) +
              " is below 1: even a perfectly balanced router would drop tokens");
      d.Note("use 0 for dropless routing, or a factor of at least 1 (Switch Transformer trains with 1.25)");
    }
    const ir::MixtureOfExperts resolved = MoeFromSpec(moe, s.model.num_layers);
    if (s.model.num_layers > 0 && resolved.dense_layers_size() == s.model.num_layers) {
      context.Error(codes::kBadMoe, "model.moe.num_experts",
                    "every one of the " + std::to_string(s.model.num_layers) +
                        " blocks is dense (first_dense_layers " +
                        std::to_string(moe.first_dense_layers) + ", sparse_step " +
                        std::to_string(moe.sparse_step) + "), so no block uses the experts");
    }
  }

  // A factor as written in messages: "0.5", "1.25".
  static std::string FormatFactor(double v) {
    std::string text = std::to_string(v);
    while (text.size() > 1 && text.back() == '0') text.pop_back();
    if (!text.empty() && text.back() == '.') text.pop_back();
    return text;
  }

  // data.seq_len above the model's position limit. The limit is named as its source spells it:
  // a config.json's max_position_embeddings (n_positions for gpt2), with the file, or the spec's
  // model.max_seq_len.
  static void CheckSeqLen(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    std::string limit = "max_seq_len";
    std::string from;
    if (auto it = s.sources.find("model.max_seq_len");
        it != s.sources.end() && !it->second.source_key.empty()) {
      limit = it->second.source_key;
      from = " (" + it->second.file + ")";
    }
    Diagnostic& d = context.Error(
        codes::kSeqLenTooLong, "data.seq_len",
        "seq_len " + std::to_string(s.data.seq_len) + " exceeds the model's " + limit + " " +
            std::to_string(s.model.max_seq_len) + from);
    context.NoteField(d, "model.max_seq_len", limit + " set here");
  }

  static void CheckRules(PlanContext& context) {
    const spec::JobSpec& s = context.spec();
    const spec::ModelSpec& m = s.model;

    if (m.num_heads > 0 && m.hidden_size % m.num_heads != 0) {
      Diagnostic& d = context.Error(
          codes::kHeadsNotDivisible, "model.hidden_size",
          "hidden_size " + std::to_string(m.hidden_size) + " is not divisible by num_heads " +
              std::to_string(m.num_heads) + " (head_dim must be an integer)");
      context.NoteField(d, "model.num_heads", "num_heads set here");
    }
    if (m.num_kv_heads > 0 && m.num_heads % m.num_kv_heads != 0) {
      Diagnostic& d = context.Error(
          codes::kKvHeadsNotDivisible, "model.num_kv_heads",
          "num_heads " + std::to_string(m.num_heads) + " is not a multiple of num_kv_heads " +
              std::to_string(m.num_kv_heads) + " (each key/value head serves a whole group of "
              "query heads)");
      context.NoteField(d, "model.num_heads", "num_heads set here");
    }
    if (s.data.seq_len > m.max_seq_len && m.max_seq_len > 0) CheckSeqLen(context);
    if (s.precision.loss_scaling != spec::LossScaling::kNone &&
        s.precision.compute != spec::DType::kFp16 && s.precision.params != spec::DType::kFp16) {
      Diagnostic& d = context.Error(
          codes::kLossScalingNeedsFp16, "precision.loss_scaling",
          std::string("loss scaling '") + Name(s.precision.loss_scaling) +
              "' is only needed with fp16; compute dtype is " + Name(s.precision.compute));
      d.Note("bf16 and fp32 have the exponent range of fp32: set loss_scaling: none");
    }
    if (s.sharding.offload != spec::Offload::kNone && s.sharding.stage < 1) {
      Diagnostic& d = context.Error(
          codes::kOffloadNeedsSharding, "sharding.offload",
          std::string("offload '") + Name(s.sharding.offload) +
              "' needs sharding stage >= 1, but sharding.stage is 0");
      context.NoteField(d, "sharding.stage", "stage set here");
    } else if (s.sharding.offload == spec::Offload::kAll && s.sharding.stage < 3) {
      Diagnostic& d = context.Error(
          codes::kParamOffloadNeedsStage3, "sharding.offload",
          "offload 'all' moves parameters to the host, which needs sharding stage 3, but "
          "sharding.stage is " + std::to_string(s.sharding.stage));
      context.NoteField(d, "sharding.stage", "stage set here");
    }
    if (s.sharding.hybrid && s.sharding.stage != 3) {
      Diagnostic& d = context.Error(
          codes::kHybridNeedsStage3, "sharding.hybrid",
          "hybrid sharding (FSDP HYBRID_SHARD) shards parameters, which needs sharding stage 3, "
          "but sharding.stage is " + std::to_string(s.sharding.stage));
      context.NoteField(d, "sharding.stage", "stage set here");
    }

    const spec::ParallelSpec& p = s.parallel;
    std::vector<std::string> autos;
    if (p.pipeline.is_auto) autos.push_back("pipeline");
    if (p.data_replicate.is_auto) autos.push_back("data_replicate");
    if (p.data_shard.is_auto) autos.push_back("data_shard");
    if (p.context.is_auto) autos.push_back("context");
    if (p.tensor.is_auto) autos.push_back("tensor");
    if (autos.size() > 1) {
      std::string list;
      for (size_t i = 0; i < autos.size(); ++i) list += (i ? ", " : "") + autos[i];
      Diagnostic& d = context.Error(
          codes::kTooManyAuto, "parallel." + autos[1],
          "at most one parallel degree may be auto, but " + std::to_string(autos.size()) +
              " are: " + list);
      context.NoteField(d, "parallel." + autos[0], autos[0] + " is auto here");
      d.Note("the auto degree takes the ranks the others leave; set all but one explicitly");
    }
  }
};

}  // namespace

std::unique_ptr<Pass> MakeValidateSpecPass() { return std::make_unique<ValidateSpecPass>(); }

}  // namespace accel::planner
