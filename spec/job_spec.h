#ifndef ACCEL_SPEC_JOB_SPEC_H_
#define ACCEL_SPEC_JOB_SPEC_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/source_location.h"
#include "spec/device_profile_file.h"

// The typed form of a job file. One struct per top-level YAML section; every field holds its
// final value after defaults, model config.json and --set overrides were applied. Where the
// schema allows `auto`, the field is an AutoOr<T> and the planner resolves it (recording why).
// Units are in the names: *_bytes are bytes, *_steps are optimizer steps, sizes of buckets
// are in elements (DeepSpeed's convention for reduce_bucket_size and friends).
namespace accel::spec {

// A value that may be the explicit word `auto` in the spec.
template <typename T>
struct AutoOr {
  bool is_auto = false;
  T value{};

  static AutoOr Auto() { return AutoOr{true, T{}}; }
  static AutoOr Of(T v) { return AutoOr{false, v}; }
  friend bool operator==(const AutoOr&, const AutoOr&) = default;
};

enum class Arch { kGpt2, kLlama };
enum class DataFormat { kText, kTokens };
enum class TokenDtype { kUint16, kUint32 };
enum class OptimizerName { kAdamW, kSgd };
enum class LrScheduleName { kConstant, kLinear, kCosine };
enum class DType { kFp32, kBf16, kFp16 };
enum class LossScaling { kNone, kDynamic, kStatic };
// In ir::PipelineSchedule order (planner/ir_enums.cc maps by position).
enum class PipelineSchedule { kGpipe, k1F1B, kInterleaved1F1B, kZbH1, kZbv };
enum class Recompute { kNone, kSelective, kOp, kFull };
enum class Offload { kNone, kOptimizer, kAll };
enum class DeviceType { kCpu, kCuda };
enum class ResumeMode { kAuto, kNever };
enum class RouterScoring { kSoftmax, kSigmoid };
enum class ContextMethod { kRing, kUlysses };

// `model.moe:` — mixture-of-experts MLPs in a llama-family model (Shazeer et al. 2017; Switch
// Transformer, Fedus et al. 2021; Mixtral, Jiang et al. 2024; docs/planner-facts.md §9). A block
// whose MLP is an MoE layer replaces the dense SwiGLU MLP with `num_experts` routed SwiGLU
// experts of width `expert_ffn_size`, of which each token uses `experts_per_token` (top-k) chosen
// by a router [num_experts, h], plus `num_shared_experts` shared SwiGLU experts every token uses.
// num_experts 0 (the default): a dense model; every other field is then ignored.
struct MoeSpec {
  int64_t num_experts = 0;             // E, routed experts per MoE layer
  int64_t experts_per_token = 0;       // k (top-k), routed experts per token; 1 <= k <= E
  int64_t expert_ffn_size = 0;         // fe, inner width of one routed expert
  int64_t num_shared_experts = 0;      // shared experts per MoE layer, every token goes through them
  int64_t shared_expert_ffn_size = 0;  // inner width of one shared expert
  bool shared_expert_gate = false;     // Qwen2-MoE: sigmoid(x·w) [1, h] scales the shared output
  RouterScoring router_scoring = RouterScoring::kSoftmax;
  bool norm_topk_prob = false;         // renormalize the top-k probabilities to sum to 1
  double router_aux_loss_coef = 0.0;   // load-balancing loss weight (Fedus et al. 2021 eq. 4)
  int64_t first_dense_layers = 0;      // DeepSeek first_k_dense_replace: blocks 0..n-1 are dense
  int64_t sparse_step = 1;             // Qwen decoder_sparse_step: block l is MoE when (l+1) % step == 0
  std::vector<int64_t> dense_layers;   // Qwen mlp_only_layers (config.json only): dense blocks
  // Per-expert token capacity as a multiple of the even share T·k/E (Fedus et al. 2021 §2.2);
  // tokens beyond it are dropped. 0: dropless routing (every token reaches its experts).
  double capacity_factor = 0.0;
};

// The llama-family block variants only a config.json states (OLMo 2, Gemma 2, Gemma 3 text; no
// spec field sets them): where the block's norms sit and the other departures from Llama's block.
// They mean what the ir::Model fields of the same names mean (ir/plan.proto).
enum class NormPlacement { kPre, kPost, kPreAndPost };
enum class MlpActivation { kSilu, kGeluTanh };
struct DecoderVariantSpec {
  NormPlacement norm_placement = NormPlacement::kPre;
  bool qk_norm_full_width = false;     // OLMo 2: q/k norms over the whole projection
  bool norm_unit_offset = false;       // Gemma: RMSNorm x̂·(1 + w), weights start at 0
  bool scale_embeddings = false;       // Gemma: embeddings × √hidden_size
  MlpActivation mlp_activation = MlpActivation::kSilu;
  double query_pre_attn_scalar = 0.0;  // scores × scalar^(-1/2); 0: head_dim
  double attn_logit_softcapping = 0.0;   // 0: none
  double final_logit_softcapping = 0.0;  // 0: none
  int64_t sliding_window = 0;          // positions a local block sees; 0: none
  // Block l attends locally iff (l + 1) % sliding_window_pattern != 0 (Gemma 2: 2, Gemma 3: 6;
  // transformers' layer_types); 0: no local blocks.
  int64_t sliding_window_pattern = 0;
  double rope_local_theta = 0.0;       // RoPE base of local blocks (Gemma 3); 0: rope_theta
};

// `model:` — the architecture and its dimensions. With `config:` the dimensions come from a
// Hugging Face config.json (path relative to the spec file); fields in the spec override it.
struct ModelSpec {
  std::string config;                 // path as written in the spec, "" when absent
  std::string init_from;              // Hugging Face weights, as written in the spec; "" for none
  std::string model_type;             // config.json model_type ("gpt2", "llama", "qwen2", ...)
  Arch arch = Arch::kGpt2;
  int64_t hidden_size = 0;            // h
  int64_t num_layers = 0;             // L, transformer blocks
  int64_t num_heads = 0;              // a, attention heads
  int64_t num_kv_heads = 0;           // grouped-query heads; defaults to num_heads
  int64_t head_dim = 0;               // d per attention head; 0: hidden_size / num_heads
  int64_t ffn_hidden_size = 0;        // MLP inner size; gpt2 default 4h
  int64_t vocab_size = 0;             // V, before any padding for tensor parallelism
  int64_t max_seq_len = 0;            // learned positions (gpt2) / RoPE context (llama)
  bool tie_word_embeddings = true;    // gpt2 default true, llama default false
  bool qkv_bias = false;              // llama-family q/k/v projection bias (qwen2: true)
  bool qk_norm = false;               // RMSNorm [head_dim] on each q and k head (Qwen3)
  double norm_eps = 1e-5;
  double rope_theta = 10000.0;
  MoeSpec moe;                        // num_experts 0: dense
  DecoderVariantSpec variant;         // config.json only (OLMo 2, Gemma)
};

// `data.train:` — where tokens come from.
struct DataSource {
  std::string path;                   // file or directory, relative to the spec file
  DataFormat format = DataFormat::kText;
  // format text: "bytes" (one token per byte) or the path of a Hugging Face tokenizer.json or
  // SentencePiece tokenizer.model, as written in the spec (relative to the spec file).
  std::string tokenizer = "bytes";
  TokenDtype dtype = TokenDtype::kUint16;  // only for format: tokens
};

// `data:` — sequence and batch sizes, in sequences (not tokens).
struct DataSpec {
  DataSource train;
  int64_t seq_len = 0;
  int64_t micro_batch_size = 0;                 // per rank, per micro-step
  AutoOr<int64_t> global_batch_size = AutoOr<int64_t>::Auto();
  AutoOr<int64_t> grad_accum_steps = AutoOr<int64_t>::Auto();
  bool shuffle = true;
};

struct OptimizerSpec {
  OptimizerName name = OptimizerName::kAdamW;
  double lr = 3e-4;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  double momentum = 0.0;              // sgd only
};

struct LrScheduleSpec {
  LrScheduleName name = LrScheduleName::kCosine;
  int64_t warmup_steps = 0;
  double min_lr_ratio = 0.1;          // final lr = lr * min_lr_ratio
};

// `training:` — the optimization loop.
struct TrainingSpec {
  int64_t steps = 0;
  OptimizerSpec optimizer;
  LrScheduleSpec lr_schedule;
  double grad_clip_norm = 1.0;        // 0 disables clipping
  int64_t seed = 1234;
  int64_t log_every_steps = 10;
  Recompute recompute = Recompute::kNone;
  int64_t sample_tokens = 0;          // tokens of generated text printed at the end
  // Token blocks of the chunked head + cross-entropy (ir::Training.loss_chunks).
  AutoOr<int64_t> loss_chunks = AutoOr<int64_t>::Auto();
};

// `precision:` — dtypes of stored parameters, of compute (autocast) and of gradient reduction.
struct PrecisionSpec {
  DType params = DType::kFp32;
  DType compute = DType::kFp32;
  DType reduce = DType::kFp32;
  LossScaling loss_scaling = LossScaling::kNone;
};

// `parallel:` — mesh degrees. At most one may be `auto` (it takes the leftover ranks).
struct ParallelSpec {
  AutoOr<int64_t> data_replicate = AutoOr<int64_t>::Auto();  // dp_replicate axis
  AutoOr<int64_t> data_shard = AutoOr<int64_t>::Of(1);       // dp_shard axis
  AutoOr<int64_t> context = AutoOr<int64_t>::Of(1);          // cp axis
  AutoOr<int64_t> tensor = AutoOr<int64_t>::Of(1);           // tp axis
  AutoOr<int64_t> pipeline = AutoOr<int64_t>::Of(1);         // pp axis
  bool sequence_parallel = false;
  // How attention spans the context-parallel ranks (cp > 1): ring attention or DeepSpeed-Ulysses
  // all-to-all (ir::ContextParallelMethod).
  ContextMethod context_method = ContextMethod::kRing;
  PipelineSchedule pipeline_schedule = PipelineSchedule::k1F1B;
  AutoOr<int64_t> pipeline_microbatches = AutoOr<int64_t>::Auto();
  // Model chunks per pipeline stage for interleaved_1f1b (Megatron-LM's
  // virtual_pipeline_model_parallel_size); auto: 2 with interleaved_1f1b, else 1.
  AutoOr<int64_t> virtual_stages = AutoOr<int64_t>::Auto();
  // Expert-parallel degree ep (mixture of experts): the routed experts are split over ep ranks
  // carved out of dp_shard × cp (torchtitan); auto: 1. Must be a multiple of cp and divide
  // dp_shard × cp and model.moe.num_experts.
  AutoOr<int64_t> expert = AutoOr<int64_t>::Of(1);
};

// `sharding:` — ZeRO stage over the dp_shard axis; FSDP names map onto it (docs/design.md).
struct ShardingSpec {
  int64_t stage = 0;                                               // 0..3
  bool hybrid = false;                                             // FSDP HYBRID_SHARD
  Offload offload = Offload::kNone;
  AutoOr<int64_t> bucket_size = AutoOr<int64_t>::Auto();           // elements
  AutoOr<int64_t> prefetch_bucket_size = AutoOr<int64_t>::Auto();  // elements
  AutoOr<int64_t> param_persistence_threshold = AutoOr<int64_t>::Auto();  // elements
};

// `checkpoint:` — where and how often; resume: auto picks the newest intact checkpoint.
struct CheckpointSpec {
  std::string dir;                    // relative to the working directory of `accel run`
  int64_t every_steps = 0;            // 0: only at the end
  bool at_end = true;                 // false: no checkpoint after the last step
  int64_t keep = 2;
  ResumeMode resume = ResumeMode::kAuto;
};

// `cluster:` — the machines the job runs on.
struct ClusterSpec {
  int64_t nodes = 1;
  int64_t devices_per_node = 1;
  DeviceType device = DeviceType::kCpu;
  std::string device_model;           // e.g. "h100-80gb"; used to resolve device_memory: auto
  AutoOr<int64_t> device_memory_bytes = AutoOr<int64_t>::Auto();
  AutoOr<int64_t> runtime_overhead_bytes = AutoOr<int64_t>::Auto();
  // Bound on every collective (start-up waits max(this, 5 min)): a rank whose peer died or
  // hangs (e.g. a stopped process) fails after this long instead of waiting forever.
  int64_t collective_timeout_seconds = 300;
  // The device profile the step-time estimate uses: a built-in name ("cpu", "a100", "h100",
  // "h200"), or a JSON file (spec/device_profile_file.h) relative to the spec's directory;
  // "" picks the built-in profile for `device` and `device_model`.
  std::string device_profile;
  // The file's numbers when device_profile names a file that was read without errors.
  std::optional<DeviceProfileValues> device_profile_values;
};

// Where a field's value came from, for diagnostics and for the plan's provenance.
enum class Origin { kDefault, kFile, kModelConfig, kOverride };

// Source of one field, keyed by its dotted path ("parallel.tensor", "training.optimizer.betas").
struct FieldSource {
  Origin origin = Origin::kDefault;
  std::string file;          // spec file, config.json path, or "--set key=value"
  SourceLocation key;        // location of the key (unknown for defaults and overrides)
  SourceLocation value;      // location of the value
  // The key as `file` spells it, when that is not the spec's key: for kModelConfig the
  // config.json key ("max_position_embeddings", "n_positions"); empty otherwise.
  std::string source_key;
};

// The whole job. `sources` has an entry for every field set by the file, a config.json or an
// override, and for every section mapping present (so "missing field" errors can point at it).
struct JobSpec {
  int64_t version = 1;
  std::string name;
  ModelSpec model;
  DataSpec data;
  TrainingSpec training;
  PrecisionSpec precision;
  ParallelSpec parallel;
  ShardingSpec sharding;
  CheckpointSpec checkpoint;
  ClusterSpec cluster;

  std::string file;                                // the spec path as given
  std::map<std::string, FieldSource> sources;      // dotted path -> where it came from
  std::vector<std::string> overrides;              // the --set arguments, in order

  // The source of `path`, or of its nearest ancestor present in the file (so a diagnostic about
  // a defaulted field points at its section), or a FieldSource for the file with no location.
  FieldSource Locate(const std::string& path) const;

  // nodes × devices_per_node.
  int64_t world_size() const { return cluster.nodes * cluster.devices_per_node; }
};

// Spellings used in YAML, the schema and the plan ("gpt2", "1f1b", "bf16", ...).
const char* Name(Arch v);
const char* Name(DataFormat v);
const char* Name(TokenDtype v);
const char* Name(OptimizerName v);
const char* Name(LrScheduleName v);
const char* Name(DType v);
const char* Name(LossScaling v);
const char* Name(PipelineSchedule v);
const char* Name(Recompute v);
const char* Name(Offload v);
const char* Name(DeviceType v);
const char* Name(ResumeMode v);
const char* Name(RouterScoring v);
const char* Name(ContextMethod v);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_JOB_SPEC_H_
