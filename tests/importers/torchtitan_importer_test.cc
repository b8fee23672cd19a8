#include <catch2/catch.hpp>

#include "common/diag_codes.h"
#include "tests/importers/import_test_util.h"

namespace accel::importers {
namespace {

using testing::Import;

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

TEST_CASE("torchtitan: float8 and MoE refuse the import", "[importers][torchtitan]") {
  testing::Imported out = Import("[float8]\nenable_float8_linear = true\n\n[parallelism]\n"
                                 "expert_parallel_degree = 8\n",
                                 "moe.toml");
  CHECK_FALSE(out.yaml);
  CHECK(out.messages ==
        "moe.toml:2:24: error[E0703]: torchtitan key 'float8.enable_float8_linear' = true cannot "
        "be expressed in accel: accel computes in fp32, bf16 or fp16, not float8\n"
        " enable_float8_linear = true\n"
        "                        ^\n"
        "moe.toml:5:26: error[E0703]: torchtitan key 'parallelism.expert_parallel_degree' = 8 "
        "cannot be expressed in accel: accel trains dense models: mixture-of-experts parallelism "
        "is not planned\n"
        " expert_parallel_degree = 8\n"
        "                          ^\n");
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
