#include "spec/field_registry.h"

#include <map>

#include "spec/limits.h"

namespace accel::spec {
namespace {

using Store = void (*)(JobSpec&, const FieldValue&);

AutoOr<int64_t> AutoInt(const FieldValue& v) {
  return v.is_auto ? AutoOr<int64_t>::Auto() : AutoOr<int64_t>::Of(v.integer);
}

// Enum spellings are listed in the order of the C++ enumerators, so the index is the value.
template <typename E>
E EnumOf(const FieldValue& v) {
  return static_cast<E>(v.integer);
}

FieldInfo Make(std::string path, FieldKind kind, Store store) {
  FieldInfo f;
  size_t dot = path.rfind('.');
  f.parent = dot == std::string::npos ? "" : path.substr(0, dot);
  f.key = dot == std::string::npos ? path : path.substr(dot + 1);
  f.path = std::move(path);
  f.kind = kind;
  f.store = store;
  return f;
}

FieldInfo Section(std::string path, bool required = false) {
  FieldInfo f = Make(std::move(path), FieldKind::kSection, nullptr);
  f.required = required;
  return f;
}

FieldInfo Int(std::string path, int64_t minimum, Store store) {
  FieldInfo f = Make(std::move(path), FieldKind::kInteger, store);
  f.minimum = static_cast<double>(minimum);
  return f;
}

// An integer capped at one of the documented limits of spec/limits.h.
FieldInfo Int(std::string path, int64_t minimum, int64_t maximum, Store store) {
  FieldInfo f = Int(std::move(path), minimum, store);
  f.maximum = static_cast<double>(maximum);
  f.maximum_is_limit = true;
  return f;
}

FieldInfo AutoIntField(std::string path, int64_t minimum, int64_t maximum, Store store) {
  FieldInfo f = Int(std::move(path), minimum, maximum, store);
  f.allows_auto = true;
  return f;
}

FieldInfo Number(std::string path, Store store) {
  return Make(std::move(path), FieldKind::kNumber, store);
}

FieldInfo Bool(std::string path, Store store) {
  return Make(std::move(path), FieldKind::kBoolean, store);
}

FieldInfo String(std::string path, Store store) {
  FieldInfo f = Make(std::move(path), FieldKind::kString, store);
  f.non_empty = true;
  return f;
}

FieldInfo Enum(std::string path, std::vector<std::string> values, Store store) {
  FieldInfo f = Make(std::move(path), FieldKind::kEnum, store);
  f.enum_values = std::move(values);
  return f;
}

// A byte size capped at kMaxDeviceMemoryBytes (spec/limits.h).
FieldInfo Size(std::string path, int64_t minimum, Store store) {
  FieldInfo f = Make(std::move(path), FieldKind::kSize, store);
  f.minimum = static_cast<double>(minimum);
  f.maximum = static_cast<double>(kMaxDeviceMemoryBytes);
  f.maximum_is_limit = true;
  f.allows_auto = true;
  return f;
}

FieldInfo Required(FieldInfo f) {
  f.required = true;
  return f;
}

FieldInfo Range(FieldInfo f, std::optional<double> minimum, bool exclusive_minimum,
                std::optional<double> maximum, bool exclusive_maximum) {
  f.minimum = minimum;
  f.exclusive_minimum = exclusive_minimum;
  f.maximum = maximum;
  f.exclusive_maximum = exclusive_maximum;
  return f;
}

// A field just appended to the table, for setting its documentation in place:
//   Add(f, Int(...)).Doc("...").Default("1234");
struct Entry {
  FieldInfo& field;

  Entry Doc(std::string description) {
    field.description = std::move(description);
    return *this;
  }
  Entry Default(std::string json) {
    field.default_json = std::move(json);
    return *this;
  }
  Entry RequiredUnless(std::string sibling) {
    field.required_unless = std::move(sibling);
    return *this;
  }
  Entry RequiredIf(std::string sibling, std::string value) {
    field.required_if_key = std::move(sibling);
    field.required_if_value = std::move(value);
    return *this;
  }
};

Entry Add(std::vector<FieldInfo>& fields, FieldInfo field) {
  fields.push_back(std::move(field));
  return Entry{fields.back()};
}

const std::vector<std::string> kDTypes = {"fp32", "bf16", "fp16"};

// Every key of the job file. The order is the documentation's: the reference page, the schema's
// properties and ChildKeys() (and so "valid keys" notes) follow it. See field_registry.h for
// how to add a field.
std::vector<FieldInfo> BuildFields() {
  std::vector<FieldInfo> f;
  Add(f, Required(Range(Int("version", 1, +[](JobSpec& s, const FieldValue& v) {
                              s.version = v.integer;
                            }),
                        1, false, 1, false)))
      .Doc("Version of the job file format. Always 1.");
  FieldInfo name = Required(String("name", +[](JobSpec& s, const FieldValue& v) { s.name = v.text; }));
  name.pattern = "^[A-Za-z0-9][A-Za-z0-9._-]*$";
  name.max_bytes = kMaxNameBytes;
  name.matches = +[](std::string_view text) {
    auto alnum = [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    if (text.empty() || !alnum(text.front())) return false;
    for (char c : text) {
      if (!alnum(c) && c != '.' && c != '_' && c != '-') return false;
    }
    return true;
  };
  Add(f, name)
      .Doc("Name of the job, used in logs and the default checkpoint directory (runs/<name>/ckpt). "
           "Letters, digits, '.', '_' and '-', starting with a letter or digit; at most 200 "
           "bytes.");

  Add(f, Section("model", true))
      .Doc("The model to train: a decoder-only transformer. Give `arch` and the dimensions, or "
           "`config:` with a Hugging Face config.json that provides them; keys written here take "
           "precedence over the config file.");
  Add(f, String("model.config", +[](JobSpec& s, const FieldValue& v) { s.model.config = v.text; }))
      .Doc("Path to a Hugging Face `config.json`, relative to this spec file. Supported "
           "`model_type`s: gpt2, llama, mistral, qwen2, qwen3, phi3, olmo2, gemma2, gemma3_text, "
           "and the mixture-of-experts mixtral, qwen2_moe and qwen3_moe (all but gpt2 build the "
           "llama architecture; the last three fill model.moe; olmo2's and gemma's norms, "
           "activations, soft caps and sliding windows come from the file only). The file "
           "supplies arch and every dimension; any key set here overrides it.");
  Add(f, String("model.init_from",
                +[](JobSpec& s, const FieldValue& v) { s.model.init_from = v.text; }))
      .Doc("Start from Hugging Face weights: a .safetensors file, or a directory holding "
           "model.safetensors or model.safetensors.index.json (relative to this file). Names and "
           "shapes are checked against the plan before launch; a resumed checkpoint takes "
           "precedence.");
  Add(f, Enum("model.arch", {"gpt2", "llama"},
              +[](JobSpec& s, const FieldValue& v) { s.model.arch = EnumOf<Arch>(v); }))
      .Doc("Architecture. `gpt2`: learned positions, LayerNorm, GELU MLP, tied output head "
           "(Radford et al. 2019). `llama`: rotary positions, RMSNorm, SwiGLU MLP, grouped-query "
           "attention, untied head (Touvron et al. 2023). Required unless `config` is given.")
      .RequiredUnless("config");
  Add(f, Int("model.hidden_size", 1, kMaxHiddenSize,
             +[](JobSpec& s, const FieldValue& v) { s.model.hidden_size = v.integer; }))
      .Doc("Model width h: the size of token embeddings and of the residual stream. Required "
           "unless `config` is given.")
      .RequiredUnless("config");
  Add(f, Int("model.num_layers", 1, kMaxNumLayers,
             +[](JobSpec& s, const FieldValue& v) { s.model.num_layers = v.integer; }))
      .Doc("Number of transformer blocks L. Must be at least the pipeline degree. Required unless "
           "`config` is given.")
      .RequiredUnless("config");
  Add(f, Int("model.num_heads", 1, kMaxNumHeads,
             +[](JobSpec& s, const FieldValue& v) { s.model.num_heads = v.integer; }))
      .Doc("Number of attention (query) heads; must divide hidden_size and be divisible by the "
           "tensor-parallel degree. Required unless `config` is given.")
      .RequiredUnless("config");
  Add(f, Int("model.num_kv_heads", 1, kMaxNumHeads,
             +[](JobSpec& s, const FieldValue& v) { s.model.num_kv_heads = v.integer; }))
      .Doc("Number of key/value heads for grouped-query attention; must divide num_heads. Defaults "
           "to num_heads (plain multi-head attention); gpt2 requires num_heads.");
  Add(f, Int("model.head_dim", 1, kMaxHiddenSize,
             +[](JobSpec& s, const FieldValue& v) { s.model.head_dim = v.integer; }))
      .Doc("Width of one attention head (llama only; Hugging Face `head_dim`). Defaults to "
           "hidden_size / num_heads; Qwen3 models set it larger.");
  Add(f, Int("model.ffn_hidden_size", 1, kMaxFfnHiddenSize,
             +[](JobSpec& s, const FieldValue& v) { s.model.ffn_hidden_size = v.integer; }))
      .Doc("Inner width of the MLP. gpt2 defaults to 4 x hidden_size; llama has no default and "
           "needs it (Hugging Face `intermediate_size`).")
      .RequiredIf("arch", "llama")
      .RequiredUnless("config");
  Add(f, Int("model.vocab_size", 1, kMaxVocabSize,
             +[](JobSpec& s, const FieldValue& v) { s.model.vocab_size = v.integer; }))
      .Doc("Vocabulary size V, before padding for tensor parallelism. The byte tokenizer needs "
           "256. Required unless `config` is given.")
      .RequiredUnless("config");
  Add(f, Int("model.max_seq_len", 1, kMaxSeqLen,
             +[](JobSpec& s, const FieldValue& v) { s.model.max_seq_len = v.integer; }))
      .Doc("Longest sequence the model accepts, in tokens: the learned position table of gpt2 or "
           "the rotary cache of llama. data.seq_len may not exceed it. Required unless `config` is "
           "given.")
      .RequiredUnless("config");
  Add(f, Bool("model.tie_word_embeddings", +[](JobSpec& s, const FieldValue& v) {
        s.model.tie_word_embeddings = v.boolean;
      }))
      .Doc("Whether the output head reuses the token embedding matrix. Defaults to true for gpt2 "
           "and false for llama.");
  Add(f, Bool("model.qkv_bias",
              +[](JobSpec& s, const FieldValue& v) { s.model.qkv_bias = v.boolean; }))
      .Doc("Whether the llama q/k/v projections have a bias (Qwen2 does). Defaults to false.")
      .Default("false");
  Add(f, Bool("model.qk_norm",
              +[](JobSpec& s, const FieldValue& v) { s.model.qk_norm = v.boolean; }))
      .Doc("Whether each query and key head passes an RMSNorm of head_dim weights before rotary "
           "(Qwen3). Defaults to false.")
      .Default("false");
  Add(f, Range(Number("model.norm_eps",
                      +[](JobSpec& s, const FieldValue& v) { s.model.norm_eps = v.number; }),
               0, true, std::nullopt, false))
      .Doc("Epsilon of LayerNorm (gpt2) or RMSNorm (llama).")
      .Default("1e-05");
  Add(f, Range(Number("model.rope_theta",
                      +[](JobSpec& s, const FieldValue& v) { s.model.rope_theta = v.number; }),
               0, true, std::nullopt, false))
      .Doc("Base of the rotary position embedding frequencies (llama only).")
      .Default("10000.0");

  Add(f, Section("model.moe"))
      .Doc("Mixture-of-experts MLPs (llama only; Shazeer et al. 2017, Fedus et al. 2021, Jiang et "
           "al. 2024): in each MoE block a router picks `experts_per_token` of `num_experts` "
           "routed SwiGLU experts per token and sums their outputs weighted by its "
           "probabilities; shared experts see every token. A config.json of model_type mixtral, "
           "qwen2_moe or qwen3_moe fills this section; keys written here override it.");
  Add(f, Int("model.moe.num_experts", 1, kMaxNumExperts,
             +[](JobSpec& s, const FieldValue& v) { s.model.moe.num_experts = v.integer; }))
      .Doc("Routed experts per MoE layer, E (Hugging Face `num_local_experts`, `num_experts`, "
           "`n_routed_experts`). Needs experts_per_token and expert_ffn_size.");
  Add(f, Int("model.moe.experts_per_token", 1, kMaxNumExperts,
             +[](JobSpec& s, const FieldValue& v) { s.model.moe.experts_per_token = v.integer; }))
      .Doc("Routed experts each token uses, k of the top-k router (`num_experts_per_tok`). At "
           "most num_experts.");
  Add(f, Int("model.moe.expert_ffn_size", 1, kMaxFfnHiddenSize,
             +[](JobSpec& s, const FieldValue& v) { s.model.moe.expert_ffn_size = v.integer; }))
      .Doc("Inner width of one routed expert's SwiGLU (`moe_intermediate_size`; Mixtral's "
           "`intermediate_size`). Divisible by the tensor-parallel degree.");
  Add(f, Int("model.moe.num_shared_experts", 0, kMaxNumExperts,
             +[](JobSpec& s, const FieldValue& v) { s.model.moe.num_shared_experts = v.integer; }))
      .Doc("Shared experts per MoE layer, which every token goes through (DeepSeek "
           "`n_shared_experts`; Qwen2-MoE has one). Needs shared_expert_ffn_size.")
      .Default("0");
  Add(f, Int("model.moe.shared_expert_ffn_size", 1, kMaxFfnHiddenSize,
             +[](JobSpec& s, const FieldValue& v) {
               s.model.moe.shared_expert_ffn_size = v.integer;
             }))
      .Doc("Inner width of one shared expert's SwiGLU (Qwen2-MoE "
           "`shared_expert_intermediate_size`).");
  Add(f, Bool("model.moe.shared_expert_gate",
              +[](JobSpec& s, const FieldValue& v) { s.model.moe.shared_expert_gate = v.boolean; }))
      .Doc("Whether a sigmoid gate sigmoid(x w), w [1, hidden_size], scales the shared experts' "
           "output (Qwen2-MoE).")
      .Default("false");
  Add(f, Enum("model.moe.router_scoring", {"softmax", "sigmoid"},
              +[](JobSpec& s, const FieldValue& v) {
                s.model.moe.router_scoring = EnumOf<RouterScoring>(v);
              }))
      .Doc("How router logits become expert scores: `softmax` over the experts (Mixtral, Qwen) or "
           "an independent `sigmoid` per expert (DeepSeek-V3).")
      .Default(R"("softmax")");
  Add(f, Bool("model.moe.norm_topk_prob",
              +[](JobSpec& s, const FieldValue& v) { s.model.moe.norm_topk_prob = v.boolean; }))
      .Doc("Renormalize each token's top-k probabilities to sum to 1 (Mixtral always does; "
           "Qwen's `norm_topk_prob`).")
      .Default("false");
  Add(f, Range(Number("model.moe.router_aux_loss_coef",
                      +[](JobSpec& s, const FieldValue& v) {
                        s.model.moe.router_aux_loss_coef = v.number;
                      }),
               0, false, std::nullopt, false))
      .Doc("Weight of the load-balancing loss N sum_i f_i P_i (Fedus et al. 2021, eq. 4).")
      .Default("0.0");
  Add(f, Int("model.moe.first_dense_layers", 0, kMaxNumLayers,
             +[](JobSpec& s, const FieldValue& v) { s.model.moe.first_dense_layers = v.integer; }))
      .Doc("The first this many blocks keep a dense MLP of ffn_hidden_size (DeepSeek "
           "`first_k_dense_replace`).")
      .Default("0");
  Add(f, Int("model.moe.sparse_step", 1, kMaxNumLayers,
             +[](JobSpec& s, const FieldValue& v) { s.model.moe.sparse_step = v.integer; }))
      .Doc("Block l (from 0) is an MoE block when (l + 1) is a multiple of this (Qwen "
           "`decoder_sparse_step`); the others are dense. A config.json's `mlp_only_layers` "
           "also makes the blocks it lists dense.")
      .Default("1");
  Add(f, Range(Number("model.moe.capacity_factor",
                      +[](JobSpec& s, const FieldValue& v) { s.model.moe.capacity_factor = v.number; }),
               0, false, std::nullopt, false))
      .Doc("Tokens an expert takes per step, as a multiple of its even share T x k / E (Fedus et "
           "al. 2021 section 2.2); tokens beyond it are dropped. 0: dropless routing, which the "
           "memory estimate plans with a stated imbalance margin of 1.25 (docs/planner-facts.md "
           "section 9). Otherwise at least 1.")
      .Default("0.0");

  Add(f, Section("data", true))
      .Doc("Training data and batch sizes. Batch sizes count sequences, not tokens. The global "
           "batch is micro_batch_size x data-parallel size x grad_accum_steps; give any two of "
           "global_batch_size and grad_accum_steps as numbers or leave them `auto` and the planner "
           "derives them.");
  Add(f, Section("data.train", true))
      .Doc("Where the training tokens come from.");
  Add(f, Required(String("data.train.path",
                         +[](JobSpec& s, const FieldValue& v) { s.data.train.path = v.text; })))
      .Doc("File or directory with the training data, relative to this spec file.");
  Add(f, Enum("data.train.format", {"text", "tokens"}, +[](JobSpec& s, const FieldValue& v) {
        s.data.train.format = EnumOf<DataFormat>(v);
      }))
      .Doc("`text`: UTF-8 text tokenized on the fly. `tokens`: a flat binary file of token ids "
           "(see dtype).")
      .Default(R"("text")");
  Add(f, String("data.train.tokenizer",
                +[](JobSpec& s, const FieldValue& v) { s.data.train.tokenizer = v.text; }))
      .Doc("Tokenizer for `format: text`, applied on the fly when the run starts. `bytes`: each "
           "byte is one token (vocab_size 256). Otherwise the path (relative to this file) of a "
           "Hugging Face `tokenizer.json` (byte-level BPE: GPT-2, Llama-3, Qwen2/Qwen3) or a "
           "SentencePiece `tokenizer.model` (Llama-2, Mistral); BOS/EOS as the file defines them "
           "go around each text file, and model.vocab_size must hold every id of the tokenizer, "
           "added and special tokens included.")
      .Default(R"("bytes")");
  Add(f, Enum("data.train.dtype", {"uint16", "uint32"}, +[](JobSpec& s, const FieldValue& v) {
        s.data.train.dtype = EnumOf<TokenDtype>(v);
      }))
      .Doc("Integer type of the token ids in a `format: tokens` file, little-endian.")
      .Default(R"("uint16")");
  Add(f, Required(Int("data.seq_len", 1, kMaxSeqLen,
                      +[](JobSpec& s, const FieldValue& v) { s.data.seq_len = v.integer; })))
      .Doc("Tokens per training sequence. At most model.max_seq_len.");
  Add(f, Required(Int("data.micro_batch_size", 1, kMaxMicroBatchSize,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.data.micro_batch_size = v.integer;
                      })))
      .Doc("Sequences per rank in one forward/backward pass (one micro-step).");
  Add(f, AutoIntField("data.global_batch_size", 1, kMaxGlobalBatchSize,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.data.global_batch_size = AutoInt(v);
                      }))
      .Doc("Sequences per optimizer step across all ranks. `auto`: micro_batch_size x "
           "data-parallel size x grad_accum_steps. global_batch_size x seq_len, the tokens of one "
           "step, may be at most 2^32.")
      .Default(R"("auto")");
  Add(f, AutoIntField("data.grad_accum_steps", 1, kMaxMicrobatches,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.data.grad_accum_steps = AutoInt(v);
                      }))
      .Doc("Micro-steps accumulated before each optimizer step (with pipelining: the pipeline "
           "microbatches). `auto`: global_batch_size / (micro_batch_size x data-parallel size), or "
           "1 when the global batch is `auto` too.")
      .Default(R"("auto")");
  Add(f, Bool("data.shuffle", +[](JobSpec& s, const FieldValue& v) { s.data.shuffle = v.boolean; }))
      .Doc("Whether training sequences are visited in a seeded random order.")
      .Default("true");

  Add(f, Section("training", true))
      .Doc("The optimization loop: steps, optimizer, learning-rate schedule and related settings.");
  Add(f, Required(Int("training.steps", 1, kMaxTrainingSteps,
                      +[](JobSpec& s, const FieldValue& v) { s.training.steps = v.integer; })))
      .Doc("Number of optimizer steps to train for.");
  Add(f, Section("training.optimizer"))
      .Doc("The optimizer and its hyperparameters.");
  Add(f, Enum("training.optimizer.name", {"adamw", "sgd"}, +[](JobSpec& s, const FieldValue& v) {
        s.training.optimizer.name = EnumOf<OptimizerName>(v);
      }))
      .Doc("`adamw`: Adam with decoupled weight decay (Loshchilov & Hutter 2019). `sgd`: "
           "stochastic gradient descent with optional momentum.")
      .Default(R"("adamw")");
  Add(f, Range(Number("training.optimizer.lr",
                      +[](JobSpec& s, const FieldValue& v) { s.training.optimizer.lr = v.number; }),
               0, true, std::nullopt, false))
      .Doc("Peak learning rate, reached after warmup.")
      .Default("0.0003");
  Add(f, Range(Make("training.optimizer.betas", FieldKind::kNumberPair,
                    +[](JobSpec& s, const FieldValue& v) {
                      if (v.index <= 0) s.training.optimizer.beta1 = v.index == 0 ? v.number : v.pair[0];
                      if (v.index != 0) s.training.optimizer.beta2 = v.index == 1 ? v.number : v.pair[1];
                    }),
               0, false, 1, true))
      .Doc("AdamW's beta1 and beta2, the decay rates of the first and second moment estimates, as "
           "a list of two numbers in [0, 1).")
      .Default("[0.9, 0.95]");
  Add(f, Range(Number("training.optimizer.eps", +[](JobSpec& s, const FieldValue& v) {
                 s.training.optimizer.eps = v.number;
               }),
               0, true, std::nullopt, false))
      .Doc("AdamW's epsilon, added to the denominator for numerical stability.")
      .Default("1e-08");
  Add(f, Range(Number("training.optimizer.weight_decay", +[](JobSpec& s, const FieldValue& v) {
                 s.training.optimizer.weight_decay = v.number;
               }),
               0, false, std::nullopt, false))
      .Doc("Decoupled weight decay coefficient (0 disables it).")
      .Default("0.1");
  Add(f, Range(Number("training.optimizer.momentum", +[](JobSpec& s, const FieldValue& v) {
                 s.training.optimizer.momentum = v.number;
               }),
               0, false, 1, true))
      .Doc("SGD momentum, in [0, 1); ignored by adamw.")
      .Default("0.0");
  Add(f, Section("training.lr_schedule"))
      .Doc("How the learning rate changes over the steps.");
  Add(f, Enum("training.lr_schedule.name", {"constant", "linear", "cosine"},
              +[](JobSpec& s, const FieldValue& v) {
                s.training.lr_schedule.name = EnumOf<LrScheduleName>(v);
              }))
      .Doc("Shape after warmup: `constant`, `linear` decay, or `cosine` decay (Loshchilov & Hutter "
           "2017) down to lr x min_lr_ratio.")
      .Default(R"("cosine")");
  Add(f, Int("training.lr_schedule.warmup_steps", 0, kMaxTrainingSteps,
             +[](JobSpec& s, const FieldValue& v) {
               s.training.lr_schedule.warmup_steps = v.integer;
             }))
      .Doc("Steps of linear warmup from 0 to the peak learning rate.")
      .Default("0");
  Add(f, Range(Number("training.lr_schedule.min_lr_ratio", +[](JobSpec& s, const FieldValue& v) {
                 s.training.lr_schedule.min_lr_ratio = v.number;
               }),
               0, false, 1, false))
      .Doc("Final learning rate as a fraction of the peak, for linear and cosine decay.")
      .Default("0.1");
  Add(f, Range(Number("training.grad_clip_norm", +[](JobSpec& s, const FieldValue& v) {
                 s.training.grad_clip_norm = v.number;
               }),
               0, false, std::nullopt, false))
      .Doc("Clip the global gradient norm to this value; 0 disables clipping.")
      .Default("1.0");
  Add(f, Int("training.seed", 0,
             +[](JobSpec& s, const FieldValue& v) { s.training.seed = v.integer; }))
      .Doc("Seed for parameter initialization and data order; the same seed gives the same run.")
      .Default("1234");
  Add(f, Int("training.log_every_steps", 1, kMaxTrainingSteps,
             +[](JobSpec& s, const FieldValue& v) { s.training.log_every_steps = v.integer; }))
      .Doc("Print loss, learning rate and throughput every this many steps.")
      .Default("10");
  Add(f, Enum("training.recompute", {"none", "selective", "op", "full"},
              +[](JobSpec& s, const FieldValue& v) {
                s.training.recompute = EnumOf<Recompute>(v);
              }))
      .Doc("Activation recomputation. `none` keeps all activations; `selective` recomputes the "
           "attention core (Korthikanti et al. 2022); `op` recomputes each block but keeps the "
           "outputs of every other matrix multiply and of attention (torchtitan's per-op "
           "selective checkpointing); `full` keeps only each block's input and recomputes the "
           "rest in backward.")
      .Default(R"("none")");
  Add(f, AutoIntField("training.loss_chunks", 1, kMaxLossChunks,
                      +[](JobSpec& s, const FieldValue& v) { s.training.loss_chunks = AutoInt(v); }))
      .Doc("Blocks of tokens in which the output head and the cross-entropy run, so that the "
           "vocabulary-sized logits are never held whole: each block's logits are computed, "
           "reduced to the loss and dropped, and recomputed in backward (one more head matmul per "
           "step). More blocks hold less at once. `auto`: ceil(vocabulary rows per rank / "
           "hidden_size), so that one block's logits are about the size of the hidden states "
           "(Liger-Kernel's rule, Hsu et al. 2024); at most the tokens of a micro batch.")
      .Default(R"("auto")");
  Add(f, Int("training.sample_tokens", 0, kMaxSampleTokens,
             +[](JobSpec& s, const FieldValue& v) { s.training.sample_tokens = v.integer; }))
      .Doc("Tokens of text to generate from the trained model at the end of the run, as a sanity "
           "check, printed decoded with the job's tokenizer (data.train.tokenizer: bytes, a "
           "tokenizer.json or a SentencePiece model) and starting from its BOS token (a newline "
           "where it has none); 0 disables it.")
      .Default("0");

  Add(f, Section("precision"))
      .Doc("Numeric formats. Mixed precision keeps fp32 parameters and computes in bf16 or fp16.");
  Add(f, Enum("precision.params", kDTypes,
              +[](JobSpec& s, const FieldValue& v) { s.precision.params = EnumOf<DType>(v); }))
      .Doc("Data type of the stored parameters (and of the optimizer's master copy when fp32).")
      .Default(R"("fp32")");
  Add(f, Enum("precision.compute", kDTypes,
              +[](JobSpec& s, const FieldValue& v) { s.precision.compute = EnumOf<DType>(v); }))
      .Doc("Data type of forward and backward computation (autocast).")
      .Default(R"("fp32")");
  Add(f, Enum("precision.reduce", kDTypes,
              +[](JobSpec& s, const FieldValue& v) { s.precision.reduce = EnumOf<DType>(v); }))
      .Doc("Data type in which gradients are reduced across data-parallel ranks.")
      .Default(R"("fp32")");
  Add(f, Enum("precision.loss_scaling", {"none", "dynamic", "static"},
              +[](JobSpec& s, const FieldValue& v) {
                s.precision.loss_scaling = EnumOf<LossScaling>(v);
              }))
      .Doc("Loss scaling for fp16 compute: `dynamic` adjusts the scale when gradients overflow, "
           "`static` uses a fixed scale, `none` disables it (right for bf16 and fp32).")
      .Default(R"("none")");

  Add(f, Section("parallel"))
      .Doc("Degrees of the device mesh, outermost to innermost: pipeline, data_replicate, "
           "data_shard, context, tensor. Their product must equal cluster.nodes x "
           "cluster.devices_per_node; at most one degree may be `auto`, and it takes the ranks "
           "left over.");
  Add(f, AutoIntField("parallel.data_replicate", 1, kMaxParallelDegree,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.parallel.data_replicate = AutoInt(v);
                      }))
      .Doc("Data-parallel replicas (the dp_replicate mesh axis): each holds a full copy of the "
           "sharded model state and sees different data.")
      .Default(R"("auto")");
  Add(f, AutoIntField("parallel.data_shard", 1, kMaxParallelDegree,
                      +[](JobSpec& s, const FieldValue& v) { s.parallel.data_shard = AutoInt(v); }))
      .Doc("Data-parallel ranks that shard model state among themselves (the dp_shard axis), as "
           "set by sharding.stage (ZeRO / FSDP).")
      .Default("1");
  Add(f, AutoIntField("parallel.context", 1, kMaxParallelDegree,
                      +[](JobSpec& s, const FieldValue& v) { s.parallel.context = AutoInt(v); }))
      .Doc("Context-parallel degree (the cp axis): each sequence is split across this many ranks.")
      .Default("1");
  Add(f, AutoIntField("parallel.tensor", 1, kMaxParallelDegree,
                      +[](JobSpec& s, const FieldValue& v) { s.parallel.tensor = AutoInt(v); }))
      .Doc("Tensor-parallel degree (the tp axis, innermost so it stays inside a node; Shoeybi et "
           "al. 2019). Must divide num_heads and num_kv_heads.")
      .Default("1");
  Add(f, AutoIntField("parallel.pipeline", 1, kMaxParallelDegree,
                      +[](JobSpec& s, const FieldValue& v) { s.parallel.pipeline = AutoInt(v); }))
      .Doc("Pipeline-parallel degree (the pp axis): the layers are split into this many stages. At "
           "most model.num_layers.")
      .Default("1");
  Add(f, Bool("parallel.sequence_parallel", +[](JobSpec& s, const FieldValue& v) {
        s.parallel.sequence_parallel = v.boolean;
      }))
      .Doc("Shard LayerNorm and dropout activations along the sequence across the tensor-parallel "
           "group (Korthikanti et al. 2022). Needs tensor > 1.")
      .Default("false");
  Add(f, Enum("parallel.context_method", {"ring", "ulysses"},
              +[](JobSpec& s, const FieldValue& v) { s.parallel.context_method = EnumOf<ContextMethod>(v); }))
      .Doc("How attention spans the context-parallel ranks when context > 1: `ring` passes keys "
           "and values around the cp ranks and merges partial attentions by their log-sum-exps "
           "(ring attention, Liu et al. 2023; seq_len divisible by 2 x context); `ulysses` "
           "exchanges sequence shards for head shards by all-to-all around attention "
           "(DeepSpeed-Ulysses, Jacobs et al. 2023; heads per tensor rank divisible by context).")
      .Default(R"("ring")");
  Add(f, Enum("parallel.pipeline_schedule", {"gpipe", "1f1b", "interleaved_1f1b", "zb_h1", "zbv"},
              +[](JobSpec& s, const FieldValue& v) {
                s.parallel.pipeline_schedule = EnumOf<PipelineSchedule>(v);
              }))
      .Doc("Pipeline schedule: `gpipe` runs all forwards then all backwards (Huang et al. 2019); "
           "`1f1b` interleaves them to keep fewer microbatches in memory (Narayanan et al. 2021); "
           "`interleaved_1f1b` gives each stage `virtual_stages` model chunks and cuts the bubble "
           "by about that factor, for more point-to-point messages (Narayanan et al. 2021; "
           "Megatron-LM's virtual pipeline). `zb_h1` and `zbv` split each backward into its "
           "input and weight gradients and run the weight gradients in the bubbles (Qi et al. "
           "2023, Zero Bubble Pipeline Parallelism): `zb_h1` is 1f1b with the weight gradients "
           "delayed (about a third of its bubble), `zbv` runs 2 model chunks per stage in a V "
           "(down the stages and back; needs num_layers of at least 2 x pipeline). Both keep "
           "each delayed weight gradient's linear inputs and output gradients in memory and "
           "need at least as many microbatches as pipeline stages.")
      .Default(R"("1f1b")");
  Add(f, AutoIntField("parallel.pipeline_microbatches", 1, kMaxMicrobatches,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.parallel.pipeline_microbatches = AutoInt(v);
                      }))
      .Doc("Microbatches per optimizer step when pipelining; at least the pipeline degree keeps "
           "the bubble small. `auto` follows data.grad_accum_steps. Pipeline stages x microbatches "
           "may be at most 65536 (the schedule's slots).")
      .Default(R"("auto")");
  Add(f, AutoIntField("parallel.virtual_stages", 1, kMaxNumLayers,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.parallel.virtual_stages = AutoInt(v);
                      }))
      .Doc("Model chunks per pipeline stage with `pipeline_schedule: interleaved_1f1b` "
           "(Megatron-LM's virtual_pipeline_model_parallel_size): at least 2, pipeline x "
           "virtual_stages at most num_layers, and the microbatches a multiple of pipeline. "
           "`zbv` runs exactly 2. `auto`: 2 with interleaved_1f1b and zbv, else 1.")
      .Default(R"("auto")");
  Add(f, AutoIntField("parallel.expert", 1, kMaxParallelDegree,
                      +[](JobSpec& s, const FieldValue& v) { s.parallel.expert = AutoInt(v); }))
      .Doc("Expert-parallel degree ep (mixture-of-experts models): each MoE layer's routed "
           "experts are split over ep ranks carved out of data_shard x context (torchtitan), "
           "tokens reach them by all-to-all, and each expert's state is sharded by "
           "sharding.stage over the data_shard x context / ep ranks that hold the same experts. "
           "Must be a multiple of context and divide data_shard x context and "
           "model.moe.num_experts; 1 for dense models. `auto`: 1.")
      .Default("1");

  Add(f, Section("sharding"))
      .Doc("Sharding of model state over the data_shard axis, by ZeRO stage (Rajbhandari et al. "
           "2019). FSDP names map onto it: NO_SHARD = 0, SHARD_GRAD_OP = 2, FULL_SHARD = 3, "
           "HYBRID_SHARD = 3 with hybrid: true.");
  Add(f, Range(Int("sharding.stage", 0,
                   +[](JobSpec& s, const FieldValue& v) { s.sharding.stage = v.integer; }),
               0, false, 3, false))
      .Doc("0: nothing sharded. 1: optimizer states. 2: optimizer states and gradients. 3: "
           "optimizer states, gradients and parameters.")
      .Default("0");
  Add(f, Bool("sharding.hybrid",
              +[](JobSpec& s, const FieldValue& v) { s.sharding.hybrid = v.boolean; }))
      .Doc("Shard within data_shard groups and replicate across data_replicate (FSDP "
           "HYBRID_SHARD). Needs stage 3 and data_replicate > 1.")
      .Default("false");
  Add(f, Enum("sharding.offload", {"none", "optimizer", "all"},
              +[](JobSpec& s, const FieldValue& v) { s.sharding.offload = EnumOf<Offload>(v); }))
      .Doc("Move state to CPU memory: `optimizer` offloads optimizer states, `all` also parameters "
           "(stage 3 only); `none` keeps everything on the device.")
      .Default(R"("none")");
  Add(f, AutoIntField("sharding.bucket_size", 1, kMaxBucketElements,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.sharding.bucket_size = AutoInt(v);
                      }))
      .Doc("Elements per gradient reduction bucket. `auto`: hidden_size squared (the DeepSpeed "
           "convention).")
      .Default(R"("auto")");
  Add(f, AutoIntField("sharding.prefetch_bucket_size", 1, kMaxBucketElements,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.sharding.prefetch_bucket_size = AutoInt(v);
                      }))
      .Doc("Stage 3: elements of parameters gathered ahead of use. `auto`: floor(0.9 x hidden_size "
           "squared).")
      .Default(R"("auto")");
  Add(f, AutoIntField("sharding.param_persistence_threshold", 0, kMaxBucketElements,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.sharding.param_persistence_threshold = AutoInt(v);
                      }))
      .Doc("Stage 3: parameters with fewer elements than this stay gathered. `auto`: 10 x "
           "hidden_size.")
      .Default(R"("auto")");

  Add(f, Section("checkpoint"))
      .Doc("Checkpoints: where they are written, how often, and how runs resume.");
  FieldInfo checkpoint_dir =
      String("checkpoint.dir", +[](JobSpec& s, const FieldValue& v) { s.checkpoint.dir = v.text; });
  checkpoint_dir.contained_path = true;
  Add(f, checkpoint_dir)
      .Doc("Directory for checkpoints, relative to the working directory of `accel run` (or "
           "absolute). Defaults to <run dir>/checkpoints. May not contain '..' components: accel "
           "writes only inside the directories a spec names.");
  Add(f, Int("checkpoint.every_steps", 0, kMaxTrainingSteps,
             +[](JobSpec& s, const FieldValue& v) { s.checkpoint.every_steps = v.integer; }))
      .Doc("Write a checkpoint every this many steps; 0 writes one only at the end.")
      .Default("0");
  Add(f, Bool("checkpoint.at_end",
              +[](JobSpec& s, const FieldValue& v) { s.checkpoint.at_end = v.boolean; }))
      .Doc("Write a checkpoint after the last step (and when a run is stopped). `false` keeps only "
           "the every_steps checkpoints: for benchmarks and throwaway runs, which then resume from "
           "the newest of those.")
      .Default("true");
  Add(f, Int("checkpoint.keep", 1, kMaxTrainingSteps,
             +[](JobSpec& s, const FieldValue& v) { s.checkpoint.keep = v.integer; }))
      .Doc("Number of most recent checkpoints kept; older ones are deleted.")
      .Default("2");
  Add(f, Enum("checkpoint.resume", {"auto", "never"}, +[](JobSpec& s, const FieldValue& v) {
        s.checkpoint.resume = EnumOf<ResumeMode>(v);
      }))
      .Doc("`auto` resumes from the newest intact checkpoint in dir when there is one; `never` "
           "always starts from scratch.")
      .Default(R"("auto")");

  Add(f, Section("cluster", true))
      .Doc("The machines the job runs on.");
  Add(f, Int("cluster.nodes", 1, kMaxNodes,
             +[](JobSpec& s, const FieldValue& v) { s.cluster.nodes = v.integer; }))
      .Doc("Number of machines (nodes) the job runs on; each runs devices_per_node worker "
           "processes. The world size, nodes x devices_per_node, may be at most 65536 ranks.")
      .Default("1");
  Add(f, Required(Int("cluster.devices_per_node", 1, kMaxDevicesPerNode,
                      +[](JobSpec& s, const FieldValue& v) {
                        s.cluster.devices_per_node = v.integer;
                      })))
      .Doc("Worker processes per machine: GPUs for cuda, CPU ranks for cpu.");
  Add(f, Enum("cluster.device", {"cpu", "cuda"},
              +[](JobSpec& s, const FieldValue& v) { s.cluster.device = EnumOf<DeviceType>(v); }))
      .Doc("Device type: `cuda` (NCCL collectives) or `cpu` (Gloo collectives).")
      .Default(R"("cpu")");
  Add(f, String("cluster.device_model",
                +[](JobSpec& s, const FieldValue& v) { s.cluster.device_model = v.text; }))
      .Doc("Accelerator model, e.g. h100-80gb or a100-80gb; used to resolve device_memory: auto.");
  Add(f, Size("cluster.device_memory", 1, +[](JobSpec& s, const FieldValue& v) {
        s.cluster.device_memory_bytes = AutoInt(v);
      }))
      .Doc("Memory per device for the fit check: bytes, or a size such as 80GiB or 512MB. `auto`: "
           "from device_model. At most 1 PiB.")
      .Default(R"("auto")");
  Add(f, Size("cluster.runtime_overhead", 0, +[](JobSpec& s, const FieldValue& v) {
        s.cluster.runtime_overhead_bytes = AutoInt(v);
      }))
      .Doc("Memory per device the estimate reserves for the runtime (CUDA context, library "
           "workspaces, allocator slack): bytes or a size such as 2GiB. `auto`: a per-device "
           "default. At most 1 PiB.")
      .Default(R"("auto")");
  Add(f, String("cluster.device_profile",
                +[](JobSpec& s, const FieldValue& v) { s.cluster.device_profile = v.text; }))
      .Doc("Throughput figures for the step-time estimate: a built-in profile (`cpu`, `a100`, "
           "`h100`, `h200`: datasheet peaks times a stated efficiency) or a device-profile JSON "
           "file written by `accel calibrate`, relative to this file. Default: the built-in "
           "profile of `device` and `device_model`.");
  Add(f, Int("cluster.collective_timeout_seconds", 1, kMaxCollectiveTimeoutSeconds,
             +[](JobSpec& s, const FieldValue& v) {
               s.cluster.collective_timeout_seconds = v.integer;
             }))
      .Doc("Seconds a rank waits for its peers in any one collective before the job fails: a dead "
           "or hung (stopped) peer stops the job after about this long, and `accel run` names a "
           "stopped worker. Start-up waits up to the larger of this and 5 minutes for every worker "
           "to arrive. At most 86400 (a day).")
      .Default("300");
  return f;
}

struct Registry {
  std::vector<FieldInfo> fields;
  std::map<std::string, size_t, std::less<>> by_path;
  std::map<std::string, std::vector<std::string>, std::less<>> children;

  Registry() : fields(BuildFields()) {
    children[""];
    for (size_t i = 0; i < fields.size(); ++i) {
      const FieldInfo& field = fields[i];
      by_path[field.path] = i;
      children[field.parent].push_back(field.key);
      if (field.kind == FieldKind::kSection) children[field.path];
    }
  }
};

const Registry& GetRegistry() {
  static const Registry* registry = new Registry();
  return *registry;
}

}  // namespace

const JobDocumentInfo& JobDocument() {
  static const JobDocumentInfo* info = new JobDocumentInfo{
      "http://json-schema.org/draft-07/schema#",
      "accel job",
      "A training job for accel: the model, the data, the optimization loop, the parallel layout "
      "and the cluster. `accel validate` checks a file against this schema and more; `accel plan` "
      "shows what it compiles to.",
  };
  return *info;
}

const std::vector<FieldInfo>& JobFields() { return GetRegistry().fields; }

const FieldInfo* FindField(std::string_view path) {
  const Registry& registry = GetRegistry();
  auto it = registry.by_path.find(path);
  return it == registry.by_path.end() ? nullptr : &registry.fields[it->second];
}

const std::vector<std::string>& ChildKeys(std::string_view section_path) {
  static const std::vector<std::string> kNone;
  const Registry& registry = GetRegistry();
  auto it = registry.children.find(section_path);
  return it == registry.children.end() ? kNone : it->second;
}

bool HasParentComponent(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    if (path.substr(start, slash - start) == "..") return true;
    start = slash + 1;
  }
  return false;
}

bool MatchesPattern(const FieldInfo& field, std::string_view value) {
  return field.matches == nullptr || field.matches(value);
}

std::string JoinPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  std::string out;
  out.reserve(parent.size() + 1 + key.size());
  out.append(parent);
  out += '.';
  out.append(key);
  return out;
}

}  // namespace accel::spec
