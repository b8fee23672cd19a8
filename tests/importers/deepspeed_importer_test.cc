#include <catch2/catch.hpp>

#include "common/diag_codes.h"
#include "tests/importers/import_test_util.h"

namespace accel::importers {
namespace {

using testing::Import;

TEST_CASE("deepspeed: \"auto\" becomes accel's auto where the field has it, else a note",
          "[importers][deepspeed]") {
  testing::Imported out = Import(R"({
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": 4,
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": "auto",
  "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": [0.9, 0.95], "eps": 1e-8}},
  "scheduler": {"type": "WarmupCosineLR", "params": {"warmup_num_steps": "auto", "total_num_steps": 5000}},
  "bf16": {"enabled": "auto"},
  "zero_optimization": {"stage": 2, "reduce_bucket_size": "auto", "overlap_comm": true}
}
)",
                                 "hf.json");
  REQUIRE(out.yaml);
  CHECK(out.messages.empty());
  CHECK(*out.yaml == R"(# Imported by `accel import` from hf.json (DeepSpeed config).
# Each comment names the source key a value came from.
# Left out at DeepSpeed's defaults: zero_optimization.overlap_comm
version: 1
name: hf  # the source file's name
model:
  config: models/llama-tiny/config.json  # --model
data:
  train:
    path: data/train.txt  # --data
  seq_len: 2048  # importer default: DeepSpeed configs do not give it (min(model max_seq_len, 2048))
  micro_batch_size: 4  # train_micro_batch_size_per_gpu
  global_batch_size: auto  # train_batch_size: "auto"
  grad_accum_steps: auto  # gradient_accumulation_steps: "auto"
training:
  # grad_clip_norm omitted: gradient_clipping is "auto", which accel's training.grad_clip_norm does not accept
  # optimizer.lr omitted: optimizer.params.lr is "auto", which accel's training.optimizer.lr does not accept
  # lr_schedule.warmup_steps omitted: scheduler.params.warmup_num_steps is "auto", which accel's training.lr_schedule.warmup_steps does not accept
  steps: 5000  # scheduler.params.total_num_steps
  optimizer:
    name: adamw  # optimizer.type
    betas: [0.9, 0.95]  # optimizer.params.betas
    eps: 1e-08  # optimizer.params.eps
    weight_decay: 0.0  # optimizer.params.weight_decay absent (DeepSpeed default)
  lr_schedule:
    name: cosine  # scheduler.type: WarmupCosineLR
precision: {}
  # bf16 not imported: bf16.enabled is "auto" (the Trainer's --bf16 decides)
parallel:
  data_replicate: 1  # zero_optimization.stage (ZeRO shards over all data-parallel ranks)
  data_shard: auto  # zero_optimization.stage (ZeRO shards over all data-parallel ranks)
sharding:
  stage: 2  # zero_optimization.stage
  bucket_size: auto  # zero_optimization.reduce_bucket_size: "auto"
cluster:
  devices_per_node: 1  # importer default: DeepSpeed configs do not give it (the launcher does): set the real count
  device: cuda  # DeepSpeed trains on GPUs
  device_memory: 80GiB  # importer assumption (an 80 GB GPU): set device_model or device_memory
)");
}

TEST_CASE("deepspeed: numeric batch sizes give the world size", "[importers][deepspeed]") {
  testing::Imported out = Import(R"({"train_batch_size": 256, "train_micro_batch_size_per_gpu": 4,
 "gradient_accumulation_steps": 2, "fp16": {"enabled": true, "loss_scale": 0},
 "zero_optimization": {"stage": 3, "offload_param": {"device": "cpu"}}})",
                                 "ds.json");
  REQUIRE(out.yaml);
  CHECK(out.yaml->find("  nodes: 4  # train_batch_size / (train_micro_batch_size_per_gpu x "
                       "gradient_accumulation_steps) = 32 ranks, 8 per node\n") != std::string::npos);
  CHECK(out.yaml->find("  loss_scaling: dynamic  # fp16.loss_scale: 0 (dynamic)\n") != std::string::npos);
  CHECK(out.yaml->find("  offload: all  # zero_optimization.offload_param.device: cpu\n") != std::string::npos);
  CHECK(out.yaml->find("  grad_clip_norm: 0.0  # gradient_clipping absent (DeepSpeed's 0: no clipping)\n") !=
        std::string::npos);
}

TEST_CASE("deepspeed: an unmapped key is a located warning with its key path",
          "[importers][deepspeed]") {
  testing::Imported out = Import(
      "{\n  \"zero_optimization\": {\n    \"stage\": 1,\n    \"round_robin_gradients\": true\n  },\n"
      "  \"gradient_accumulation_steps \": 4\n}\n",
      "ds.json");
  REQUIRE(out.yaml);
  CHECK(out.messages ==
        "ds.json:4:5: warning[W0701]: DeepSpeed key 'zero_optimization.round_robin_gradients' = "
        "true has no accel equivalent; not imported\n"
        "     \"round_robin_gradients\": true\n"
        "     ^\n"
        "ds.json:6:3: warning[W0701]: DeepSpeed key 'gradient_accumulation_steps ' = 4 has no "
        "accel equivalent; not imported; did you mean 'gradient_accumulation_steps'?\n"
        "   \"gradient_accumulation_steps \": 4\n"
        "   ^\n");
}

TEST_CASE("deepspeed: malformed JSON is a located error, not a crash", "[importers][deepspeed]") {
  testing::Imported out = Import("{\n  \"train_batch_size\": 8\n  \"fp16\": {}\n}\n", "bad.json");
  CHECK_FALSE(out.yaml);
  CHECK(out.messages ==
        "bad.json:3:3: error[E0701]: not valid JSON: syntax error while parsing object - "
        "unexpected string literal; expected '}'\n"
        "   \"fp16\": {}\n"
        "   ^\n");
  testing::Imported deep = Import(std::string(10000, '[') + std::string(10000, ']'), "deep.json");
  CHECK_FALSE(deep.yaml);
  REQUIRE(deep.sink.diagnostics().size() == 1);
  CHECK(deep.sink.diagnostics()[0].code == codes::kImportSyntax);
}

TEST_CASE("deepspeed: optimizers and schedules accel lacks refuse the import",
          "[importers][deepspeed]") {
  testing::Imported out = Import(R"({"optimizer": {"type": "Lamb", "params": {"lr": 0.001}}})", "lamb.json");
  CHECK_FALSE(out.yaml);
  CHECK(out.messages ==
        "lamb.json:1:24: error[E0703]: DeepSpeed key 'optimizer.type' = \"Lamb\" cannot be "
        "expressed in accel: accel's optimizers are adamw and sgd\n"
        " {\"optimizer\": {\"type\": \"Lamb\", \"params\": {\"lr\": 0.001}}}\n"
        "                        ^\n");
  testing::Imported types = Import(R"({"train_batch_size": "32"})", "types.json");
  CHECK_FALSE(types.yaml);
  CHECK(types.sink.diagnostics()[0].code == codes::kImportWrongType);
}

}  // namespace
}  // namespace accel::importers
