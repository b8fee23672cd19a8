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
  CHECK_FALSE(ParseFormatName("megatron"));
}

}  // namespace
}  // namespace accel::importers
