// torchtitan's 2026 config dumps (Trainer.Config.to_dict() JSON, --debug.save_config_file):
// detected, imported like the TOML form, and located errors pointing into the JSON.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "common/diag_codes.h"
#include "importers/source_format.h"
#include "tests/importers/import_test_util.h"

namespace accel::importers {
namespace {

using testing::Import;

// A dump of the corpus (tests/testdata/corpus/configs/torchtitan/2026-02_config_dumps; how they
// were derived is in tests/testdata/corpus/SOURCES.md).
std::string Dump(const std::string& name) {
  std::ifstream in(std::string(ACCEL_SOURCE_ROOT) +
                   "/tests/testdata/corpus/configs/torchtitan/2026-02_config_dumps/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

TEST_CASE("torchtitan JSON: a .json with model_spec or parallelism is torchtitan's", "[importers][torchtitan][json]") {
  CHECK(DetectSourceFormat("job_config.json", Dump("llama3_8b.json")) == SourceFormat::kTorchtitan);
  CHECK(DetectSourceFormat("dump", "{\"parallelism\": {}}") == SourceFormat::kTorchtitan);
  CHECK(DetectSourceFormat("ds_config.json", "{\"train_batch_size\": 8}") == SourceFormat::kDeepSpeed);
}

TEST_CASE("torchtitan JSON: the llama3 8B dump imports like its TOML", "[importers][torchtitan][json]") {
  testing::Imported out = Import(Dump("llama3_8b.json"), "llama3_8b.json");
  INFO(out.messages);
  REQUIRE(out.yaml);
  INFO(*out.yaml);
  for (const char* line : {
           "# Imported by `accel import` from llama3_8b.json (torchtitan config).\n",
           "  # torchtitan model.name/flavor: llama3 8B; accel reads the dimensions from model.config\n",
           "  seq_len: 8192  # training.seq_len\n",
           "  micro_batch_size: 1  # training.local_batch_size\n",
           "  global_batch_size: auto  # training.global_batch_size: -1\n",
           "  steps: 1000  # training.steps\n",
           "    lr: 0.0003  # optimizer.lr\n",
           "  recompute: op  # activation_checkpoint.selective_ac_option\n",
           "  compute: bf16  # training.mixed_precision_param: bfloat16\n",
           "  params: fp32  # FSDP2 mixed precision keeps fp32 parameters\n",
           "  data_shard: auto  # parallelism.data_parallel_shard_degree: -1\n",
           "  stage: 3  # parallelism.data_parallel_shard_degree (FSDP2), "
           "parallelism.fsdp_reshard_after_forward: default\n",
       }) {
    CHECK(Has(*out.yaml, line));
  }
  // Logging and launcher settings warn, located in the JSON, as in the TOML form.
  CHECK(Has(out.messages, "llama3_8b.json:8:3: warning[W0701]: torchtitan key 'profiling'"));
  CHECK_FALSE(out.sink.HasErrors());
}

TEST_CASE("torchtitan JSON: every registry dump of the corpus imports", "[importers][torchtitan][json]") {
  for (const char* name : {"llama3_70b.json", "qwen3_32b.json", "deepseek_v3_16b.json"}) {
    ImportOptions options = testing::TestOptions();
    if (std::string(name) == "deepseek_v3_16b.json") options.model_config = testing::TinyMoeModel();
    testing::Imported out = Import(Dump(name), name, options);
    INFO(name << "\n" << out.messages);
    REQUIRE(out.yaml);
    if (std::string(name) == "llama3_70b.json") {
      CHECK(Has(*out.yaml, "  tensor: 8  # parallelism.tensor_parallel_degree\n"));
      CHECK(Has(*out.yaml, "  recompute: full  # activation_checkpoint.mode\n"));
    }
    if (std::string(name) == "deepseek_v3_16b.json") {
      CHECK(Has(*out.yaml, "  expert: 8  # parallelism.expert_parallel_degree\n"));
    }
  }
}

TEST_CASE("torchtitan JSON: errors are located at the value, with the key path", "[importers][torchtitan][json]") {
  testing::Imported wrong = Import(R"({
  "model_spec": {"name": "llama3", "flavor": "8B"},
  "training": {
    "local_batch_size": "eight"
  }
})", "dump.json");
  CHECK_FALSE(wrong.yaml);
  CHECK(wrong.messages ==
        "dump.json:4:25: error[E0702]: 'training.local_batch_size' must be an integer, got string \"eight\"\n"
        "     \"local_batch_size\": \"eight\"\n"
        "                         ^\n");

  testing::Imported fp8 = Import(R"({
  "model_spec": {"name": "llama3", "flavor": "8B"},
  "model_converters": {"converters": [{"enable_fsdp_float8_all_gather": true}]}
})", "dump.json");
  CHECK_FALSE(fp8.yaml);
  CHECK(Has(fp8.messages, "dump.json:3:38: error[E0703]: torchtitan key 'model_converters.converters'"));

  testing::Imported syntax = Import("{\n  \"parallelism\": {\"tensor_parallel_degree\": 2,}\n}\n", "dump.json");
  CHECK_FALSE(syntax.yaml);
  CHECK(Has(syntax.messages, "dump.json:2:"));
  CHECK(Has(syntax.messages, "error[E0701]: not valid JSON"));

  testing::Imported schedule = Import(R"({
  "parallelism": {"pipeline_parallel_degree": 2, "pipeline_parallel_schedule": "DualPipeV"}
})", "dump.json");
  CHECK_FALSE(schedule.yaml);
  CHECK(Has(schedule.messages, "dump.json:2:80: error[E0703]: torchtitan key 'parallelism.pipeline_parallel_schedule'"));
}

}  // namespace
}  // namespace accel::importers
