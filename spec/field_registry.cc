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

const std::vector<std::string> kDTypes = {"fp32", "bf16", "fp16"};

std::vector<FieldInfo> BuildFields() {
  std::vector<FieldInfo> f;
  f.push_back(Required(Range(Int("version", 1, +[](JobSpec& s, const FieldValue& v) {
                                   s.version = v.integer;
                                 }),
                             1, false, 1, false)));
  FieldInfo name = Required(String("name", +[](JobSpec& s, const FieldValue& v) { s.name = v.text; }));
  name.pattern = "^[A-Za-z0-9][A-Za-z0-9._-]*$";
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
  f.push_back(name);

  f.push_back(Section("model", true));
  f.push_back(String("model.config", +[](JobSpec& s, const FieldValue& v) { s.model.config = v.text; }));
  f.push_back(String("model.init_from",
                     +[](JobSpec& s, const FieldValue& v) { s.model.init_from = v.text; }));
  f.push_back(Enum("model.arch", {"gpt2", "llama"},
                   +[](JobSpec& s, const FieldValue& v) { s.model.arch = EnumOf<Arch>(v); }));
  f.push_back(Int("model.hidden_size", 1, kMaxHiddenSize,
                  +[](JobSpec& s, const FieldValue& v) { s.model.hidden_size = v.integer; }));
  f.push_back(Int("model.num_layers", 1, kMaxNumLayers,
                  +[](JobSpec& s, const FieldValue& v) { s.model.num_layers = v.integer; }));
  f.push_back(Int("model.num_heads", 1, kMaxNumHeads,
                  +[](JobSpec& s, const FieldValue& v) { s.model.num_heads = v.integer; }));
  f.push_back(Int("model.num_kv_heads", 1, kMaxNumHeads,
                  +[](JobSpec& s, const FieldValue& v) { s.model.num_kv_heads = v.integer; }));
  f.push_back(Int("model.ffn_hidden_size", 1, kMaxFfnHiddenSize,
                  +[](JobSpec& s, const FieldValue& v) { s.model.ffn_hidden_size = v.integer; }));
  f.push_back(Int("model.vocab_size", 1, kMaxVocabSize,
                  +[](JobSpec& s, const FieldValue& v) { s.model.vocab_size = v.integer; }));
  f.push_back(Int("model.max_seq_len", 1, kMaxSeqLen,
                  +[](JobSpec& s, const FieldValue& v) { s.model.max_seq_len = v.integer; }));
  f.push_back(Bool("model.tie_word_embeddings", +[](JobSpec& s, const FieldValue& v) {
    s.model.tie_word_embeddings = v.boolean;
  }));
  f.push_back(Bool("model.qkv_bias",
                   +[](JobSpec& s, const FieldValue& v) { s.model.qkv_bias = v.boolean; }));
  f.push_back(Range(Number("model.norm_eps",
                           +[](JobSpec& s, const FieldValue& v) { s.model.norm_eps = v.number; }),
                    0, true, std::nullopt, false));
  f.push_back(Range(Number("model.rope_theta",
                           +[](JobSpec& s, const FieldValue& v) { s.model.rope_theta = v.number; }),
                    0, true, std::nullopt, false));

  f.push_back(Section("data", true));
  f.push_back(Section("data.train", true));
  f.push_back(Required(
      String("data.train.path", +[](JobSpec& s, const FieldValue& v) { s.data.train.path = v.text; })));
  f.push_back(Enum("data.train.format", {"text", "tokens"}, +[](JobSpec& s, const FieldValue& v) {
    s.data.train.format = EnumOf<DataFormat>(v);
  }));
  f.push_back(String("data.train.tokenizer",
                     +[](JobSpec& s, const FieldValue& v) { s.data.train.tokenizer = v.text; }));
  f.push_back(Enum("data.train.dtype", {"uint16", "uint32"}, +[](JobSpec& s, const FieldValue& v) {
    s.data.train.dtype = EnumOf<TokenDtype>(v);
  }));
  f.push_back(Required(Int("data.seq_len", 1, kMaxSeqLen,
                           +[](JobSpec& s, const FieldValue& v) { s.data.seq_len = v.integer; })));
  f.push_back(Required(Int("data.micro_batch_size", 1, kMaxMicroBatchSize,
      +[](JobSpec& s, const FieldValue& v) {
    s.data.micro_batch_size = v.integer;
  })));
  f.push_back(AutoIntField("data.global_batch_size", 1, kMaxGlobalBatchSize,
      +[](JobSpec& s, const FieldValue& v) {
    s.data.global_batch_size = AutoInt(v);
  }));
  f.push_back(AutoIntField("data.grad_accum_steps", 1, kMaxMicrobatches,
      +[](JobSpec& s, const FieldValue& v) {
    s.data.grad_accum_steps = AutoInt(v);
  }));
  f.push_back(Bool("data.shuffle", +[](JobSpec& s, const FieldValue& v) { s.data.shuffle = v.boolean; }));

  f.push_back(Section("training", true));
  f.push_back(Required(Int("training.steps", 1, kMaxTrainingSteps,
                           +[](JobSpec& s, const FieldValue& v) { s.training.steps = v.integer; })));
  f.push_back(Section("training.optimizer"));
  f.push_back(Enum("training.optimizer.name", {"adamw", "sgd"}, +[](JobSpec& s, const FieldValue& v) {
    s.training.optimizer.name = EnumOf<OptimizerName>(v);
  }));
  f.push_back(Range(Number("training.optimizer.lr",
                           +[](JobSpec& s, const FieldValue& v) { s.training.optimizer.lr = v.number; }),
                    0, true, std::nullopt, false));
  f.push_back(Range(Make("training.optimizer.betas", FieldKind::kNumberPair,
                         +[](JobSpec& s, const FieldValue& v) {
                           if (v.index <= 0) s.training.optimizer.beta1 = v.index == 0 ? v.number : v.pair[0];
                           if (v.index != 0) s.training.optimizer.beta2 = v.index == 1 ? v.number : v.pair[1];
                         }),
                    0, false, 1, true));
  f.push_back(Range(Number("training.optimizer.eps",
                           +[](JobSpec& s, const FieldValue& v) { s.training.optimizer.eps = v.number; }),
                    0, true, std::nullopt, false));
  f.push_back(Range(Number("training.optimizer.weight_decay", +[](JobSpec& s, const FieldValue& v) {
                      s.training.optimizer.weight_decay = v.number;
                    }),
                    0, false, std::nullopt, false));
  f.push_back(Range(Number("training.optimizer.momentum", +[](JobSpec& s, const FieldValue& v) {
                      s.training.optimizer.momentum = v.number;
                    }),
                    0, false, 1, true));
  f.push_back(Section("training.lr_schedule"));
  f.push_back(Enum("training.lr_schedule.name", {"constant", "linear", "cosine"},
                   +[](JobSpec& s, const FieldValue& v) {
                     s.training.lr_schedule.name = EnumOf<LrScheduleName>(v);
                   }));
  f.push_back(Int("training.lr_schedule.warmup_steps", 0, kMaxTrainingSteps,
      +[](JobSpec& s, const FieldValue& v) {
    s.training.lr_schedule.warmup_steps = v.integer;
  }));
  f.push_back(Range(Number("training.lr_schedule.min_lr_ratio", +[](JobSpec& s, const FieldValue& v) {
                      s.training.lr_schedule.min_lr_ratio = v.number;
                    }),
                    0, false, 1, false));
  f.push_back(Range(Number("training.grad_clip_norm", +[](JobSpec& s, const FieldValue& v) {
                      s.training.grad_clip_norm = v.number;
                    }),
                    0, false, std::nullopt, false));
  f.push_back(Int("training.seed", 0, +[](JobSpec& s, const FieldValue& v) { s.training.seed = v.integer; }));
  f.push_back(Int("training.log_every_steps", 1, kMaxTrainingSteps,
      +[](JobSpec& s, const FieldValue& v) {
    s.training.log_every_steps = v.integer;
  }));
  f.push_back(Enum("training.recompute", {"none", "selective", "full"},
                   +[](JobSpec& s, const FieldValue& v) { s.training.recompute = EnumOf<Recompute>(v); }));
  f.push_back(Int("training.sample_tokens", 0, kMaxSampleTokens,
      +[](JobSpec& s, const FieldValue& v) {
    s.training.sample_tokens = v.integer;
  }));

  f.push_back(Section("precision"));
  f.push_back(Enum("precision.params", kDTypes,
                   +[](JobSpec& s, const FieldValue& v) { s.precision.params = EnumOf<DType>(v); }));
  f.push_back(Enum("precision.compute", kDTypes,
                   +[](JobSpec& s, const FieldValue& v) { s.precision.compute = EnumOf<DType>(v); }));
  f.push_back(Enum("precision.reduce", kDTypes,
                   +[](JobSpec& s, const FieldValue& v) { s.precision.reduce = EnumOf<DType>(v); }));
  f.push_back(Enum("precision.loss_scaling", {"none", "dynamic", "static"},
                   +[](JobSpec& s, const FieldValue& v) {
                     s.precision.loss_scaling = EnumOf<LossScaling>(v);
                   }));

  f.push_back(Section("parallel"));
  f.push_back(AutoIntField("parallel.data_replicate", 1, kMaxParallelDegree,
      +[](JobSpec& s, const FieldValue& v) {
    s.parallel.data_replicate = AutoInt(v);
  }));
  f.push_back(AutoIntField("parallel.data_shard", 1, kMaxParallelDegree,
      +[](JobSpec& s, const FieldValue& v) {
    s.parallel.data_shard = AutoInt(v);
  }));
  f.push_back(AutoIntField("parallel.context", 1, kMaxParallelDegree,
      +[](JobSpec& s, const FieldValue& v) {
    s.parallel.context = AutoInt(v);
  }));
  f.push_back(AutoIntField("parallel.tensor", 1, kMaxParallelDegree,
      +[](JobSpec& s, const FieldValue& v) {
    s.parallel.tensor = AutoInt(v);
  }));
  f.push_back(AutoIntField("parallel.pipeline", 1, kMaxParallelDegree,
      +[](JobSpec& s, const FieldValue& v) {
    s.parallel.pipeline = AutoInt(v);
  }));
  f.push_back(Bool("parallel.sequence_parallel", +[](JobSpec& s, const FieldValue& v) {
    s.parallel.sequence_parallel = v.boolean;
  }));
  f.push_back(Enum("parallel.pipeline_schedule", {"gpipe", "1f1b", "interleaved_1f1b"},
                   +[](JobSpec& s, const FieldValue& v) {
    s.parallel.pipeline_schedule = EnumOf<PipelineSchedule>(v);
  }));
  f.push_back(AutoIntField("parallel.pipeline_microbatches", 1, kMaxMicrobatches,
      +[](JobSpec& s, const FieldValue& v) {
    s.parallel.pipeline_microbatches = AutoInt(v);
  }));
  f.push_back(AutoIntField("parallel.virtual_stages", 1, kMaxNumLayers,
      +[](JobSpec& s, const FieldValue& v) {
    s.parallel.virtual_stages = AutoInt(v);
  }));

  f.push_back(Section("sharding"));
  f.push_back(Range(Int("sharding.stage", 0,
                        +[](JobSpec& s, const FieldValue& v) { s.sharding.stage = v.integer; }),
                    0, false, 3, false));
  f.push_back(Bool("sharding.hybrid", +[](JobSpec& s, const FieldValue& v) { s.sharding.hybrid = v.boolean; }));
  f.push_back(Enum("sharding.offload", {"none", "optimizer", "all"},
                   +[](JobSpec& s, const FieldValue& v) { s.sharding.offload = EnumOf<Offload>(v); }));
  f.push_back(AutoIntField("sharding.bucket_size", 1, kMaxBucketElements,
      +[](JobSpec& s, const FieldValue& v) {
    s.sharding.bucket_size = AutoInt(v);
  }));
  f.push_back(AutoIntField("sharding.prefetch_bucket_size", 1, kMaxBucketElements,
      +[](JobSpec& s, const FieldValue& v) {
    s.sharding.prefetch_bucket_size = AutoInt(v);
  }));
  f.push_back(AutoIntField("sharding.param_persistence_threshold", 0, kMaxBucketElements,
                           +[](JobSpec& s, const FieldValue& v) {
                             s.sharding.param_persistence_threshold = AutoInt(v);
                           }));

  f.push_back(Section("checkpoint"));
  FieldInfo checkpoint_dir =
      String("checkpoint.dir", +[](JobSpec& s, const FieldValue& v) { s.checkpoint.dir = v.text; });
  checkpoint_dir.contained_path = true;
  f.push_back(checkpoint_dir);
  f.push_back(Int("checkpoint.every_steps", 0, kMaxTrainingSteps,
                  +[](JobSpec& s, const FieldValue& v) { s.checkpoint.every_steps = v.integer; }));
  f.push_back(Bool("checkpoint.at_end",
                   +[](JobSpec& s, const FieldValue& v) { s.checkpoint.at_end = v.boolean; }));
  f.push_back(Int("checkpoint.keep", 1, kMaxTrainingSteps,
      +[](JobSpec& s, const FieldValue& v) { s.checkpoint.keep = v.integer; }));
  f.push_back(Enum("checkpoint.resume", {"auto", "never"}, +[](JobSpec& s, const FieldValue& v) {
    s.checkpoint.resume = EnumOf<ResumeMode>(v);
  }));

  f.push_back(Section("cluster", true));
  f.push_back(Int("cluster.nodes", 1, kMaxNodes,
      +[](JobSpec& s, const FieldValue& v) { s.cluster.nodes = v.integer; }));
  f.push_back(Required(Int("cluster.devices_per_node", 1, kMaxDevicesPerNode,
      +[](JobSpec& s, const FieldValue& v) {
    s.cluster.devices_per_node = v.integer;
  })));
  f.push_back(Enum("cluster.device", {"cpu", "cuda"},
                   +[](JobSpec& s, const FieldValue& v) { s.cluster.device = EnumOf<DeviceType>(v); }));
  f.push_back(String("cluster.device_model",
                     +[](JobSpec& s, const FieldValue& v) { s.cluster.device_model = v.text; }));
  f.push_back(Size("cluster.device_memory", 1, +[](JobSpec& s, const FieldValue& v) {
    s.cluster.device_memory_bytes = AutoInt(v);
  }));
  f.push_back(Size("cluster.runtime_overhead", 0, +[](JobSpec& s, const FieldValue& v) {
    s.cluster.runtime_overhead_bytes = AutoInt(v);
  }));
  FieldInfo device_profile = String("cluster.device_profile", +[](JobSpec& s, const FieldValue& v) {
    s.cluster.device_profile = v.text;
  });
  device_profile.non_empty = true;
  f.push_back(device_profile);
  f.push_back(Int("cluster.collective_timeout_seconds", 1, kMaxCollectiveTimeoutSeconds,
                  +[](JobSpec& s, const FieldValue& v) {
                    s.cluster.collective_timeout_seconds = v.integer;
                  }));
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
