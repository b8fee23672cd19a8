#include <catch2/catch.hpp>

#include "importers/source_format.h"

namespace accel::importers {
namespace {

TEST_CASE("source format: extension first, then content", "[importers][format]") {
  CHECK(DetectSourceFormat("ds_config.json", "") == SourceFormat::kDeepSpeed);
  CHECK(DetectSourceFormat("x/llama3_8b.TOML", "") == SourceFormat::kTorchtitan);
  CHECK(DetectSourceFormat("sp.accelerate-config.yml", "{}") == SourceFormat::kAccelerate);
  CHECK(DetectSourceFormat("config", "# c\n  {\"a\": 1}") == SourceFormat::kDeepSpeed);
  CHECK(DetectSourceFormat("config", "# c\n[job]\nx = 1\n") == SourceFormat::kTorchtitan);
  CHECK(DetectSourceFormat("config", "distributed_type: FSDP\n") == SourceFormat::kAccelerate);
  CHECK(DetectSourceFormat("config", "tpu_env: []\n") == SourceFormat::kAccelerate);
  CHECK(ParseFormatName("deepspeed") == SourceFormat::kDeepSpeed);
  CHECK(ParseFormatName("megatron") == SourceFormat::kMegatron);
  CHECK_FALSE(ParseFormatName("nemo"));
  CHECK(DetectSourceFormat("train_gpt3.sh", "") == SourceFormat::kMegatron);
  CHECK(DetectSourceFormat("gpt.args", "") == SourceFormat::kMegatron);
  CHECK(DetectSourceFormat("launch", "#!/bin/bash\ntorchrun x.py\n") == SourceFormat::kMegatron);
  CHECK(DetectSourceFormat("args", "# model\n--num-layers 2\n") == SourceFormat::kMegatron);
  CHECK(DetectSourceFormat("config", "---\nkey: 1\n") == SourceFormat::kAccelerate);
}

}  // namespace
}  // namespace accel::importers
