// `accel export-config`'s usage errors and outputs, through RunExportConfigCommand.
#include <catch2/catch.hpp>

#include <sstream>

#include "cli/export_config_command.h"
#include "common/exit_codes.h"
#include "tests/exporters/export_test_util.h"

namespace accel::cli {
namespace {

struct Ran {
  int code = 0;
  std::string out, err;
};

Ran Run(const std::string& spec, const std::string& to, const std::string& output = "",
        std::vector<std::string> overrides = {}) {
  ExportConfigOptions options;
  options.spec = spec;
  options.to = to;
  options.output = output;
  options.overrides = std::move(overrides);
  std::ostringstream out, err;
  Ran ran;
  ran.code = RunExportConfigCommand(options, out, err);
  ran.out = out.str();
  ran.err = err.str();
  return ran;
}

TEST_CASE("export-config: an unknown --to is a usage error with a suggestion", "[exporters][cli]") {
  Ran ran = Run(exporters::testing::Example("gpt2-small_cpu2_dp.yaml"), "deepspeeed");
  CHECK(ran.code == kExitUsage);
  CHECK(ran.out.empty());
  CHECK(ran.err == "error: unknown --to 'deepspeeed'; did you mean 'deepspeed'? "
                   "(deepspeed, accelerate, torchtitan, megatron)\n");
  CHECK(Run(exporters::testing::Example("gpt2-small_cpu2_dp.yaml"), "xla").err ==
        "error: unknown --to 'xla' (deepspeed, accelerate, torchtitan, megatron)\n");
}

TEST_CASE("export-config: -o naming the job file is refused", "[exporters][cli]") {
  const std::string spec = exporters::testing::Example("gpt2-small_cpu2_dp.yaml");
  Ran ran = Run(spec, "megatron", spec);
  CHECK(ran.code == kExitUsage);
  CHECK(ran.err == "error: -o " + spec + " is the job spec being exported (" + spec +
                       "): refusing to overwrite it\n");
}

TEST_CASE("export-config: a job that does not load is exit 1 with located errors", "[exporters][cli]") {
  Ran ran = Run("tests/testdata/no-such-job.yaml", "torchtitan");
  CHECK(ran.code == kExitInvalid);
  CHECK(ran.out.empty());
  CHECK(ran.err.find("tests/testdata/no-such-job.yaml") != std::string::npos);
  CHECK(ran.err.find("accel export-config: tests/testdata/no-such-job.yaml not exported\n") != std::string::npos);
}

TEST_CASE("export-config: a job that does not plan is exit 1 with the planner's located error", "[exporters][cli]") {
  const std::string spec = exporters::testing::Example("gpt2-small_cpu2_dp.yaml");
  Ran ran = Run(spec, "megatron", "", {"parallel.tensor=3"});
  CHECK(ran.code == kExitInvalid);
  CHECK(ran.out.empty());
  CHECK(ran.err.find(spec + ":26:28: error[E0401]: world size 2 is not divisible by dp_shard(1) * tp(3) * "
                            "pp(1) = 3, so data_replicate: auto has no integer value [resolve-auto]\n") == 0);
  CHECK(ran.err.find("planning stopped in pass resolve-auto\naccel export-config: " + spec + " not exported\n") !=
        std::string::npos);
}

TEST_CASE("export-config: the config on stdout, the report on stderr", "[exporters][cli]") {
  Ran ran = Run(exporters::testing::Example("gpt2-small_cpu2_dp.yaml"), "deepspeed");
  CHECK(ran.code == kExitOk);
  CHECK(ran.out.rfind("{\n  \"train_batch_size\": ", 0) == 0);
  CHECK(ran.err.find(" -> <stdout> (deepspeed)\nexact:\n  batch.global: train_batch_size\n") != std::string::npos);
  CHECK(ran.err.find("not expressible:\n") != std::string::npos);
}

}  // namespace
}  // namespace accel::cli
