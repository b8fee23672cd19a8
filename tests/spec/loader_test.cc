#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/diag_codes.h"
#include "common/remove_tree.h"
#include "common/units.h"
#include "spec/field_registry.h"
#include "spec/limits.h"
#include "spec/loader.h"

using namespace accel;
using namespace accel::spec;
namespace fs = std::filesystem;

namespace {

constexpr const char* kMinimal = R"(version: 1
name: unit
model:
  arch: gpt2
  hidden_size: 64
  num_layers: 2
  num_heads: 4
  vocab_size: 256
  max_seq_len: 128
data:
  train: {path: corpus.txt}
  seq_len: 64
  micro_batch_size: 4
training:
  steps: 10
cluster:
  devices_per_node: 2
)";

struct Loaded {
  std::optional<JobSpec> spec;
  DiagnosticSink sink;
  SourceManager sources;
  std::string Text() const { return RenderText(sink.diagnostics(), sources); }
};

std::unique_ptr<Loaded> Load(const std::string& text, std::vector<std::string> overrides = {},
                             const std::string& file = "job.yaml") {
  auto loaded = std::make_unique<Loaded>();
  LoadOptions options;
  options.overrides = std::move(overrides);
  loaded->spec = LoadJobSpecFromString(text, file, options, loaded->sink, loaded->sources);
  return loaded;
}

std::vector<std::string> Codes(const DiagnosticSink& sink) {
  std::vector<std::string> codes;
  for (const Diagnostic& d : sink.diagnostics()) codes.push_back(d.code);
  return codes;
}

}  // namespace

TEST_CASE("a minimal spec loads with defaults", "[loader]") {
  auto r = Load(kMinimal);
  INFO(r->Text());
  REQUIRE(r->spec);
  const JobSpec& s = *r->spec;
  CHECK(r->sink.empty());
  CHECK(s.version == 1);
  CHECK(s.name == "unit");
  CHECK(s.file == "job.yaml");
  CHECK(s.model.arch == Arch::kGpt2);
  CHECK(s.model.model_type == "gpt2");
  CHECK(s.model.num_kv_heads == 4);
  CHECK(s.model.ffn_hidden_size == 256);
  CHECK(s.model.tie_word_embeddings);
  CHECK(s.data.train.path == "corpus.txt");
  CHECK(s.data.train.format == DataFormat::kText);
  CHECK(s.data.global_batch_size.is_auto);
  CHECK(s.training.optimizer.lr == Approx(3e-4));
  CHECK(s.parallel.data_replicate.is_auto);
  CHECK(s.parallel.tensor == AutoOr<int64_t>::Of(1));
  CHECK(s.checkpoint.dir == "runs/unit/ckpt");
  CHECK(s.cluster.nodes == 1);
  CHECK(s.cluster.devices_per_node == 2);
  CHECK(s.world_size() == 2);
  CHECK(s.cluster.device_memory_bytes.is_auto);
}

TEST_CASE("every field is read with its type", "[loader]") {
  auto r = Load(R"(version: 1
name: full.job_1
model:
  arch: llama
  hidden_size: 512
  num_layers: 8
  num_heads: 8
  num_kv_heads: 2
  ffn_hidden_size: 1376
  vocab_size: 32000
  max_seq_len: 2048
  tie_word_embeddings: true
  qkv_bias: true
  norm_eps: 1.0e-6
  rope_theta: 500000
data:
  train: {path: data/train.bin, format: tokens, tokenizer: bytes, dtype: uint32}
  seq_len: 1024
  micro_batch_size: 2
  global_batch_size: 64
  grad_accum_steps: auto
  shuffle: false
training:
  steps: 100
  optimizer: {name: sgd, lr: 3e-4, betas: [0.8, 0.99], eps: 1e-6, weight_decay: 0.0, momentum: 0.9}
  lr_schedule: {name: linear, warmup_steps: 10, min_lr_ratio: 0.0}
  grad_clip_norm: 0
  seed: 7
  log_every_steps: 5
  recompute: selective
  sample_tokens: 50
precision: {params: bf16, compute: fp16, reduce: fp32, loss_scaling: dynamic}
parallel:
  data_replicate: 2
  data_shard: auto
  context: 1
  tensor: 2
  pipeline: 2
  sequence_parallel: true
  pipeline_schedule: gpipe
  pipeline_microbatches: 8
sharding:
  stage: 3
  hybrid: true
  offload: optimizer
  bucket_size: 500000000
  prefetch_bucket_size: auto
  param_persistence_threshold: 0
checkpoint: {dir: /ckpt, every_steps: 0, keep: 5, resume: never}
cluster:
  nodes: 4
  devices_per_node: 8
  device: cuda
  device_model: h100-80gb
  device_memory: 80GiB
  runtime_overhead: 1536MiB
)");
  INFO(r->Text());
  REQUIRE(r->spec);
  const JobSpec& s = *r->spec;
  CHECK(s.model.arch == Arch::kLlama);
  CHECK(s.model.num_kv_heads == 2);
  CHECK(s.model.ffn_hidden_size == 1376);
  CHECK(s.model.tie_word_embeddings);
  CHECK(s.model.qkv_bias);
  CHECK(s.model.norm_eps == Approx(1e-6));
  CHECK(s.model.rope_theta == Approx(500000));
  CHECK(s.data.train.format == DataFormat::kTokens);
  CHECK(s.data.train.dtype == TokenDtype::kUint32);
  CHECK(s.data.global_batch_size == AutoOr<int64_t>::Of(64));
  CHECK(s.data.grad_accum_steps.is_auto);
  CHECK_FALSE(s.data.shuffle);
  CHECK(s.training.optimizer.name == OptimizerName::kSgd);
  CHECK(s.training.optimizer.lr == Approx(3e-4));
  CHECK(s.training.optimizer.beta1 == Approx(0.8));
  CHECK(s.training.optimizer.beta2 == Approx(0.99));
  CHECK(s.training.optimizer.eps == Approx(1e-6));
  CHECK(s.training.optimizer.momentum == Approx(0.9));
  CHECK(s.training.lr_schedule.name == LrScheduleName::kLinear);
  CHECK(s.training.lr_schedule.warmup_steps == 10);
  CHECK(s.training.grad_clip_norm == 0);
  CHECK(s.training.seed == 7);
  CHECK(s.training.recompute == Recompute::kSelective);
  CHECK(s.training.sample_tokens == 50);
  CHECK(s.precision.params == DType::kBf16);
  CHECK(s.precision.compute == DType::kFp16);
  CHECK(s.precision.loss_scaling == LossScaling::kDynamic);
  CHECK(s.parallel.data_replicate == AutoOr<int64_t>::Of(2));
  CHECK(s.parallel.data_shard.is_auto);
  CHECK(s.parallel.sequence_parallel);
  CHECK(s.parallel.pipeline_schedule == PipelineSchedule::kGpipe);
  CHECK(s.parallel.pipeline_microbatches == AutoOr<int64_t>::Of(8));
  CHECK(s.sharding.stage == 3);
  CHECK(s.sharding.hybrid);
  CHECK(s.sharding.offload == Offload::kOptimizer);
  CHECK(s.sharding.bucket_size == AutoOr<int64_t>::Of(500000000));
  CHECK(s.sharding.prefetch_bucket_size.is_auto);
  CHECK(s.sharding.param_persistence_threshold == AutoOr<int64_t>::Of(0));
  CHECK(s.checkpoint.dir == "/ckpt");
  CHECK(s.checkpoint.keep == 5);
  CHECK(s.checkpoint.resume == ResumeMode::kNever);
  CHECK(s.cluster.device == DeviceType::kCuda);
  CHECK(s.cluster.device_model == "h100-80gb");
  CHECK(s.cluster.device_memory_bytes == AutoOr<int64_t>::Of(int64_t{80} << 30));
  CHECK(s.cluster.runtime_overhead_bytes == AutoOr<int64_t>::Of(int64_t{1536} << 20));
  CHECK(s.world_size() == 32);
}

TEST_CASE("sources record 1-based key and value locations", "[loader]") {
  auto r = Load(std::string(kMinimal) + "training_extra_line_is_not_here: 0\n");
  REQUIRE_FALSE(r->spec);  // unknown key; check a clean file below
  r = Load(std::string(kMinimal) +
           "precision: {compute: bf16}\nparallel:\n  tensor: 2\n"
           "sharding: {stage: 1}\n" +
           "checkpoint: {keep: 3}\n");
  REQUIRE(r->spec);
  const auto& src = r->spec->sources;
  REQUIRE(src.count("parallel.tensor") == 1);
  CHECK(src.at("parallel.tensor").origin == Origin::kFile);
  CHECK(src.at("parallel.tensor").file == "job.yaml");
  CHECK(src.at("parallel.tensor").key == SourceLocation{20, 3});
  CHECK(src.at("parallel.tensor").value == SourceLocation{20, 11});
  CHECK(src.at("parallel").key == SourceLocation{19, 1});
  CHECK(src.at("model.hidden_size").value == SourceLocation{5, 16});
  CHECK(src.at("data.train.path").value == SourceLocation{11, 17});
  CHECK(src.at("precision.compute").value == SourceLocation{18, 22});
  CHECK(src.count("parallel.data_shard") == 0);  // defaults are not recorded
  // Locate falls back to the nearest recorded ancestor.
  CHECK(r->spec->Locate("parallel.data_shard").key == SourceLocation{19, 1});
}

TEST_CASE("betas keep a location per item", "[loader]") {
  auto r = Load(std::string(kMinimal) + "  \n");
  std::string text = kMinimal;
  text.replace(text.find("  steps: 10\n"), 12,
               "  steps: 10\n  optimizer:\n    betas: [0.85, 0.98]\n");
  r = Load(text);
  REQUIRE(r->spec);
  const auto& src = r->spec->sources;
  CHECK(src.at("training.optimizer.betas").value == SourceLocation{17, 12});
  CHECK(src.at("training.optimizer.betas[0]").value == SourceLocation{17, 13});
  CHECK(src.at("training.optimizer.betas[1]").value == SourceLocation{17, 19});
  CHECK(r->spec->training.optimizer.beta1 == Approx(0.85));
  CHECK(r->spec->training.optimizer.beta2 == Approx(0.98));
}

TEST_CASE("overrides (--set) are typed, applied in order and recorded", "[loader]") {
  auto r = Load(kMinimal, {"parallel.tensor=2", "training.optimizer.betas[1]=0.99",
                           "data.global_batch_size=auto", "cluster.device_memory=16GiB",
                           "training.optimizer.lr=1.0e-3", "parallel.tensor=4", "name=renamed",
                           "training.optimizer.betas=[0.5, 0.6]", "training.optimizer.betas[0]=0.7"});
  INFO(r->Text());
  REQUIRE(r->spec);
  const JobSpec& s = *r->spec;
  CHECK(s.parallel.tensor == AutoOr<int64_t>::Of(4));
  CHECK(s.training.optimizer.beta1 == Approx(0.7));
  CHECK(s.training.optimizer.beta2 == Approx(0.6));
  CHECK(s.cluster.device_memory_bytes == AutoOr<int64_t>::Of(int64_t{16} << 30));
  CHECK(s.training.optimizer.lr == Approx(1e-3));
  CHECK(s.name == "renamed");
  CHECK(s.checkpoint.dir == "runs/renamed/ckpt");
  CHECK(s.overrides.size() == 9);
  const FieldSource& tensor = s.sources.at("parallel.tensor");
  CHECK(tensor.origin == Origin::kOverride);
  CHECK(tensor.file == "--set parallel.tensor=4");
  CHECK_FALSE(tensor.value.known());
  CHECK(s.sources.at("training.optimizer.betas[0]").origin == Origin::kOverride);
}

TEST_CASE("bad overrides name the flag", "[loader]") {
  auto r = Load(kMinimal, {"parallel.tensor=0", "training.seed=1.5", "model=3",
                           "data.seq_len[0]=3", "training.optimizer.betas[2]=0.1",
                           "name=[unclosed"});
  REQUIRE_FALSE(r->spec);
  CHECK(Codes(r->sink) == std::vector<std::string>{"E0104", "E0103", "E0109", "E0109", "E0109",
                                                   "E0109"});
  CHECK(r->sink.diagnostics()[0].file == "--set parallel.tensor=0");
  CHECK(r->Text().find("--set training.seed=1.5: error[E0103]: expected an integer for "
                       "training.seed, got float 1.5\n") != std::string::npos);
}

// The index is the problem, not the form of the argument (#42).
TEST_CASE("an override's list index out of range or negative is named", "[loader]") {
  auto r = Load(kMinimal, {"training.optimizer.betas[99999999999]=0.9",
                           "training.optimizer.betas[-1]=0.9", "parallel.tensor[-1]=2"});
  REQUIRE_FALSE(r->spec);
  CHECK(r->Text() ==
        "--set training.optimizer.betas[99999999999]=0.9: error[E0109]: "
        "'training.optimizer.betas' has 2 items; index 99999999999 is out of range (use "
        "training.optimizer.betas[0] or [1])\n"
        "--set training.optimizer.betas[-1]=0.9: error[E0109]: 'training.optimizer.betas' has 2 "
        "items; index -1 is negative (items count from 0: use training.optimizer.betas[0] or [1])\n"
        "--set parallel.tensor[-1]=2: error[E0109]: 'parallel.tensor' is not a list\n");
}

// A 300-byte name validated, then `accel run` failed with "File name too long"; `--set
// name=<100,000 characters>` was accepted (#42). The name is a directory name: at most 200 bytes.
TEST_CASE("name is limited to 200 bytes, in the file and in --set", "[loader]") {
  std::string text = kMinimal;
  text.replace(text.find("name: unit"), 10, "name: " + std::string(300, 'a'));
  auto r = Load(text);
  REQUIRE_FALSE(r->spec);
  REQUIRE(r->sink.diagnostics().size() == 1);
  const Diagnostic& d = r->sink.diagnostics()[0];
  CHECK(d.code == "E0104");
  CHECK(d.location == SourceLocation{2, 7});
  CHECK(d.field == "name");
  CHECK(d.message == "name must be at most 200 bytes (accel's limit), got 300");
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].message ==
        "the name becomes the run directory runs/<name>, and file systems allow 255 bytes per name");
  text = kMinimal;
  text.replace(text.find("name: unit"), 10, "name: " + std::string(200, 'a'));
  CHECK(Load(text)->spec.has_value());

  auto set = Load(kMinimal, {"name=" + std::string(100'000, 'b')});
  REQUIRE_FALSE(set->spec);
  CHECK(set->Text().rfind("--set name=" + std::string(115, 'b') + "...: error[E0104]: name must be "
                          "at most 200 bytes (accel's limit), got 100000\n", 0) == 0);
}

// `num_lаyers` with a Cyrillic "а" (U+0430) got "did you mean 'num_layers'?" and nothing else,
// which reads as a suggestion to write what was written (#42).
TEST_CASE("an unknown key with a look-alike letter names the character", "[loader]") {
  std::string text = kMinimal;
  text.replace(text.find("num_layers"), 10, "num_l\xd0\xb0yers");
  auto r = Load(text);
  REQUIRE_FALSE(r->spec);
  REQUIRE(r->sink.diagnostics().size() == 1);
  CHECK(r->Text() ==
        "job.yaml:6:3: error[E0101]: unknown key 'num_l\xd0\xb0yers' in model (contains non-ASCII "
        "character U+0430 CYRILLIC SMALL LETTER A at column 8); did you mean 'num_layers'?\n"
        "   num_l\xd0\xb0yers: 2\n"
        "   ^\n");
  auto set = Load(kMinimal, {"model.num_l\xd0\xb0yers=3"});
  REQUIRE_FALSE(set->spec);
  CHECK(set->Text() ==
        "--set model.num_l\xd0\xb0yers=3: error[E0101]: unknown key 'model.num_l\xd0\xb0yers' "
        "(contains non-ASCII character U+0430 CYRILLIC SMALL LETTER A as character 12 of the "
        "key); did you mean 'model.num_layers'?\n");
  // An enum value with one: "gрt2" with a Cyrillic "р" (U+0440).
  text = kMinimal;
  text.replace(text.find("arch: gpt2"), 10, "arch: g\xd1\x80t2");
  auto value = Load(text);
  REQUIRE_FALSE(value->spec);
  CHECK(value->sink.diagnostics()[0].message ==
        "invalid value \"g\xd1\x80t2\" for model.arch (contains non-ASCII character U+0440 "
        "CYRILLIC SMALL LETTER ER at column 10); did you mean 'gpt2'?");
}

TEST_CASE("numbers, sizes and auto follow the rules", "[loader]") {
  auto with = [](const std::string& cluster_extra, const std::string& training_extra) {
    std::string text = kMinimal;
    text.replace(text.find("  devices_per_node: 2\n"), 22, "  devices_per_node: 2\n" + cluster_extra);
    text.replace(text.find("  steps: 10\n"), 12, "  steps: 10\n" + training_extra);
    return Load(text);
  };
  CHECK(with("  device_memory: 1073741824\n", "")->spec->cluster.device_memory_bytes ==
        AutoOr<int64_t>::Of(int64_t{1} << 30));
  CHECK(with("  device_memory: 512MB\n", "")->spec->cluster.device_memory_bytes ==
        AutoOr<int64_t>::Of(512000000));
  CHECK(with("  device_memory: \"auto\"\n", "")->spec->cluster.device_memory_bytes.is_auto);
  CHECK(Codes(with("  device_memory: 0\n", "")->sink) == std::vector<std::string>{"E0104"});
  CHECK(Codes(with("  device_memory: 1.5\n", "")->sink) == std::vector<std::string>{"E0103"});
  CHECK(Codes(with("  nodes: auto\n", "")->sink) == std::vector<std::string>{"E0107"});
  CHECK(with("", "  optimizer: {lr: 1e-3}\n")->spec->training.optimizer.lr == Approx(1e-3));
  CHECK(with("", "  optimizer: {lr: 2}\n")->spec->training.optimizer.lr == Approx(2.0));
  CHECK(Codes(with("", "  optimizer: {lr: .inf}\n")->sink) == std::vector<std::string>{"E0104"});
  CHECK(Codes(with("", "  optimizer: {lr: .nan}\n")->sink) == std::vector<std::string>{"E0104"});
  CHECK(Codes(with("", "  seed: -1\n")->sink) == std::vector<std::string>{"E0104"});
  CHECK(Codes(with("", "  lr_schedule: {min_lr_ratio: 1.5}\n")->sink) ==
        std::vector<std::string>{"E0104"});
  CHECK(Codes(with("", "  recompute: [full]\n")->sink) == std::vector<std::string>{"E0103"});
}

TEST_CASE("aliases can reuse values", "[loader]") {
  std::string text = kMinimal;
  text.replace(text.find("  num_heads: 4\n"), 15, "  num_heads: &heads 4\n");
  text += "parallel: {tensor: *heads}\n";
  auto r = Load(text);
  INFO(r->Text());
  REQUIRE(r->spec);
  CHECK(r->spec->parallel.tensor == AutoOr<int64_t>::Of(4));
  CHECK(r->spec->sources.at("parallel.tensor").value == SourceLocation{18, 20});
}

TEST_CASE("errors are collected, not stopped at the first", "[loader]") {
  auto r = Load(R"(version: 1
name: many
model: {arch: gpt2, hidden_size: x, num_layers: 0, num_heads: 4, vocab_size: 8, max_seq_len: 8}
data: {train: {path: p}, seq_len: 1.5, micro_batch_size: auto}
training: {steps: -1, optimizer: {nmae: adamw}}
cluster: {devices_per_node: 1, device: gpu}
)");
  REQUIRE_FALSE(r->spec);
  CHECK(Codes(r->sink) == std::vector<std::string>{"E0103", "E0104", "E0103", "E0107", "E0104",
                                                   "E0101", "E0106"});
  // No schema duplicates of what the loader reported.
  for (const Diagnostic& d : r->sink.diagnostics()) CHECK(d.origin.empty());
}

TEST_CASE("model.config supplies dimensions, and the spec overrides them", "[loader]") {
  fs::path dir = fs::temp_directory_path() / ("accel_loader_test_config_" + std::to_string(::getpid()));
  fs::create_directories(dir / "m");
  std::ofstream(dir / "m" / "config.json") << R"({
    "model_type": "llama", "hidden_size": 256, "num_hidden_layers": 4,
    "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 688,
    "vocab_size": 1000, "max_position_embeddings": 4096, "rms_norm_eps": 1e-06})";
  const std::string spec_path = (dir / "job.yaml").string();
  std::ofstream(spec_path) << R"(version: 1
name: from-config
model:
  config: m/config.json
  max_seq_len: 512
data: {train: {path: p}, seq_len: 256, micro_batch_size: 1}
training: {steps: 1}
cluster: {devices_per_node: 1}
)";
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<JobSpec> s = LoadJobSpec(spec_path, {}, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(s);
  CHECK(s->model.arch == Arch::kLlama);
  CHECK(s->model.model_type == "llama");
  CHECK(s->model.hidden_size == 256);
  CHECK(s->model.num_kv_heads == 2);
  CHECK(s->model.ffn_hidden_size == 688);
  CHECK(s->model.max_seq_len == 512);
  CHECK_FALSE(s->model.tie_word_embeddings);
  CHECK(s->sources.at("model.max_seq_len").origin == Origin::kFile);
  CHECK(s->sources.at("model.hidden_size").origin == Origin::kModelConfig);
  CHECK(s->sources.at("model.hidden_size").file == (dir / "m" / "config.json").generic_string());
  // An override beats both.
  LoadOptions options;
  options.overrides = {"model.hidden_size=512"};
  DiagnosticSink sink2;
  std::optional<JobSpec> s2 = LoadJobSpec(spec_path, options, sink2, sources);
  REQUIRE(s2);
  CHECK(s2->model.hidden_size == 512);
  CHECK(s2->sources.at("model.hidden_size").origin == Origin::kOverride);
  std::error_code ec;
  RemoveTree(dir.string(), ec);
}

TEST_CASE("LoadJobSpec reports unreadable and oversized files", "[loader]") {
  DiagnosticSink sink;
  SourceManager sources;
  CHECK_FALSE(LoadJobSpec("/nonexistent/job.yaml", {}, sink, sources));
  CHECK(Codes(sink) == std::vector<std::string>{"E0001"});
  CHECK(RenderText(sink.diagnostics(), sources) ==
        "/nonexistent/job.yaml: error[E0001]: cannot read file: no such file\n");

  fs::path big = fs::temp_directory_path() / ("accel_loader_test_big_" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(big) << std::string((1 << 20) + 10, '#');
  DiagnosticSink sink2;
  CHECK_FALSE(LoadJobSpec(big.string(), {}, sink2, sources));
  CHECK(Codes(sink2) == std::vector<std::string>{"E0002"});
  fs::remove(big);

  DiagnosticSink sink3;
  CHECK_FALSE(LoadJobSpec(fs::temp_directory_path().string(), {}, sink3, sources));
  CHECK(Codes(sink3) == std::vector<std::string>{"E0001"});
}

TEST_CASE("hostile input never crashes or hangs", "[loader]") {
  // A megabyte-long name goes through the name check and the schema without deep recursion.
  auto r = Load("version: 1\nname: " + std::string(1000000, 'a') + " b\n");
  CHECK_FALSE(r->spec);
  // Many unknown keys: the error count is capped.
  std::string many = "version: 1\n";
  for (int i = 0; i < 5000; ++i) many += "k" + std::to_string(i) + ": 1\n";
  r = Load(many);
  CHECK(r->sink.error_count() <= 102);
  // Deep block nesting.
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += std::string(2 * i, ' ') + "k:\n";
  r = Load(deep);
  CHECK(Codes(r->sink) == std::vector<std::string>{"E0006"});
  // Deep flow nesting far beyond yaml-cpp's own guard.
  r = Load("a: " + std::string(100000, '[') + std::string(100000, ']'));
  CHECK(Codes(r->sink) == std::vector<std::string>{"E0006"});
  // Keys that are not scalars.
  r = Load("? [a, b]\n: 1\n");
  CHECK(Codes(r->sink).front() == "E0103");
}

// Every limit of spec/limits.h admits its own value and refuses the next one, with the field's
// path and the limit in a message located like any other range error.
TEST_CASE("every resource limit admits its maximum and refuses one more", "[loader][limits]") {
  int limited = 0;
  for (const FieldInfo& field : JobFields()) {
    if (!field.maximum_is_limit) continue;
    ++limited;
    INFO(field.path);
    REQUIRE(field.maximum);
    const int64_t max = static_cast<int64_t>(*field.maximum);
    auto at = Load(kMinimal, {field.path + "=" + std::to_string(max)});
    INFO(at->Text());
    CHECK(at->spec.has_value());
    auto over = Load(kMinimal, {field.path + "=" + std::to_string(max + 1)});
    CHECK_FALSE(over->spec.has_value());
    const std::string limit =
        field.kind == FieldKind::kSize ? FormatBytes(max) : std::to_string(max);
    CHECK(over->Text() == "--set " + field.path + "=" + std::to_string(max + 1) +
                              ": error[E0104]: " + field.path + " must be at most " + limit +
                              " (accel's limit), got " + std::to_string(max + 1) + "\n");
  }
  CHECK(limited == 42);
}

TEST_CASE("a limit is reported at the value in the file, below-minimum errors unchanged",
          "[loader][limits]") {
  std::string text = kMinimal;
  text.replace(text.find("devices_per_node: 2"), 19, "devices_per_node: 4096");
  auto r = Load(text);
  CHECK_FALSE(r->spec.has_value());
  CHECK(r->Text() ==
        "job.yaml:17:21: error[E0104]: cluster.devices_per_node must be at most 1024 (accel's "
        "limit), got 4096\n"
        "   devices_per_node: 4096\n"
        "                     ^\n");
  auto low = Load(kMinimal, {"cluster.nodes=0"});
  CHECK(low->Text() ==
        "--set cluster.nodes=0: error[E0104]: cluster.nodes must be at least 1, got 0\n");
  CHECK(kMaxNodes * kMaxDevicesPerNode > kMaxWorldSize);  // the product is the planner's check
}

namespace accel::spec {
namespace {

TEST_CASE("cluster.collective_timeout_seconds defaults to 300 and is bounded", "[loader]") {
  CHECK(Load(kMinimal)->spec->cluster.collective_timeout_seconds == 300);
  auto set = Load(kMinimal, {"cluster.collective_timeout_seconds=7"});
  REQUIRE(set->spec);
  CHECK(set->spec->cluster.collective_timeout_seconds == 7);
  CHECK(Codes(Load(kMinimal, {"cluster.collective_timeout_seconds=0"})->sink) ==
        std::vector<std::string>{"E0104"});
  CHECK(Codes(Load(kMinimal, {"cluster.collective_timeout_seconds=86401"})->sink) ==
        std::vector<std::string>{"E0104"});
}

TEST_CASE("paths that would make accel write outside the named directories are refused",
          "[loader][containment]") {
  std::string text = kMinimal;
  text += "checkpoint:\n  dir: runs/../../etc\n";
  auto r = Load(text);
  CHECK_FALSE(r->spec);
  CHECK(r->Text() ==
        "job.yaml:19:8: error[E0112]: checkpoint.dir \"runs/../../etc\" must not contain '..': "
        "accel writes only inside the directories a spec names (write the path without '..')\n"
        "   dir: runs/../../etc\n"
        "        ^\n");
  auto overridden = Load(kMinimal, {"checkpoint.dir=.."});
  CHECK_FALSE(overridden->spec);
  CHECK(overridden->Text() ==
        "--set checkpoint.dir=..: error[E0112]: checkpoint.dir \"..\" must not contain '..': "
        "accel writes only inside the directories a spec names (write the path without '..')\n");
  // Absolute directories and names that merely contain dots are fine.
  CHECK(Load(kMinimal, {"checkpoint.dir=/data/ckpt"})->spec);
  CHECK(Load(kMinimal, {"checkpoint.dir=a..b/..c/d.."})->spec);
  // The job name becomes runs/<name>: no '/', no leading '.'.
  for (const std::string name : {"../x", "a/b", "..", "/abs"}) {
    INFO(name);
    auto bad = Load(kMinimal, {"name=" + name});
    CHECK_FALSE(bad->spec);
    CHECK(bad->Text() == "--set name=" + name + ": error[E0104]: invalid name \"" + name +
                             "\": use letters, digits, '.', '_' and '-', starting with a letter "
                             "or digit\n");
  }
}

TEST_CASE("HasParentComponent finds '..' components only", "[loader][containment]") {
  CHECK(HasParentComponent(".."));
  CHECK(HasParentComponent("../a"));
  CHECK(HasParentComponent("a/.."));
  CHECK(HasParentComponent("a/../b"));
  CHECK(HasParentComponent("/a/../b"));
  CHECK_FALSE(HasParentComponent("a..b"));
  CHECK_FALSE(HasParentComponent("..a/b.."));
  CHECK_FALSE(HasParentComponent("/a/./b"));
  CHECK_FALSE(HasParentComponent(""));
}

}  // namespace
}  // namespace accel::spec
