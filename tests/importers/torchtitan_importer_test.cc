#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "common/diag_codes.h"
#include "tests/importers/import_test_util.h"

namespace accel::importers {
namespace {

using testing::Import;

// A torchtitan TOML of the corpus (tests/testdata/corpus/configs/torchtitan; provenance in
// tests/testdata/corpus/SOURCES.md).
std::string Corpus(const std::string& path) {
  std::ifstream in(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/configs/torchtitan/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The lines of top-level section `name` of a spec, its key line included.
std::string Section(const std::string& yaml, const std::string& name) {
  std::istringstream in(yaml);
  std::string line, out;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != ' ' && line[0] != '#') inside = line == name + ":";
    if (inside) out += line + "\n";
  }
  return out;
}

// The rendered diagnostics whose message contains `text`.
std::string MessagesAbout(const testing::Imported& out, const std::string& text) {
  std::vector<Diagnostic> about;
  for (const Diagnostic& d : out.sink.diagnostics()) {
    if (d.message.find(text) != std::string::npos) about.push_back(d);
  }
  return RenderText(about, out.sources);
}

TEST_CASE("torchtitan: a 3D TOML job becomes a commented spec", "[importers][torchtitan]") {
  testing::Imported out = Import(R"([job]
dump_folder = "./outputs"

[model]
name = "llama3"
flavor = "8B"

[optimizer]
name = "AdamW"
lr = 3e-4

[lr_scheduler]
warmup_steps = 100
decay_type = "cosine"
lr_min = 0.1

[training]
local_batch_size = 4
seq_len = 4096
steps = 2000
max_norm = 1.0

[parallelism]
data_parallel_shard_degree = -1
tensor_parallel_degree = 2
pipeline_parallel_degree = 2
pipeline_parallel_microbatch_size = 1

[checkpoint]
enable = true
interval = 250
keep_latest_k = 3

[activation_checkpoint]
mode = "full"
)",
                                 "llama3.toml");
  REQUIRE(out.yaml);
  CHECK(*out.yaml == R"(# Imported by `accel import` from llama3.toml (torchtitan config).
# Each comment names the source key a value came from.
# Not imported (see the warnings): job.dump_folder
version: 1
name: llama3  # the source file's name
model:
  # torchtitan model.name/flavor: llama3 8B; accel reads the dimensions from model.config
  config: models/llama-tiny/config.json  # --model
data:
  train:
    path: data/train.txt  # --data
  seq_len: 4096  # training.seq_len
  micro_batch_size: 1  # parallelism.pipeline_parallel_microbatch_size
  grad_accum_steps: 4  # training.local_batch_size / parallelism.pipeline_parallel_microbatch_size
training:
  steps: 2000  # training.steps
  optimizer:
    name: adamw  # optimizer.name: AdamW
    lr: 0.0003  # optimizer.lr
  lr_schedule:
    name: cosine  # lr_scheduler.decay_type
    warmup_steps: 100  # lr_scheduler.warmup_steps
    min_lr_ratio: 0.1  # lr_scheduler.lr_min
  grad_clip_norm: 1.0  # training.max_norm
  log_every_steps: 10  # metrics.log_freq absent (torchtitan default)
  recompute: full  # activation_checkpoint.mode
precision:
  params: fp32  # FSDP2 mixed precision keeps fp32 parameters
  compute: bf16  # training.mixed_precision_param absent (torchtitan default)
  reduce: fp32  # training.mixed_precision_reduce absent (torchtitan default)
parallel:
  data_replicate: 1  # data_parallel_replicate_degree absent: 1
  data_shard: auto  # parallelism.data_parallel_shard_degree: -1
  context: 1  # context_parallel_degree absent: 1
  tensor: 2  # parallelism.tensor_parallel_degree
  pipeline: 2  # parallelism.pipeline_parallel_degree
  sequence_parallel: true  # parallelism.tensor_parallel_degree (torchtitan's TP shards norms along the sequence)
sharding:
  stage: 3  # parallelism.data_parallel_shard_degree (FSDP2)
checkpoint:
  dir: "./outputs/checkpoint"  # job.dump_folder / checkpoint.folder
  every_steps: 250  # checkpoint.interval
  keep: 3  # checkpoint.keep_latest_k
cluster:
  devices_per_node: 8  # run_train.sh's NGPU default; the file does not give the world size
  device: cuda  # torchtitan trains on GPUs
  device_memory: 80GiB  # importer assumption (an 80 GB GPU): set device_model or device_memory
)");
  CHECK(out.messages ==
        "llama3.toml:2:1: warning[W0701]: torchtitan key 'job.dump_folder' = \"./outputs\" has no "
        "accel equivalent beyond checkpoint.dir; not imported\n"
        " dump_folder = \"./outputs\"\n"
        " ^\n");
}

TEST_CASE("torchtitan: model.hf_assets_path gives data.train.tokenizer its tokenizer.json",
          "[importers][torchtitan][tokenizer]") {
  // torchtitan (August 2025 to February 2026) loads hf_assets_path/tokenizer.json, the path taken
  // from the directory it runs from.
  testing::Imported out = Import(
      Corpus("2026-02_pre-refactor/torchtitan/models/llama3/train_configs/llama3_8b.toml"), "llama3_8b.toml");
  REQUIRE(out.yaml);
  CHECK(Section(*out.yaml, "data") ==
        "data:\n"
        "  # training.dataset = c4: accel reads data.train.path\n"
        "  train:\n"
        "    path: data/train.txt  # --data\n"
        "    tokenizer: assets/hf/Llama-3.1-8B/tokenizer.json  # model.hf_assets_path/tokenizer.json\n"
        "  seq_len: 8192  # training.seq_len\n"
        "  micro_batch_size: 1  # training.local_batch_size\n");
  CHECK(MessagesAbout(out, "model.") == "");

  // Another launch directory: the path is written relative to the spec; an absolute one stays.
  ImportOptions options = testing::TestOptions();
  options.launch_dir = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/import/torchtitan";
  testing::Imported moved = Import("[model]\nhf_assets_path = \"./assets/hf/Qwen3-0.6B/\"\n", "qwen3.toml", options);
  REQUIRE(moved.yaml);
  CHECK(Section(*moved.yaml, "data").find(
            "    tokenizer: torchtitan/assets/hf/Qwen3-0.6B/tokenizer.json  # model.hf_assets_path/tokenizer.json\n") !=
        std::string::npos);
  testing::Imported absolute = Import("[model]\nhf_assets_path = \"/models/Qwen3-0.6B\"\n", "qwen3.toml");
  REQUIRE(absolute.yaml);
  CHECK(Section(*absolute.yaml, "data").find(
            "    tokenizer: /models/Qwen3-0.6B/tokenizer.json  # model.hf_assets_path/tokenizer.json\n") !=
        std::string::npos);
  CHECK(absolute.messages == "");
}

TEST_CASE("torchtitan: model.hf_assets_path/config.json becomes model.config unless --model is given",
          "[importers][torchtitan][model]") {
  // tests/testdata/import/assets/hf/llama-tiny holds a config.json (a copy of the test model's).
  ImportOptions options = testing::TestOptions();
  options.model_config = "";
  testing::Imported found = Import("[model]\nhf_assets_path = \"./assets/hf/llama-tiny\"\n", "tiny.toml", options);
  REQUIRE(found.yaml);
  CHECK(Section(*found.yaml, "model") ==
        "model:\n"
        "  config: assets/hf/llama-tiny/config.json  # model.hf_assets_path/config.json\n");
  CHECK(Section(*found.yaml, "data").find(
            "    tokenizer: assets/hf/llama-tiny/tokenizer.json  # model.hf_assets_path/tokenizer.json\n") !=
        std::string::npos);
  CHECK(found.messages == "");

  // --model wins, and a note in the model section says which config.json it replaced.
  testing::Imported given = Import("[model]\nhf_assets_path = \"./assets/hf/llama-tiny/\"\n", "tiny.toml");
  REQUIRE(given.yaml);
  CHECK(Section(*given.yaml, "model") ==
        "model:\n"
        "  # model.hf_assets_path/config.json (assets/hf/llama-tiny/config.json) not used: --model names the "
        "model\n"
        "  config: models/llama-tiny/config.json  # --model\n");
  CHECK(given.messages == "");

  // The path is taken from the launch directory and written relative to the spec, as the
  // tokenizer's; an absolute one is found as it is.
  options.launch_dir = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/import/assets";
  testing::Imported moved = Import("[model]\nhf_assets_path = \"hf/llama-tiny\"\n", "tiny.toml", options);
  REQUIRE(moved.yaml);
  CHECK(Section(*moved.yaml, "model") ==
        "model:\n"
        "  config: assets/hf/llama-tiny/config.json  # model.hf_assets_path/config.json\n");
  const std::string absolute_dir = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/import/assets/hf/llama-tiny";
  testing::Imported absolute = Import("[model]\nhf_assets_path = \"" + absolute_dir + "\"\n", "tiny.toml", options);
  REQUIRE(absolute.yaml);
  CHECK(Section(*absolute.yaml, "model") ==
        "model:\n"
        "  config: assets/hf/llama-tiny/config.json  # model.hf_assets_path/config.json\n");

  // A directory without config.json here leaves the placeholder.
  testing::Imported missing = Import("[model]\nhf_assets_path = \"./assets/hf/Llama-3.1-8B\"\n", "l.toml",
                                     [] {
                                       ImportOptions o = testing::TestOptions();
                                       o.model_config = "";
                                       return o;
                                     }());
  REQUIRE(missing.yaml);
  CHECK(Section(*missing.yaml, "model") == "model:\n  config: config.json  # placeholder: no --model given\n");
}

TEST_CASE("torchtitan: model.tokenizer_path maps a directory, a tokenizer.json and llama2's "
          "SentencePiece model, a tiktoken file is a located warning",
          "[importers][torchtitan][tokenizer]") {
  // Before December 2024 torchtitan read llama2's tokenizer.model with SentencePiece.
  testing::Imported llama2 = Import(Corpus("2024-12/train_configs/llama2_7b.toml"), "llama2_7b.toml");
  REQUIRE(llama2.yaml);
  CHECK(Section(*llama2.yaml, "data").find(
            "    tokenizer: torchtitan/datasets/tokenizer/tokenizer.model  # model.tokenizer_path "
            "(SentencePiece, as torchtitan reads it for model.name llama2)\n") != std::string::npos);
  CHECK(MessagesAbout(llama2, "model.") == "");

  // Llama-3's original/tokenizer.model is tiktoken's format.
  testing::Imported llama3 = Import(
      Corpus("benchmark-pinned/2025-06-13_820504e/torchtitan/models/llama3/train_configs/llama3_8b.toml"),
      "llama3_8b.toml");
  REQUIRE(llama3.yaml);
  CHECK(Section(*llama3.yaml, "data").find("tokenizer") == std::string::npos);
  CHECK(MessagesAbout(llama3, "model.") ==
        "llama3_8b.toml:21:1: warning[W0701]: torchtitan key 'model.tokenizer_path' = "
        "\"./assets/tokenizer/original/tokenizer.mo...\" has no accel equivalent: torchtitan reads a "
        "tokenizer.model with tiktoken (model.name llama3), which accel cannot read; give "
        "data.train.tokenizer the model's Hugging Face tokenizer.json; not imported\n"
        " tokenizer_path = \"./assets/tokenizer/original/tokenizer.model\"\n"
        " ^\n");
  CHECK(llama3.sink.warning_count() == 6);

  // July 2025: a directory; tokenizer_path wins over hf_assets_path when both are set.
  testing::Imported both = Import(R"([model]
name = "llama3"
hf_assets_path = "./assets/hf/Llama-3.1-8B"
tokenizer_path = "./assets/tokenizer/Llama-3.1-8B"
)",
                                  "both.toml");
  REQUIRE(both.yaml);
  CHECK(Section(*both.yaml, "data") ==
        "data:\n"
        "  train:\n"
        "    path: data/train.txt  # --data\n"
        "    tokenizer: assets/tokenizer/Llama-3.1-8B/tokenizer.json  # model.tokenizer_path/tokenizer.json\n"
        "  seq_len: 2048  # training.seq_len absent (torchtitan default)\n"
        "  micro_batch_size: 8  # training.local_batch_size absent (torchtitan default)\n");
  CHECK(both.messages ==
        "both.toml:3:1: warning[W0701]: torchtitan key 'model.hf_assets_path' = "
        "\"./assets/hf/Llama-3.1-8B\" is replaced by model.tokenizer_path as the tokenizer, as "
        "torchtitan does when both are set, and holds no config.json here; not imported\n"
        " hf_assets_path = \"./assets/hf/Llama-3.1-8B\"\n"
        " ^\n");

  // hf_assets_path still gives config.json when tokenizer_path overrides its tokenizer.
  ImportOptions no_model = testing::TestOptions();
  no_model.model_config = "";
  testing::Imported config = Import(R"([model]
hf_assets_path = "./assets/hf/llama-tiny"
tokenizer_path = "./assets/tokenizer/Llama-3.1-8B"
)",
                                    "config.toml", no_model);
  REQUIRE(config.yaml);
  CHECK(Section(*config.yaml, "model") ==
        "model:\n"
        "  config: assets/hf/llama-tiny/config.json  # model.hf_assets_path/config.json\n");
  CHECK(Section(*config.yaml, "data").find(
            "    tokenizer: assets/tokenizer/Llama-3.1-8B/tokenizer.json  # model.tokenizer_path/tokenizer.json\n") !=
        std::string::npos);
  CHECK(config.messages == "");

  // The tokenizer.json itself, though torchtitan wants its directory.
  testing::Imported file = Import("[model]\ntokenizer_path = \"tok/tokenizer.json\"\n", "file.toml");
  REQUIRE(file.yaml);
  CHECK(Section(*file.yaml, "data").find("    tokenizer: tok/tokenizer.json  # model.tokenizer_path\n") !=
        std::string::npos);
}

TEST_CASE("torchtitan: tokenizer paths accel cannot use are located warnings",
          "[importers][torchtitan][tokenizer]") {
  testing::Imported model = Import("[model]\nhf_assets_path = \"assets/tokenizer.model\"\n", "model.toml");
  REQUIRE(model.yaml);
  CHECK(model.yaml->find("tokenizer:") == std::string::npos);
  CHECK(model.messages ==
        "model.toml:2:1: warning[W0701]: torchtitan key 'model.hf_assets_path' = "
        "\"assets/tokenizer.model\" has no accel equivalent: torchtitan refuses a tokenizer.model "
        "here and wants the directory of a tokenizer.json; not imported\n"
        " hf_assets_path = \"assets/tokenizer.model\"\n"
        " ^\n");
  testing::Imported no_name = Import("[model]\ntokenizer_path = \"test_tiktoken.model\"\n", "tt.toml");
  REQUIRE(no_name.yaml);
  CHECK(no_name.messages ==
        "tt.toml:2:1: warning[W0701]: torchtitan key 'model.tokenizer_path' = \"test_tiktoken.model\" "
        "has no accel equivalent: torchtitan reads a tokenizer.model with tiktoken (model.name "
        "absent), which accel cannot read; give data.train.tokenizer the model's Hugging Face "
        "tokenizer.json; not imported\n"
        " tokenizer_path = \"test_tiktoken.model\"\n"
        " ^\n");
  testing::Imported empty = Import("[model]\nhf_assets_path = \"\"\n", "empty.toml");
  REQUIRE(empty.yaml);
  CHECK(empty.messages ==
        "empty.toml:2:1: warning[W0701]: torchtitan key 'model.hf_assets_path' = \"\" names no path; "
        "not imported\n"
        " hf_assets_path = \"\"\n"
        " ^\n");
  testing::Imported list = Import("[model]\nhf_assets_path = [\"a\"]\n", "list.toml");
  CHECK_FALSE(list.yaml);
  CHECK(list.messages ==
        "list.toml:2:18: error[E0702]: 'model.hf_assets_path' must be a string, got list\n"
        " hf_assets_path = [\"a\"]\n"
        "                  ^\n");
}

TEST_CASE("torchtitan: pre-tokenized --data leaves the tokenizer out", "[importers][torchtitan][tokenizer]") {
  ImportOptions options = testing::TestOptions();
  options.data_path = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/import/data/train.bin";
  testing::Imported out = Import("[model]\nhf_assets_path = \"./assets/hf/Qwen3-0.6B\"\n", "qwen3.toml", options);
  REQUIRE(out.yaml);
  CHECK(Section(*out.yaml, "data") ==
        "data:\n"
        "  # tokenizer assets/hf/Qwen3-0.6B/tokenizer.json omitted: --data names a .bin token file, "
        "already tokenized\n"
        "  train:\n"
        "    path: data/train.bin  # --data\n"
        "    format: tokens  # --data names a .bin token file\n"
        "  seq_len: 2048  # training.seq_len absent (torchtitan default)\n"
        "  micro_batch_size: 8  # training.local_batch_size absent (torchtitan default)\n");
}

TEST_CASE("torchtitan: Interleaved1F1B maps to interleaved_1f1b, and to 1f1b on one stage",
          "[importers][torchtitan]") {
  const std::string layout = R"([training]
local_batch_size = 8

[parallelism]
pipeline_parallel_degree = 2
pipeline_parallel_schedule = "Interleaved1F1B"
)";
  testing::Imported two = Import(layout, "pp.toml");
  REQUIRE(two.yaml);
  CHECK(Section(*two.yaml, "parallel").find(
            "  pipeline_schedule: interleaved_1f1b  # parallelism.pipeline_parallel_schedule\n") != std::string::npos);
  CHECK(Section(*two.yaml, "parallel").find(
            "  virtual_stages: auto  # torchtitan's default of 2 stages per rank for Interleaved1F1B\n") !=
        std::string::npos);
  // The corpus' debug model names the schedule with pipeline_parallel_degree 1.
  testing::Imported one = Import(Corpus("2026-02_pre-refactor/torchtitan/models/llama3/train_configs/debug_model.toml"),
                                 "debug_model.toml");
  REQUIRE(one.yaml);
  CHECK(Section(*one.yaml, "parallel").find(
            "  pipeline_schedule: 1f1b  # parallelism.pipeline_parallel_schedule = Interleaved1F1B has no effect "
            "with one pipeline stage\n") != std::string::npos);
}

TEST_CASE("torchtitan: ZBVZeroBubble maps to zbv (1f1b on one stage), InterleavedZeroBubble to zb_h1",
          "[importers][torchtitan]") {
  auto layout = [](int pp, const std::string& schedule) {
    return "[training]\nlocal_batch_size = 8\n\n[parallelism]\npipeline_parallel_degree = " + std::to_string(pp) +
           "\npipeline_parallel_schedule = \"" + schedule + "\"\n";
  };
  testing::Imported zbv = Import(layout(2, "ZBVZeroBubble"), "pp.toml");
  REQUIRE(zbv.yaml);
  CHECK(Section(*zbv.yaml, "parallel").find("  pipeline_schedule: zbv  # parallelism.pipeline_parallel_schedule\n") !=
        std::string::npos);
  testing::Imported zbv_one = Import(layout(1, "ZBVZeroBubble"), "pp.toml");
  REQUIRE(zbv_one.yaml);
  CHECK(Section(*zbv_one.yaml, "parallel").find(
            "  pipeline_schedule: 1f1b  # parallelism.pipeline_parallel_schedule = ZBVZeroBubble has no effect "
            "with one pipeline stage\n") != std::string::npos);
  testing::Imported zb1p = Import(layout(2, "InterleavedZeroBubble"), "pp.toml");
  REQUIRE(zb1p.yaml);
  CHECK(Section(*zb1p.yaml, "parallel").find(
            "  pipeline_schedule: zb_h1  # parallelism.pipeline_parallel_schedule = InterleavedZeroBubble, one model "
            "chunk per stage\n") != std::string::npos);
}

TEST_CASE("torchtitan: selective activation checkpointing per op becomes recompute op, in either key order",
          "[importers][torchtitan]") {
  testing::Imported mode_first = Import("[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n",
                                        "ac.toml");
  REQUIRE(mode_first.yaml);
  CHECK(Section(*mode_first.yaml, "training")
            .find("  recompute: op  # activation_checkpoint.selective_ac_option\n") != std::string::npos);
  testing::Imported option_first = Import("[activation_checkpoint]\nselective_ac_option = \"op\"\nmode = \"selective\"\n",
                                          "ac.toml");
  REQUIRE(option_first.yaml);
  CHECK(Section(*option_first.yaml, "training").find("  recompute: op  # activation_checkpoint.mode\n") !=
        std::string::npos);
  // The published Llama-3-8B job (torchtitan's llama3_8b.toml).
  testing::Imported llama3 = Import(
      Corpus("benchmark-pinned/2025-08-14_6fc499f/torchtitan/models/llama3/train_configs/llama3_8b.toml"), "llama3_8b.toml");
  REQUIRE(llama3.yaml);
  CHECK(Section(*llama3.yaml, "training").find("  recompute: op  #") != std::string::npos);
  // "full" stays full; an option other than "op" (every N-th layer) is not imported.
  testing::Imported layers = Import("[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"2\"\n",
                                    "ac.toml");
  REQUIRE(layers.yaml);
  CHECK(Section(*layers.yaml, "training").find("  recompute: selective  #") != std::string::npos);
  CHECK(MessagesAbout(layers, "every N-th").find("accel recomputes every block, not every N-th layer") !=
        std::string::npos);
}

TEST_CASE("torchtitan: float8 refuses the import", "[importers][torchtitan]") {
  testing::Imported out = Import("[float8]\nenable_float8_linear = true\n", "f8.toml");
  CHECK_FALSE(out.yaml);
  CHECK(out.messages ==
        "f8.toml:2:24: error[E0703]: torchtitan key 'float8.enable_float8_linear' = true cannot "
        "be expressed in accel: accel computes in fp32, bf16 or fp16, not float8\n"
        " enable_float8_linear = true\n"
        "                        ^\n");
}

// docs/planner-facts.md §9: torchtitan's expert parallelism with expert tensor parallel = tp is
// accel's parallel.expert.
TEST_CASE("torchtitan: expert_parallel_degree maps to parallel.expert", "[importers][torchtitan]") {
  testing::Imported ep = Import("[parallelism]\nexpert_parallel_degree = 8\n"
                                "expert_tensor_parallel_degree = 1\n", "ep.toml");
  INFO(ep.messages);
  REQUIRE(ep.yaml);
  CHECK(Section(*ep.yaml, "parallel").find("  expert: 8  # parallelism.expert_parallel_degree\n") !=
        std::string::npos);
  // With tensor parallel the expert tensor degree must follow it.
  testing::Imported tp = Import("[parallelism]\ntensor_parallel_degree = 2\n"
                                "expert_parallel_degree = 4\nexpert_tensor_parallel_degree = 2\n",
                                "tp.toml");
  INFO(tp.messages);
  REQUIRE(tp.yaml);
  CHECK(Section(*tp.yaml, "parallel").find("  expert: 4  #") != std::string::npos);
  testing::Imported etp = Import("[parallelism]\ntensor_parallel_degree = 2\n"
                                 "expert_parallel_degree = 4\nexpert_tensor_parallel_degree = 1\n",
                                 "etp.toml");
  CHECK_FALSE(etp.yaml);
  CHECK(etp.messages ==
        "etp.toml:4:33: error[E0703]: torchtitan key 'parallelism.expert_tensor_parallel_degree' = "
        "1 cannot be expressed in accel: expert_tensor_parallel_degree 1 differs from "
        "tensor_parallel_degree 2, and accel splits every routed expert over the tensor-parallel "
        "ranks\n"
        " expert_tensor_parallel_degree = 1\n"
        "                                 ^\n");
  testing::Imported absent = Import("[parallelism]\ntensor_parallel_degree = 2\n"
                                    "expert_parallel_degree = 4\n", "absent.toml");
  CHECK_FALSE(absent.yaml);
  CHECK(absent.messages ==
        "absent.toml:3:26: error[E0703]: torchtitan key 'parallelism.expert_parallel_degree' = 4 "
        "cannot be expressed in accel: expert_tensor_parallel_degree 1 (torchtitan's default) "
        "differs from tensor_parallel_degree 2, and accel splits every routed expert over the "
        "tensor-parallel ranks\n"
        " expert_parallel_degree = 4\n"
        "                          ^\n");
  // torchtitan's own MoE configs (tests/testdata/corpus/SOURCES.md): DeepSeek-V3 16B with
  // expert parallel 8, Llama 4 with expert tensor parallel 8 but no expert parallelism.
  ImportOptions moe = testing::TestOptions();
  moe.model_config = testing::TinyMoeModel();
  testing::Imported deepseek = Import(
      Corpus("2026-02_pre-refactor/torchtitan/models/deepseek_v3/train_configs/deepseek_v3_16b.toml"),
      "deepseek_v3_16b.toml", moe);
  INFO(deepseek.messages);
  REQUIRE(deepseek.yaml);
  CHECK(Section(*deepseek.yaml, "parallel").find("  expert: 8  # parallelism.expert_parallel_degree\n") !=
        std::string::npos);
  testing::Imported llama4 = Import(
      Corpus("2026-02_pre-refactor/torchtitan/models/llama4/train_configs/llama4_17bx16e.toml"),
      "llama4_17bx16e.toml", moe);
  INFO(llama4.messages);
  CHECK(llama4.yaml);
  // Without expert parallelism the expert tensor degree changes nothing (llama4's configs).
  testing::Imported off = Import("[parallelism]\nexpert_parallel_degree = 1\n"
                                 "expert_tensor_parallel_degree = 8\n", "off.toml");
  REQUIRE(off.yaml);
  CHECK(Section(*off.yaml, "parallel").find("expert") == std::string::npos);
}

TEST_CASE("torchtitan: malformed TOML is a located error", "[importers][torchtitan]") {
  testing::Imported out = Import("[training]\nsteps = = 10\n", "bad.toml");
  CHECK_FALSE(out.yaml);
  CHECK(out.messages ==
        "bad.toml:2:9: error[E0701]: not valid TOML: Error while parsing value: could not "
        "determine value type\n"
        " steps = = 10\n"
        "         ^\n");
  testing::Imported types = Import("[training]\nsteps = \"ten\"\n", "types.toml");
  CHECK_FALSE(types.yaml);
  CHECK(types.messages ==
        "types.toml:2:9: error[E0702]: 'training.steps' must be an integer, got string \"ten\"\n"
        " steps = \"ten\"\n"
        "         ^\n");
}

}  // namespace
}  // namespace accel::importers
