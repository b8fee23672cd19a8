#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/diag_codes.h"
#include "tests/importers/import_test_util.h"

namespace accel::importers {
namespace {

using testing::Import;

TEST_CASE("accelerate: a DeepSpeed ZeRO-2 launch config becomes a commented spec",
          "[importers][accelerate]") {
  testing::Imported out = Import(R"(compute_environment: LOCAL_MACHINE
deepspeed_config:
  gradient_accumulation_steps: 4
  gradient_clipping: 1.0
  offload_optimizer_device: cpu
  offload_param_device: none
  zero3_init_flag: false
  zero_stage: 2
distributed_type: DEEPSPEED
machine_rank: 0
main_process_ip: 10.0.0.1
mixed_precision: bf16
num_machines: 2
num_processes: 16
rdzv_backend: static
same_network: true
use_cpu: false
)",
                                 "zero2.yaml");
  REQUIRE(out.yaml);
  CHECK(*out.yaml == R"(# Imported by `accel import` from zero2.yaml (Accelerate config).
# Each comment names the source key a value came from.
# Left out at Accelerate's defaults: compute_environment, deepspeed_config.zero3_init_flag,
#   machine_rank, rdzv_backend, same_network
# Not imported (see the warnings): main_process_ip
version: 1
name: zero2  # the source file's name
model:
  config: models/llama-tiny/config.json  # --model
data:
  train:
    path: data/train.txt  # --data
  seq_len: 2048  # importer default: Accelerate configs do not give it (min(model max_seq_len, 2048))
  micro_batch_size: 1  # importer default: Accelerate configs do not give it
  grad_accum_steps: 4  # deepspeed_config.gradient_accumulation_steps
training:
  steps: 1000  # importer default: Accelerate configs do not give it
  grad_clip_norm: 1.0  # deepspeed_config.gradient_clipping
precision:
  params: bf16  # mixed_precision: bf16 (DeepSpeed stores 16-bit parameters)
  compute: bf16  # mixed_precision: bf16
  reduce: bf16  # mixed_precision: bf16 (DeepSpeed reduces in 16 bits)
parallel:
  data_replicate: 1  # deepspeed_config.zero_stage (sharded data parallel)
  data_shard: auto  # deepspeed_config.zero_stage (sharded data parallel)
sharding:
  stage: 2  # deepspeed_config.zero_stage
  offload: optimizer  # deepspeed_config.offload_optimizer_device: cpu
cluster:
  nodes: 2  # num_machines
  devices_per_node: 8  # num_processes / num_machines
  device: cuda  # distributed_type: DEEPSPEED
  device_memory: 80GiB  # importer assumption (an 80 GB GPU): set device_model or device_memory
)");
  CHECK(out.messages ==
        "zero2.yaml:11:1: warning[W0701]: Accelerate key 'main_process_ip' = \"10.0.0.1\" has no "
        "accel equivalent; not imported (accel run takes it as MASTER_ADDR)\n"
        " main_process_ip: 10.0.0.1\n"
        " ^\n");
}

TEST_CASE("accelerate: unknown keys are located warnings (the upstream invalid_keys.yaml)",
          "[importers][accelerate]") {
  std::ifstream in(std::string(ACCEL_SOURCE_ROOT) +
                   "/tests/testdata/corpus/configs/accelerate/tests/test_configs/invalid_keys.yaml");
  std::stringstream text;
  text << in.rdbuf();
  testing::Imported out = Import(text.str(), "invalid_keys.yaml");
  REQUIRE(out.yaml);
  CHECK(out.messages ==
        "invalid_keys.yaml:14:1: warning[W0701]: Accelerate key 'invalid_key' = \"invalid_value\" "
        "has no accel equivalent; not imported\n"
        " invalid_key: \"invalid_value\"\n"
        " ^\n"
        "invalid_keys.yaml:15:1: warning[W0701]: Accelerate key 'another_invalid_key' = "
        "\"another_invalid_value\" has no accel equivalent; not imported\n"
        " another_invalid_key: \"another_invalid_value\"\n"
        " ^\n");
}

TEST_CASE("accelerate: a near miss of a mapped key says did you mean", "[importers][accelerate]") {
  testing::Imported out = Import("distributed_type: MULTI_GPU\nnum_proceses: 4\n", "typo.yaml");
  REQUIRE(out.yaml);
  CHECK(out.messages ==
        "typo.yaml:2:1: warning[W0701]: Accelerate key 'num_proceses' = 4 has no accel "
        "equivalent; not imported; did you mean 'num_processes'?\n"
        " num_proceses: 4\n"
        " ^\n");
}

TEST_CASE("accelerate: FSDP strategies map to ZeRO stages", "[importers][accelerate]") {
  auto stage_of = [](const std::string& config) {
    testing::Imported out = Import("distributed_type: FSDP\nnum_processes: 8\n" + config, "f.yaml");
    REQUIRE(out.yaml);
    size_t at = out.yaml->find("  stage: ");
    REQUIRE(at != std::string::npos);
    return out.yaml->substr(at + 9, out.yaml->find('\n', at) - at - 9);
  };
  CHECK(stage_of("") == "3  # distributed_type: FSDP (FULL_SHARD default)");
  CHECK(stage_of("fsdp_config:\n  fsdp_sharding_strategy: SHARD_GRAD_OP\n") ==
        "2  # fsdp_config.fsdp_sharding_strategy");
  CHECK(stage_of("fsdp_config:\n  fsdp_sharding_strategy: 1\n") ==
        "3  # fsdp_config.fsdp_sharding_strategy");
  CHECK(stage_of("fsdp_config:\n  fsdp_version: 2\n  fsdp_reshard_after_forward: false\n") ==
        "2  # fsdp_config.fsdp_reshard_after_forward");
}

TEST_CASE("accelerate: what accel cannot express refuses the import", "[importers][accelerate]") {
  testing::Imported fp8 = Import("distributed_type: MULTI_GPU\nmixed_precision: fp8\n", "fp8.yaml");
  CHECK_FALSE(fp8.yaml);
  CHECK(fp8.messages ==
        "fp8.yaml:2:18: error[E0703]: Accelerate key 'mixed_precision' = \"fp8\" cannot be "
        "expressed in accel: accel computes in fp32, bf16 or fp16\n"
        " mixed_precision: fp8\n"
        "                  ^\n");
  testing::Imported xla = Import("distributed_type: XLA\n", "tpu.yaml");
  CHECK_FALSE(xla.yaml);
  REQUIRE(xla.sink.diagnostics().size() == 1);
  CHECK(xla.sink.diagnostics()[0].code == codes::kImportUnsupported);
}

// Accelerate's sp_size is DeepSpeed-Ulysses, its cp_size ring attention (torch's
// context_parallel): both become accel's context axis, with the method named.
TEST_CASE("accelerate: sp_size imports as Ulysses context parallelism, cp_size as ring", "[importers][accelerate]") {
  const std::string head = "distributed_type: MULTI_GPU\nnum_processes: 4\nparallelism_config:\n";
  testing::Imported sp = Import(head + "  parallelism_config_dp_shard_size: 2\n  parallelism_config_sp_size: 2\n",
                                "sp.yaml");
  REQUIRE(sp.yaml);
  CHECK_THAT(*sp.yaml, Catch::Contains("  context: 2  # parallelism_config.parallelism_config_sp_size\n"));
  CHECK_THAT(*sp.yaml, Catch::Contains("  context_method: ulysses  # parallelism_config.parallelism_config_sp_size "
                                       "(DeepSpeed-Ulysses all-to-all)\n"));
  testing::Imported cp = Import(head + "  parallelism_config_dp_shard_size: 2\n  parallelism_config_cp_size: 2\n",
                                "cp.yaml");
  REQUIRE(cp.yaml);
  CHECK_THAT(*cp.yaml, Catch::Contains("  context_method: ring  # parallelism_config.parallelism_config_cp_size "
                                       "(ring attention)\n"));
  testing::Imported both = Import(head + "  parallelism_config_cp_size: 2\n  parallelism_config_sp_size: 2\n",
                                  "both.yaml");
  CHECK_FALSE(both.yaml);
  CHECK(both.messages ==
        "both.yaml:5:31: error[E0703]: Accelerate key 'parallelism_config.parallelism_config_sp_size' = 2 "
        "cannot be expressed in accel: parallelism_config_cp_size is 2 too, and accel splits the sequence "
        "over one context axis, by ring attention or by Ulysses, not both\n"
        "   parallelism_config_sp_size: 2\n"
        "                               ^\n");
}

TEST_CASE("accelerate: wrong types are located errors", "[importers][accelerate]") {
  testing::Imported out = Import("num_processes: many\nuse_cpu: 3\n", "types.yaml");
  CHECK_FALSE(out.yaml);
  CHECK(out.messages ==
        "types.yaml:1:16: error[E0702]: 'num_processes' must be an integer, got string \"many\"\n"
        " num_processes: many\n"
        "                ^\n"
        "types.yaml:2:10: error[E0702]: 'use_cpu' must be true or false, got integer 3\n"
        " use_cpu: 3\n"
        "          ^\n");
}

TEST_CASE("accelerate: malformed YAML is a located syntax error", "[importers][accelerate]") {
  testing::Imported out = Import("distributed_type: [FSDP\nnum_processes: 2\n", "bad.yaml");
  CHECK_FALSE(out.yaml);
  REQUIRE(out.sink.error_count() >= 1);
  CHECK(out.sink.diagnostics()[0].code == "E0004");
  CHECK(out.sink.diagnostics()[0].location.known());
}

}  // namespace
}  // namespace accel::importers

namespace accel::importers {
namespace {

TEST_CASE("accelerate: a repeated key is a warning when it repeats the value, else an error",
          "[importers][accelerate]") {
  testing::Imported same = testing::Import("debug: false\nnum_processes: 1\ndebug: false\n", "dup.yaml");
  REQUIRE(same.yaml);
  CHECK(same.messages ==
        "dup.yaml:3:1: warning[W0702]: duplicate key 'debug' with the same value; the first is "
        "imported\n"
        " debug: false\n"
        " ^\n"
        "dup.yaml:1:1: note: first defined here\n");
  testing::Imported differ = testing::Import("use_cpu: false\nuse_cpu: true\n", "dup.yaml");
  CHECK_FALSE(differ.yaml);
  REQUIRE(differ.sink.diagnostics().size() == 1);
  CHECK(differ.sink.diagnostics()[0].code == "E0102");
}

}  // namespace
}  // namespace accel::importers

namespace accel::importers {
namespace {

TEST_CASE("accelerate: machines that do not divide the processes refuse the import",
          "[importers][accelerate]") {
  testing::Imported alone = testing::Import("num_machines: 2\n", "m.yaml");
  CHECK_FALSE(alone.yaml);
  CHECK(alone.messages ==
        "m.yaml:1:15: error[E0703]: Accelerate key 'num_machines' = 2 cannot be expressed in "
        "accel: num_processes 1 is not a multiple of num_machines 2, and accel needs the same "
        "number of devices on every node\n"
        " num_machines: 2\n"
        "               ^\n");
}

}  // namespace
}  // namespace accel::importers
