// Megatron-LM's arguments onto the job spec. Semantics and defaults from NVIDIA/Megatron-LM at
// d98e8a64: megatron/training/arguments.py (argparse, validate_args), the dataclasses it builds
// flags from (megatron/core/model_parallel_config.py, megatron/core/transformer/
// transformer_config.py, megatron/training/config/training_config.py, common_config.py,
// megatron/core/optimizer/optimizer_config.py).
#include "importers/megatron_importer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <map>
#include <optional>

#include "common/diag_codes.h"

namespace accel::importers {
namespace {

struct MegatronState {
  std::optional<Sourced> tp, pp, cp, ep, etp, vpp_layers, vpp_size;
  std::optional<Sourced> nproc, nnodes;
  std::optional<Sourced> micro, global, train_iters, train_samples, decay_iters;
  std::optional<Sourced> layers, hidden, heads, ffn, query_groups, vocab, divisible_by;
  std::optional<Sourced> num_experts, topk, save_interval;
  std::string gqa_path, swiglu_path, norm_path, position_path, untie_path, nobias_path;
  std::string normalization = "LayerNorm", position = "learned_absolute";
  std::optional<double> lr, min_lr, warmup_fraction;
  std::string lr_path, min_lr_path, warmup_fraction_path;
  bool warmup = false, style = false, weight_decay = false, beta2 = false, eps = false;
  bool clip = false, seed = false, log = false;
  std::string dist_opt_path, fsdp_path, fsdp_strategy = "optim_grads_params", fsdp_strategy_path;
  std::string bf16_path, fp16_path, grad_reduce_bf16_path;
  std::string sp_path;
  std::string save, save_path, load, vocab_file, vocab_file_path;
};

class MegatronImporter {
 public:
  explicit MegatronImporter(ImportContext& context) : c_(context) {}

  void Run(const YamlNode& root) {
    launched_ = !root.value.empty();
    c_.Walk(root, "", Rules());
    if (c_.sink().HasErrors()) return;
    Finish();
  }

 private:
  // A switch (store_true flag): given means on; a value after it is a wrong type.
  bool On(const SourceKey& k) {
    const YamlNode& v = k.value.content();
    if (v.kind == YamlNode::Kind::kScalar && v.scalar_type == spec::ScalarType::kBool && v.value == "true") {
      return true;
    }
    c_.WrongType(k, "'" + k.path + "' is a switch and takes no value, got " + ImportContext::Shown(k.value));
    return false;
  }

  KeyRule Switch(const char* key, std::string* path) {
    return {key, [this, path](const SourceKey& k) { if (On(k)) *path = k.path, at_[k.path] = k.value.location; }};
  }

  KeyRule Count(const char* key, std::optional<Sourced>* target, int64_t minimum, const char* field) {
    return {key, [this, target, minimum, field](const SourceKey& k) {
              auto v = c_.IntAtLeast(k, minimum);
              if (v && (field == nullptr || c_.InRange(field, *v, k))) *target = Sourced{*v, k.path, k.value.location};
            }};
  }

  KeyRule Float(const char* key, const char* field, bool* seen) {
    return {key, [this, field, seen](const SourceKey& k) {
              if (seen) *seen = true;
              if (auto v = c_.Number(k)) c_.SetFloat(field, *v, k);
            }};
  }

  KeyRule IntField(const char* key, const char* field, int64_t minimum, bool* seen) {
    return {key, [this, field, minimum, seen](const SourceKey& k) {
              if (seen) *seen = true;
              if (auto v = c_.IntAtLeast(k, minimum)) c_.SetInt(field, *v, k);
            }};
  }

  KeyRule Refuse(const char* key, std::string why) {
    return {key, [this, why](const SourceKey& k) { c_.Unsupported(k, why); }};
  }

  // Where torchrun finds the other ranks: nothing the job is.
  KeyRule Quiet(const char* key) {
    return {key, [this](const SourceKey& k) { c_.Defaulted(k.path); }};
  }

  void Beta(const SourceKey& k, int index) {
    std::optional<double> v = c_.Number(k);
    if (!v || !c_.InRange("training.optimizer.betas", *v, k)) return;
    betas_[index] = *v;
    betas_path_ += (betas_path_.empty() ? "" : ", ") + k.path;
    c_.Set("training.optimizer.betas", "[" + YamlFloat(betas_[0]) + ", " + YamlFloat(betas_[1]) + "]", betas_path_);
  }

  KeyRule Text(const char* key, std::string* into, std::string* path) {
    return {key, [this, into, path](const SourceKey& k) {
              if (auto v = c_.String(k)) *into = *v, *path = k.path, at_[k.path] = k.value.location;
            }};
  }

  std::vector<KeyRule> Rules();
  std::vector<KeyRule> ParallelRules();
  std::vector<KeyRule> ModelRules();
  std::vector<KeyRule> TrainingRules();
  std::vector<KeyRule> QuietRules();
  void Optimizer(const SourceKey& k);
  void DecayStyle(const SourceKey& k);
  void Recompute(const SourceKey& k);
  void Finish();
  void FinishModel();
  void FinishVocab();
  void FinishMoe();
  void FinishLayout();
  int64_t FinishCluster(int64_t ranks_needed);
  void FinishPipeline(int64_t pp);
  void FinishSharding();
  void FinishBatch(int64_t dp, int64_t pp);
  void FinishSchedule();
  void FinishPrecision();

  ImportContext& c_;
  MegatronState s_;
  // Where the switches and words read after the walk were written, by flag.
  std::map<std::string, SourceLocation> at_;
  std::optional<SourceKey> samples_key_;  // --train-samples; its nodes outlive the import
  bool launched_ = false;  // a launch command (not an arguments file) gave the arguments
  double betas_[2] = {0.9, 0.999};  // Megatron's --adam-beta1/2 defaults
  std::string betas_path_;
};

std::vector<KeyRule> MegatronImporter::Rules() {
  std::vector<KeyRule> rules = ParallelRules();
  using Group = std::vector<KeyRule> (MegatronImporter::*)();
  for (Group group : {&MegatronImporter::ModelRules, &MegatronImporter::TrainingRules, &MegatronImporter::QuietRules}) {
    for (KeyRule& r : (this->*group)()) rules.push_back(std::move(r));
  }
  return rules;
}

std::vector<KeyRule> MegatronImporter::ParallelRules() {
  return {
      Count("--tensor-model-parallel-size", &s_.tp, 1, "parallel.tensor"),
      Count("--pipeline-model-parallel-size", &s_.pp, 1, "parallel.pipeline"),
      Count("--context-parallel-size", &s_.cp, 1, "parallel.context"),
      Count("--expert-model-parallel-size", &s_.ep, 1, "parallel.expert"),
      Count("--expert-tensor-parallel-size", &s_.etp, 1, "parallel.tensor"),
      Count("--num-layers-per-virtual-pipeline-stage", &s_.vpp_layers, 1, nullptr),
      Count("--virtual-pipeline-model-parallel-size", &s_.vpp_size, 1, "parallel.virtual_stages"),
      Switch("--sequence-parallel", &s_.sp_path),
      Switch("--use-distributed-optimizer", &s_.dist_opt_path),
      Switch("--use-megatron-fsdp", &s_.fsdp_path),
      Switch("--use-torch-fsdp2", &s_.fsdp_path),
      Text("--data-parallel-sharding-strategy", &s_.fsdp_strategy, &s_.fsdp_strategy_path),
      {"--optimizer-cpu-offload",
       [this](const SourceKey& k) { if (On(k)) c_.Set("sharding.offload", "optimizer", k.path); }},
      // torchrun's own arguments (before the training script): the world size.
      Count("--nproc_per_node", &s_.nproc, 1, "cluster.devices_per_node"),
      Count("--nproc-per-node", &s_.nproc, 1, "cluster.devices_per_node"),
      Count("--nnodes", &s_.nnodes, 1, "cluster.nodes"),
  };
}

std::vector<KeyRule> MegatronImporter::ModelRules() {
  return {
      Count("--num-layers", &s_.layers, 1, "model.num_layers"),
      Count("--hidden-size", &s_.hidden, 1, "model.hidden_size"),
      Count("--num-attention-heads", &s_.heads, 1, "model.num_heads"),
      Count("--ffn-hidden-size", &s_.ffn, 1, "model.ffn_hidden_size"),
      Switch("--group-query-attention", &s_.gqa_path),
      Count("--num-query-groups", &s_.query_groups, 1, "model.num_kv_heads"),
      {"--kv-channels", [this](const SourceKey& k) { if (auto v = c_.IntAtLeast(k, 1)) c_.SetInt("model.head_dim", *v, k); }},
      {"--max-position-embeddings", [this](const SourceKey& k) { if (auto v = c_.IntAtLeast(k, 1)) c_.SetInt("model.max_seq_len", *v, k); }},
      Float("--norm-epsilon", "model.norm_eps", nullptr),
      Float("--rotary-base", "model.rope_theta", nullptr),
      Count("--vocab-size", &s_.vocab, 1, nullptr),
      Count("--make-vocab-size-divisible-by", &s_.divisible_by, 1, nullptr),
      Text("--vocab-file", &s_.vocab_file, &s_.vocab_file_path),
      {"--tokenizer-model", {}, {}, "give the tokenizer as data.train.tokenizer"},
      Switch("--swiglu", &s_.swiglu_path),
      Text("--normalization", &s_.normalization, &s_.norm_path),
      Text("--position-embedding-type", &s_.position, &s_.position_path),
      Switch("--untie-embeddings-and-output-weights", &s_.untie_path),
      Switch("--disable-bias-linear", &s_.nobias_path),
      {"--add-qkv-bias", [this](const SourceKey& k) { if (On(k)) c_.Set("model.qkv_bias", "true", k.path); }},
      // A norm of --normalization's kind over each query and key head (Qwen3's q/k RMSNorm).
      {"--qk-layernorm", [this](const SourceKey& k) { if (On(k)) c_.Set("model.qk_norm", "true", k.path); }},
      Count("--num-experts", &s_.num_experts, 1, "model.moe.num_experts"),
      Count("--moe-router-topk", &s_.topk, 1, "model.moe.experts_per_token"),
      {"--moe-ffn-hidden-size", [this](const SourceKey& k) { if (auto v = c_.IntAtLeast(k, 1)) c_.SetInt("model.moe.expert_ffn_size", *v, k); }},
      {"--moe-shared-expert-intermediate-size",
       [this](const SourceKey& k) {
         if (auto v = c_.IntAtLeast(k, 1)) {
           c_.Set("model.moe.num_shared_experts", "1", k.path + " (one shared expert of that width)");
           c_.SetInt("model.moe.shared_expert_ffn_size", *v, k);
         }
       }},
      Float("--moe-aux-loss-coeff", "model.moe.router_aux_loss_coef", nullptr),
      Float("--moe-expert-capacity-factor", "model.moe.capacity_factor", nullptr),
      {"--moe-router-score-function",
       [this](const SourceKey& k) {
         auto v = c_.String(k);
         if (v && *v != "softmax" && *v != "sigmoid") return c_.Unsupported(k, "accel's routers score by softmax or sigmoid");
         if (v) c_.Set("model.moe.router_scoring", *v, k.path);
       }},
      {"--moe-router-load-balancing-type", {}, {"aux_loss"}},
      {"--moe-layer-freq", {}, {"1"}},
      Refuse("--multi-latent-attention", "accel's attention is multi-head or grouped-query, not MLA"),
      Refuse("--fp8-format", "accel computes in fp32, bf16 or fp16, not fp8"),
      Refuse("--fp8-recipe", "accel computes in fp32, bf16 or fp16, not fp8"),
      Refuse("--fp8-param-gather", "accel gathers parameters in their own dtype, not fp8"),
      Refuse("--fp4-format", "accel computes in fp32, bf16 or fp16, not fp4"),
  };
}

std::vector<KeyRule> MegatronImporter::TrainingRules() {
  return {
      Count("--micro-batch-size", &s_.micro, 1, "data.micro_batch_size"),
      Count("--global-batch-size", &s_.global, 1, "data.global_batch_size"),
      {"--seq-length", [this](const SourceKey& k) { if (auto v = c_.IntAtLeast(k, 1)) c_.SetInt("data.seq_len", *v, k); }},
      Count("--train-iters", &s_.train_iters, 1, "training.steps"),
      {"--train-samples",
       [this](const SourceKey& k) {
         if (auto v = c_.IntAtLeast(k, 1)) s_.train_samples = Sourced{*v, k.path, k.value.location}, samples_key_.emplace(k);
       }},
      Count("--lr-decay-iters", &s_.decay_iters, 1, nullptr),
      {"--lr", [this](const SourceKey& k) { if ((s_.lr = c_.Number(k))) s_.lr_path = k.path, c_.SetFloat("training.optimizer.lr", *s_.lr, k); }},
      {"--min-lr", [this](const SourceKey& k) { if ((s_.min_lr = c_.Number(k))) s_.min_lr_path = k.path; }},
      {"--lr-decay-style", [this](const SourceKey& k) { DecayStyle(k); }},
      IntField("--lr-warmup-iters", "training.lr_schedule.warmup_steps", 0, &s_.warmup),
      {"--lr-warmup-fraction",
       [this](const SourceKey& k) {
         if ((s_.warmup_fraction = c_.Number(k))) s_.warmup_fraction_path = k.path;
       }},
      Float("--weight-decay", "training.optimizer.weight_decay", &s_.weight_decay),
      Float("--clip-grad", "training.grad_clip_norm", &s_.clip),
      {"--adam-beta1", [this](const SourceKey& k) { Beta(k, 0); }},
      {"--adam-beta2", [this](const SourceKey& k) { s_.beta2 = true; Beta(k, 1); }},
      Float("--adam-eps", "training.optimizer.eps", &s_.eps),
      Float("--sgd-momentum", "training.optimizer.momentum", nullptr),
      {"--optimizer", [this](const SourceKey& k) { Optimizer(k); }},
      IntField("--seed", "training.seed", 0, &s_.seed),
      IntField("--log-interval", "training.log_every_steps", 1, &s_.log),
      Switch("--bf16", &s_.bf16_path),
      Switch("--fp16", &s_.fp16_path),
      Switch("--grad-reduce-in-bf16", &s_.grad_reduce_bf16_path),
      {"--loss-scale",
       [this](const SourceKey& k) { if (c_.Number(k)) c_.Set("precision.loss_scaling", "static", k.path); }},
      {"--recompute-granularity", [this](const SourceKey& k) { Recompute(k); }},
      {"--recompute-activations",
       [this](const SourceKey& k) { if (On(k)) c_.Set("training.recompute", "selective", k.path + " (selective, arguments.py)"); }},
      {"--recompute-modules", {}, {"core_attn"}},
      Count("--save-interval", &s_.save_interval, 1, "checkpoint.every_steps"),
      Text("--save", &s_.save, &s_.save_path),
      {"--load",
       [this](const SourceKey& k) {
         auto v = c_.String(k);
         if (!v) return;
         s_.load = *v;
         // Loading from where it saves is resuming its own run, which accel does by default.
         if (*v == s_.save) return c_.Defaulted(k.path);
         c_.Unmapped(k, "has no accel equivalent: accel resumes from checkpoint.dir; not imported");
       }},
      {"--data-path",
       [this](const SourceKey& k) { c_.spec().Note("data", "Megatron-LM " + k.path + " = " + ImportContext::Shown(k.value) + ": accel reads data.train.path"); }},
      {"--mock-data", [this](const SourceKey& k) { if (On(k)) c_.spec().Note("data", "Megatron-LM --mock-data: the script trains on synthetic tokens"); }},
  };
}

// Flags that do not change what is trained and that accel decides itself, at the values the
// examples give: listed in the header, not warned about.
std::vector<KeyRule> MegatronImporter::QuietRules() {
  return {
      {"--use-mcore-models", {}, {"true"}},  // the only models left
      {"--attention-backend", {}, {"auto", "flash", "fused"}},
      Quiet("--node_rank"), Quiet("--node-rank"), Quiet("--master_addr"), Quiet("--master-addr"),
      Quiet("--master_port"), Quiet("--master-port"),
  };
}

void MegatronImporter::Optimizer(const SourceKey& k) {
  auto v = c_.String(k);
  if (!v) return;
  // Megatron's `adam` decouples weight decay (OptimizerConfig.decoupled_weight_decay = True):
  // AdamW.
  if (*v == "adam") return c_.Set("training.optimizer.name", "adamw", k.path + ": adam (decoupled weight decay)");
  if (*v == "sgd") return c_.Set("training.optimizer.name", "sgd", k.path);
  c_.Unsupported(k, "accel's optimizers are adamw and sgd");
}

void MegatronImporter::DecayStyle(const SourceKey& k) {
  auto v = c_.String(k);
  if (!v) return;
  s_.style = true;
  if (*v == "linear" || *v == "cosine" || *v == "constant") return c_.Set("training.lr_schedule.name", *v, k.path);
  c_.Unsupported(k, "accel decays linearly, by cosine or not at all (no inverse-square-root or WSD)");
}

// --recompute-granularity: `full` checkpoints whole layers; `selective` the --recompute-modules,
// by default core_attn, the attention core of Korthikanti et al. (TransformerConfig), which is
// accel's `selective`.
void MegatronImporter::Recompute(const SourceKey& k) {
  auto v = c_.String(k);
  if (!v) return;
  if (*v == "full" || *v == "selective") return c_.Set("training.recompute", *v, k.path);
  c_.WrongType(k, "'" + k.path + "' must be full or selective");
}

void MegatronImporter::Finish() {
  FinishModel();
  if (c_.sink().HasErrors()) return;
  FinishMoe();
  FinishPrecision();
  FinishSchedule();
  FinishLayout();
  if (!s_.save.empty()) c_.Set("checkpoint.dir", YamlString(c_.SpecPath(s_.save)), s_.save_path);
  if (s_.save_interval) {
    c_.Set("checkpoint.every_steps", YamlInt(s_.save_interval->value), s_.save_interval->path);
  } else if (!s_.save.empty()) {
    c_.Set("checkpoint.at_end", "true", "--save-interval absent: Megatron-LM saves at the end");
  }
}

// The architecture: Megatron builds one GPT whose parts are switches; accel has two fixed sets,
// llama (rotary, SwiGLU, RMSNorm) and gpt2 (learned positions, GELU, LayerNorm).
void MegatronImporter::FinishModel() {
  const bool rope = s_.position == "rope";
  if (!rope && s_.position != "learned_absolute") {
    c_.sink().Error(codes::kImportUnsupported, c_.file(), at_[s_.position_path], "",
                    "Megatron-LM key '" + s_.position_path + "' = \"" + s_.position +
                        "\" cannot be expressed in accel: accel's models use rotary (rope) or "
                        "learned absolute positions");
    return;
  }
  const std::string arch = rope ? "llama" : "gpt2";
  auto mismatch = [&](const std::string& path, const std::string& what) {
    c_.sink().Error(codes::kImportUnsupported, c_.file(), at_[path], "",
                    "Megatron-LM key '" + path + "' = " + what + " cannot be expressed in accel: "
                    "accel's models are llama (rope, --swiglu, RMSNorm) and gpt2 (learned "
                    "positions, GELU, LayerNorm), and --position-embedding-type " + s_.position +
                    " makes this one " + arch);
  };
  if (rope != !s_.swiglu_path.empty()) {
    mismatch(rope ? s_.position_path : s_.swiglu_path, rope ? "\"rope\" without --swiglu" : "true");
  } else if (rope != (s_.normalization == "RMSNorm")) {
    mismatch(s_.norm_path.empty() ? s_.position_path : s_.norm_path,
             "\"" + (s_.norm_path.empty() ? s_.position : s_.normalization) + "\"" +
                 (s_.norm_path.empty() ? " with LayerNorm (--normalization absent)" : ""));
  }
  if (c_.sink().HasErrors()) return;
  c_.Set("model.arch", arch, s_.position_path.empty() ? "--position-embedding-type absent: learned_absolute, GELU, LayerNorm"
                                                     : s_.position_path + " " + s_.position + ", " + s_.swiglu_path + ", " + s_.norm_path + " " + s_.normalization);
  c_.Set("model.tie_word_embeddings", s_.untie_path.empty() ? "true" : "false",
         s_.untie_path.empty() ? "--untie-embeddings-and-output-weights absent (Megatron-LM default: tied)" : s_.untie_path);
  if (rope && s_.nobias_path.empty()) {
    c_.spec().Note("model", "Megatron-LM adds biases to linear layers without --disable-bias-linear; accel's llama has none");
  }
  auto put = [this](const char* field, const std::optional<Sourced>& v) {
    if (v) c_.Set(field, YamlInt(v->value), v->path);
  };
  put("model.num_layers", s_.layers);
  put("model.hidden_size", s_.hidden);
  put("model.num_heads", s_.heads);
  if (s_.ffn) {
    put("model.ffn_hidden_size", s_.ffn);
  } else if (s_.hidden) {
    // validate_args: 4h, or with SwiGLU 2/3 of it rounded down to a multiple of 64.
    const int64_t h = s_.hidden->value;
    const int64_t ffn = rope ? (4 * h * 2 / 3) / 64 * 64 : 4 * h;
    c_.Set("model.ffn_hidden_size", YamlInt(ffn), "--ffn-hidden-size absent (Megatron-LM default " +
                                                      std::string(rope ? "int(4h * 2/3 / 64) * 64" : "4h") + ")");
  }
  if (!s_.gqa_path.empty() && s_.query_groups) {
    put("model.num_kv_heads", s_.query_groups);
  } else if (s_.query_groups) {
    c_.Defaulted(s_.query_groups->path + " (without --group-query-attention)");
  }
  if (rope && !c_.spec().Has("model.rope_theta")) c_.Set("model.rope_theta", "10000.0", "--rotary-base absent (Megatron-LM default)");
  FinishVocab();
}

// Megatron pads the tokenizer's vocabulary to a multiple of --make-vocab-size-divisible-by (128)
// × tp (vocab_size_with_padding): the embedding has the padded rows.
void MegatronImporter::FinishVocab() {
  Sourced vocab;
  if (s_.vocab) {
    vocab = *s_.vocab;
  } else if (s_.vocab_file.find("gpt2") != std::string::npos) {
    // GPT2BPETokenizer reads GPT-2's vocab.json: 50257 tokens.
    vocab = Sourced{50257, s_.vocab_file_path + " (GPT-2's BPE vocabulary)", {}};
  } else {
    c_.spec().Note("model", "vocab_size: the script leaves it to its tokenizer");
    return;
  }
  const int64_t multiple = (s_.divisible_by ? s_.divisible_by->value : 128) * (s_.tp ? s_.tp->value : 1);
  const int64_t padded = (vocab.value + multiple - 1) / multiple * multiple;
  c_.Set("model.vocab_size", YamlInt(padded),
         vocab.path + " = " + std::to_string(vocab.value) + " padded to a multiple of " +
             std::to_string(multiple) + " (--make-vocab-size-divisible-by × tp)");
}

void MegatronImporter::FinishMoe() {
  if (!s_.num_experts) return;
  c_.Set("model.moe.num_experts", YamlInt(s_.num_experts->value), s_.num_experts->path);
  if (s_.topk) {
    c_.Set("model.moe.experts_per_token", YamlInt(s_.topk->value), s_.topk->path);
  } else {
    c_.Set("model.moe.experts_per_token", "2", "--moe-router-topk absent (Megatron-LM default)");
  }
  // validate_args: moe_ffn_hidden_size defaults to ffn_hidden_size.
  if (!c_.spec().Has("model.moe.expert_ffn_size") && c_.spec().Has("model.ffn_hidden_size")) {
    c_.Set("model.moe.expert_ffn_size", c_.spec().Get("model.ffn_hidden_size"), "--moe-ffn-hidden-size absent: --ffn-hidden-size");
  }
}

void MegatronImporter::FinishPrecision() {
  const std::string dflt = " (Megatron-LM default)";
  if (!s_.bf16_path.empty()) {
    c_.Set("precision.compute", "bf16", s_.bf16_path);
  } else if (!s_.fp16_path.empty()) {
    c_.Set("precision.compute", "fp16", s_.fp16_path);
    if (!c_.spec().Has("precision.loss_scaling")) c_.Set("precision.loss_scaling", "dynamic", "--loss-scale absent: dynamic" + dflt);
  } else {
    c_.Set("precision.compute", "fp32", "--bf16 and --fp16 absent");
  }
  // Megatron keeps fp32 main parameters and reduces gradients in fp32 unless told otherwise.
  c_.Set("precision.params", "fp32", "Megatron-LM keeps fp32 main parameters");
  c_.Set("precision.reduce", s_.grad_reduce_bf16_path.empty() ? "fp32" : "bf16",
         s_.grad_reduce_bf16_path.empty() ? "--grad-reduce-in-bf16 absent: fp32" + dflt : s_.grad_reduce_bf16_path);
}

// The schedule over iterations; samples-based lengths become iterations of --global-batch-size.
void MegatronImporter::FinishSchedule() {
  const std::string dflt = " (Megatron-LM default)";
  const int64_t global = s_.global ? s_.global->value : 0;
  int64_t steps = 0;
  if (s_.train_iters) {
    steps = s_.train_iters->value;
    c_.Set("training.steps", YamlInt(steps), s_.train_iters->path);
  } else if (s_.train_samples && global > 0) {
    steps = (s_.train_samples->value + global - 1) / global;
    if (c_.InRange("training.steps", static_cast<double>(steps), *samples_key_)) {
      c_.Set("training.steps", YamlInt(steps), s_.train_samples->path + " / --global-batch-size");
    }
  }
  if (s_.decay_iters && s_.decay_iters->value != steps) {
    c_.spec().Note("training", s_.decay_iters->path + " = " + std::to_string(s_.decay_iters->value) +
                                   " not imported: accel decays over all steps after warmup");
  }
  if (!s_.warmup && s_.warmup_fraction && steps > 0) {
    const int64_t decay = s_.decay_iters ? s_.decay_iters->value : steps;
    c_.Set("training.lr_schedule.warmup_steps", YamlInt(std::llround(*s_.warmup_fraction * decay)),
           s_.warmup_fraction_path + " × " + (s_.decay_iters ? s_.decay_iters->path : "the steps"));
  } else if (!s_.warmup) {
    c_.Set("training.lr_schedule.warmup_steps", "0", "--lr-warmup-iters absent" + dflt);
  }
  if (!s_.style) c_.Set("training.lr_schedule.name", "linear", "--lr-decay-style absent" + dflt);
  const double min_lr = s_.min_lr.value_or(0.0);
  if (s_.lr && *s_.lr > 0 && min_lr <= *s_.lr) {
    c_.Set("training.lr_schedule.min_lr_ratio", YamlFloat(min_lr / *s_.lr),
           (s_.min_lr ? s_.min_lr_path : "--min-lr absent: 0") + " / --lr");
  }
  if (!c_.spec().Has("training.optimizer.name")) c_.Set("training.optimizer.name", "adamw", "--optimizer absent: adam with decoupled weight decay" + dflt);
  if (!s_.weight_decay) c_.Set("training.optimizer.weight_decay", "0.01", "--weight-decay absent" + dflt);
  if (!s_.beta2 && betas_path_.empty()) c_.Set("training.optimizer.betas", "[0.9, 0.999]", "--adam-beta1/2 absent" + dflt);
  if (!s_.eps) c_.Set("training.optimizer.eps", "1.0e-08", "--adam-eps absent" + dflt);
  if (!s_.clip) c_.Set("training.grad_clip_norm", "1.0", "--clip-grad absent" + dflt);
  if (!s_.seed) c_.Set("training.seed", "1234", "--seed absent" + dflt);
  if (!s_.log) c_.Set("training.log_every_steps", "100", "--log-interval absent" + dflt);
}

// Megatron's expert layout (RankGenerator): ep × etp × expert-dp × pp ranks, with etp = tp by
// default; accel carves ep out of the data-parallel × context ranks and splits every expert over
// tp, which is Megatron's layout when etp = tp.
void MegatronImporter::FinishLayout() {
  auto degree = [](const std::optional<Sourced>& v) { return v ? v->value : int64_t{1}; };
  const int64_t tp = degree(s_.tp), pp = degree(s_.pp), cp = degree(s_.cp), ep = degree(s_.ep);
  auto put = [this](const char* field, const std::optional<Sourced>& v, const char* flag) {
    c_.Set(field, v ? YamlInt(v->value) : "1", v ? v->path : std::string(flag) + " absent: 1");
  };
  put("parallel.tensor", s_.tp, "--tensor-model-parallel-size");
  put("parallel.pipeline", s_.pp, "--pipeline-model-parallel-size");
  put("parallel.context", s_.cp, "--context-parallel-size");
  if (s_.etp && s_.etp->value != tp) {
    return (void)c_.sink().Error(codes::kImportUnsupported, c_.file(), s_.etp->at, "",
                           "Megatron-LM key '" + s_.etp->path + "' = " + std::to_string(s_.etp->value) +
                               " cannot be expressed in accel: it differs from "
                               "--tensor-model-parallel-size " + std::to_string(tp) +
                               ", and accel splits every routed expert over the tensor-parallel ranks");
  }
  if (s_.etp) c_.Defaulted(s_.etp->path);
  // validate_args turns sequence parallelism off without tensor parallelism.
  if (!s_.sp_path.empty() && tp > 1) c_.Set("parallel.sequence_parallel", "true", s_.sp_path);
  if (!s_.sp_path.empty() && tp == 1) c_.Defaulted(s_.sp_path + " (off with tensor parallel size 1)");
  if (ep > 1) c_.Set("parallel.expert", YamlInt(ep), s_.ep->path);
  FinishPipeline(pp);
  if (c_.sink().HasErrors()) return;
  FinishSharding();
  if (c_.sink().HasErrors()) return;
  const int64_t world = FinishCluster(tp * pp * std::lcm(cp, ep));
  if (world > 0) FinishBatch(world / (tp * pp * cp), pp);
}

// Megatron's schedule: 1F1B without a virtual pipeline, interleaved 1F1B with one
// (--num-layers-per-virtual-pipeline-stage N gives each rank layers / (pp × N) chunks).
void MegatronImporter::FinishPipeline(int64_t pp) {
  int64_t virtual_stages = 1;
  std::string from;
  if (s_.vpp_layers) {
    const int64_t layers = s_.layers ? s_.layers->value : 0;
    const int64_t per_rank = pp * s_.vpp_layers->value;
    if (layers == 0 || layers % per_rank != 0) {
      return (void)c_.sink().Error(codes::kImportUnsupported, c_.file(), s_.vpp_layers->at, "",
                             "Megatron-LM key '" + s_.vpp_layers->path + "' = " + std::to_string(s_.vpp_layers->value) +
                                 " cannot be expressed in accel: --num-layers " + std::to_string(layers) +
                                 " is not a multiple of it × --pipeline-model-parallel-size " + std::to_string(pp));
    }
    virtual_stages = layers / per_rank;
    from = "--num-layers / (" + s_.vpp_layers->path + " × pp)";
  } else if (s_.vpp_size) {
    virtual_stages = s_.vpp_size->value;
    from = s_.vpp_size->path;
  }
  if (pp <= 1) return;
  if (virtual_stages > 1) {
    c_.Set("parallel.pipeline_schedule", "interleaved_1f1b", from + " (Megatron's interleaved schedule)");
    c_.Set("parallel.virtual_stages", YamlInt(virtual_stages), from);
  } else {
    c_.Set("parallel.pipeline_schedule", "1f1b", "Megatron-LM's pipeline schedule without a virtual pipeline");
  }
}

// --use-distributed-optimizer shards the optimizer states over the data-parallel ranks (ZeRO-1);
// Megatron FSDP and torch FSDP2 shard by --data-parallel-sharding-strategy (optim_grads_params,
// the default, is ZeRO-3); without them it is DDP.
void MegatronImporter::FinishSharding() {
  int64_t stage = 0;
  std::string from = "--use-distributed-optimizer absent: DDP";
  if (!s_.fsdp_path.empty()) {
    const std::vector<std::string> strategies = {"no_shard", "optim", "optim_grads", "optim_grads_params"};
    auto it = std::find(strategies.begin(), strategies.end(), s_.fsdp_strategy);
    if (it == strategies.end()) {
      return (void)c_.sink().Error(codes::kImportWrongType, c_.file(), at_[s_.fsdp_strategy_path], "",
                             "'" + s_.fsdp_strategy_path + "' must be no_shard, optim, optim_grads or optim_grads_params");
    }
    stage = it - strategies.begin();
    from = s_.fsdp_path + ", " + (s_.fsdp_strategy_path.empty() ? "--data-parallel-sharding-strategy absent: " : s_.fsdp_strategy_path + " ") + s_.fsdp_strategy;
  } else if (!s_.dist_opt_path.empty()) {
    stage = 1;
    from = s_.dist_opt_path + " (optimizer states sharded over data parallel: ZeRO-1)";
  } else if (!s_.fsdp_strategy_path.empty()) {
    c_.Defaulted(s_.fsdp_strategy_path + " (without FSDP)");
  }
  c_.Set("sharding.stage", YamlInt(stage), from);
  if (stage == 0) {
    c_.Set("parallel.data_replicate", "auto", from);
  } else {
    c_.Set("parallel.data_replicate", "1", from);
    c_.Set("parallel.data_shard", "auto", from);
  }
}

// The world is torchrun's --nproc_per_node × --nnodes. Without them (an arguments file) it is 8
// per node, as many nodes as the degrees need; with them, too few ranks for the degrees (the
// examples' default of one node for a 16-stage pipeline) grow the nodes with a warning. Returns
// the world size, 0 after an error.
int64_t MegatronImporter::FinishCluster(int64_t needed) {
  // torchrun's --nproc_per_node defaults to 1, as does a plain `python pretrain_gpt.py`.
  const int64_t nproc = s_.nproc ? s_.nproc->value : launched_ ? 1 : 8;
  int64_t nodes = s_.nnodes ? s_.nnodes->value : 1;
  if (nproc > 1024 || (nproc * nodes) % needed != 0) {
    if (needed % nproc != 0 || needed / nproc > 65536) {
      const SourceLocation at = s_.nproc ? s_.nproc->at : s_.tp ? s_.tp->at : SourceLocation{1, 1};
      c_.sink().Error(codes::kImportUnsupported, c_.file(), at, "",
                      "Megatron-LM key '--nproc_per_node' = " + std::to_string(nproc) +
                          " cannot be expressed in accel: the parallel degrees need a multiple of " +
                          std::to_string(needed) + " ranks, which do not split into nodes of " + std::to_string(nproc));
      return 0;
    }
    const int64_t grown = needed / nproc;
    if (s_.nnodes) {
      c_.sink().Warning(codes::kImportUnmappedKey, c_.file(), s_.nnodes->at, "",
                        "Megatron-LM key '" + s_.nnodes->path + "' = " + std::to_string(nodes) + " gives " +
                            std::to_string(nproc * nodes) + " ranks, fewer than the parallel degrees need (" +
                            std::to_string(needed) + "); not imported: the job has " + std::to_string(grown) + " nodes");
    }
    nodes = grown;
    c_.Set("cluster.nodes", YamlInt(nodes), "the product of the parallel degrees, " + std::to_string(nproc) + " per node");
  } else {
    c_.Set("cluster.nodes", YamlInt(nodes), s_.nnodes ? s_.nnodes->path : "--nnodes absent: 1");
  }
  c_.Set("cluster.devices_per_node", YamlInt(nproc),
         s_.nproc ? s_.nproc->path
                  : launched_ ? "--nproc_per_node absent: one process (torchrun's default)"
                              : "importer assumption: 8 GPUs per node (an arguments file gives no world size)");
  c_.Set("cluster.device", "cuda", "Megatron-LM trains on GPUs");
  return nproc * nodes;
}

// Megatron's microbatches per step are --global-batch-size / (--micro-batch-size × dp), which
// must divide (arguments.py); accel derives its accumulation steps the same way.
void MegatronImporter::FinishBatch(int64_t dp, int64_t pp) {
  const int64_t micro = s_.micro ? s_.micro->value : 1;
  if (s_.micro) c_.Set("data.micro_batch_size", YamlInt(micro), s_.micro->path);
  if (!s_.global) return;
  if (s_.global->value % (micro * dp) != 0) {
    return (void)c_.sink().Error(codes::kImportUnsupported, c_.file(), s_.global->at, "",
                           "Megatron-LM key '" + s_.global->path + "' = " + std::to_string(s_.global->value) +
                               " cannot be expressed in accel: it is not a multiple of --micro-batch-size " +
                               std::to_string(micro) + " × " + std::to_string(dp) + " data-parallel ranks");
  }
  c_.Set("data.global_batch_size", YamlInt(s_.global->value), s_.global->path);
  const int64_t microbatches = s_.global->value / (micro * dp);
  if (pp > 1 && microbatches < pp && c_.spec().Get("parallel.pipeline_schedule") == "1f1b") {
    // 1F1B with fewer microbatches than stages never reaches its steady state: it runs as GPipe.
    c_.Set("parallel.pipeline_schedule", "gpipe",
           "1F1B with " + std::to_string(microbatches) + " microbatches < " + std::to_string(pp) + " stages is GPipe");
  }
}

}  // namespace

void ImportMegatron(const YamlNode& root, ImportContext& context) { MegatronImporter(context).Run(root); }

}  // namespace accel::importers
