// Each writer's output for one job: Llama 3.1 8B over one node of eight H100s, FSDP (ZeRO-3),
// bf16, full recompute, micro batch 1 x 8 ranks x 8 accumulation steps = 64 sequences of 8192.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "exporters/exporter.h"
#include "tests/exporters/export_test_util.h"

namespace accel::exporters {
namespace {

using json = nlohmann::json;

ExportResult Export(TargetFormat target, const std::string& example = "llama-3-8b_8xh100_fsdp.yaml") {
  cli::CompiledJob job = testing::Compile(testing::Example(example));
  return ExportConfig(*job.job, job.planned.plan, target);
}

bool Has(const std::string& text, const std::string& line) { return text.find(line) != std::string::npos; }

TEST_CASE("DeepSpeed: batch, ZeRO-3, bf16, optimizer and schedule", "[exporters][deepspeed]") {
  ExportResult out = Export(TargetFormat::kDeepSpeed);
  INFO(out.text);
  const json ds = json::parse(out.text);
  CHECK(ds["train_batch_size"] == 64);
  CHECK(ds["train_micro_batch_size_per_gpu"] == 1);
  CHECK(ds["gradient_accumulation_steps"] == 8);
  CHECK(ds["zero_optimization"] == json{{"stage", 3}});
  CHECK(ds["bf16"] == json{{"enabled", true}});
  CHECK(ds["communication_data_type"] == "bf16");
  CHECK(ds["gradient_clipping"] == 1.0);
  CHECK(ds["optimizer"]["type"] == "AdamW");
  CHECK(ds["optimizer"]["params"]["lr"] == 2e-5);
  CHECK(ds["optimizer"]["params"]["betas"] == json{0.9, 0.95});
  CHECK(ds["scheduler"]["type"] == "WarmupCosineLR");
  CHECK(ds["scheduler"]["params"]["total_num_steps"] == 5000);
  CHECK(ds["scheduler"]["params"]["warmup_num_steps"] == 100);
  CHECK(ds["scheduler"]["params"]["cos_min_ratio"] == 0.1);
  CHECK_FALSE(ds.contains("tensor_parallel"));
  // The job's fp32-under-autocast parameters are not DeepSpeed's bf16 mode; recompute is code.
  CHECK(out.report.Names(aspect::kRecompute));
  CHECK(out.report.Names(aspect::kSeqLen));
  CHECK_FALSE(out.report.Names(aspect::kStage));
  CHECK_FALSE(out.report.Names(aspect::kGlobalBatch));
}

TEST_CASE("Accelerate: FSDP2 with parallelism_config and the report as comments", "[exporters][accelerate]") {
  ExportResult out = Export(TargetFormat::kAccelerate);
  INFO(out.text);
  for (const char* line : {"distributed_type: FSDP\n", "mixed_precision: bf16\n", "num_machines: 1\n",
                           "num_processes: 8\n", "use_cpu: false\n", "  fsdp_version: 2\n",
                           "  fsdp_reshard_after_forward: true\n", "  fsdp_offload_params: false\n",
                           "  fsdp_activation_checkpointing: true\n",
                           "  parallelism_config_dp_replicate_size: 1\n",
                           "  parallelism_config_dp_shard_size: 8\n", "  parallelism_config_tp_size: 1\n",
                           "  parallelism_config_cp_size: 1\n", "# Export report (accel export-config):\n",
                           "# not expressible:\n",
                           "#   batch.global: the training script's (Accelerate's config has no batch size)\n"}) {
    CHECK(Has(out.text, line));
  }
  CHECK_FALSE(out.report.Names(aspect::kStage));
  CHECK_FALSE(out.report.Names(aspect::kRecompute));
  CHECK(out.report.Names(aspect::kMicroBatch));
}

TEST_CASE("torchtitan: Trainer.Config.to_dict sections", "[exporters][torchtitan]") {
  ExportResult out = Export(TargetFormat::kTorchtitan);
  INFO(out.text);
  const json tt = json::parse(out.text);
  CHECK(tt["model_spec"] == json{{"name", "llama3"}, {"flavor", ""}});
  CHECK(tt["training"]["local_batch_size"] == 1);
  CHECK(tt["training"]["global_batch_size"] == 64);
  CHECK(tt["training"]["seq_len"] == 8192);
  CHECK(tt["training"]["steps"] == 5000);
  CHECK(tt["training"]["mixed_precision_param"] == "bfloat16");
  CHECK(tt["parallelism"]["data_parallel_shard_degree"] == 8);
  CHECK(tt["parallelism"]["data_parallel_replicate_degree"] == 1);
  CHECK(tt["parallelism"]["tensor_parallel_degree"] == 1);
  CHECK(tt["parallelism"]["fsdp_reshard_after_forward"] == "default");
  CHECK(tt["activation_checkpoint"]["mode"] == "full");
  CHECK(tt["lr_scheduler"]["decay_type"] == "cosine");
  CHECK(tt["lr_scheduler"]["min_lr_factor"] == 0.1);
  CHECK(tt["debug"]["seed"] == 1234);
  // The job reduces gradients in bf16; torchtitan's mixed_precision_reduce is float32 only.
  CHECK(tt["training"]["mixed_precision_reduce"] == "float32");
  CHECK(out.report.Names(aspect::kReduceDtype));
  CHECK(out.report.Names(aspect::kWorld));
}

// The dotted paths of every object key of `j`, in order.
void KeyPaths(const nlohmann::ordered_json& j, const std::string& prefix, std::vector<std::string>& out) {
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    out.push_back(prefix + key);
    KeyPaths(value, prefix + key + ".", out);
  }
}

TEST_CASE("torchtitan: every field of a real dump, in its order", "[exporters][torchtitan]") {
  // The corpus dump of torchtitan's llama3_8b registry config (tests/testdata/corpus/SOURCES.md).
  std::ifstream in(std::string(ACCEL_SOURCE_ROOT) +
                   "/tests/testdata/corpus/configs/torchtitan/2026-02_config_dumps/llama3_8b.json");
  std::stringstream dump;
  dump << in.rdbuf();
  std::vector<std::string> exported, real;
  KeyPaths(nlohmann::ordered_json::parse(Export(TargetFormat::kTorchtitan).text), "", exported);
  KeyPaths(nlohmann::ordered_json::parse(dump.str()), "", real);
  CHECK(exported == real);
}

TEST_CASE("torchtitan: pipeline schedules by their torchtitan names", "[exporters][torchtitan]") {
  const json tt = json::parse(Export(TargetFormat::kTorchtitan, "llama-mini_cpu4_zbv.yaml").text);
  CHECK(tt["parallelism"]["pipeline_parallel_schedule"] == "ZBVZeroBubble");
}

TEST_CASE("Megatron-LM: a bash array and the torchrun line", "[exporters][megatron]") {
  ExportResult out = Export(TargetFormat::kMegatron);
  INFO(out.text);
  for (const char* line : {"#!/bin/bash\n", "GPT_ARGS=(\n", "    --num-layers 32\n", "    --hidden-size 4096\n",
                           "    --num-attention-heads 32\n", "    --group-query-attention\n",
                           "    --num-query-groups 8\n", "    --position-embedding-type rope\n",
                           "    --swiglu\n", "    --normalization RMSNorm\n",
                           "    --tensor-model-parallel-size 1\n", "    --pipeline-model-parallel-size 1\n",
                           "    --use-megatron-fsdp\n",
                           "    --data-parallel-sharding-strategy optim_grads_params\n",
                           "    --seq-length 8192\n", "    --micro-batch-size 1\n",
                           "    --global-batch-size 64\n", "    --bf16\n", "    --grad-reduce-in-bf16\n",
                           "    --recompute-granularity full\n", "    --lr 2e-05\n",
                           "    --lr-decay-style cosine\n", "    --train-iters 5000\n",
                           "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py \"${GPT_ARGS[@]}\"\n",
                           "# Export report (accel export-config):\n"}) {
    CHECK(Has(out.text, line));
  }
  CHECK_FALSE(out.report.Names(aspect::kGlobalBatch));
  CHECK_FALSE(out.report.Names(aspect::kStage));
}

TEST_CASE("Megatron-LM: interleaved pipeline as layers per virtual stage", "[exporters][megatron]") {
  ExportResult out = Export(TargetFormat::kMegatron, "llama-2-70b_16x8xh100_3d.yaml");
  INFO(out.text);
  CHECK(Has(out.text, "    --pipeline-model-parallel-size "));
  CHECK(Has(out.text, "torchrun --nproc_per_node 8 --nnodes 16 pretrain_gpt.py"));
}

TEST_CASE("Megatron-LM: Qwen3's per-head q/k norms and head width", "[exporters][megatron]") {
  ExportResult out = Export(TargetFormat::kMegatron, "qwen3-tiny_cpu4_tp2.yaml");
  INFO(out.text);
  CHECK(Has(out.text, "    --qk-layernorm\n"));
  CHECK(Has(out.text, "    --kv-channels 64\n"));
}

// OLMo 2's and Gemma's blocks have no Megatron-LM arguments: the report says so for the model.
TEST_CASE("Megatron-LM: OLMo 2's and Gemma 2's blocks are not expressible", "[exporters][megatron]") {
  for (const char* spec : {"olmo2-tiny_cpu4_pp2.yaml", "gemma2-tiny_cpu4_tp2.yaml"}) {
    ExportResult out = Export(TargetFormat::kMegatron, spec);
    INFO(out.text);
    CHECK(Has(out.text, "#   model: "));
    CHECK(Has(out.text, "'s block (norms after the sublayers, and for gemma GeGLU, x*(1 + w) norms, scaled "
                        "embeddings, soft caps, sliding windows) has no Megatron-LM arguments: the arguments "
                        "written build Llama's block\n"));
  }
  CHECK_FALSE(Has(Export(TargetFormat::kMegatron, "qwen3-tiny_cpu4_tp2.yaml").text, "has no Megatron-LM arguments"));
}

}  // namespace
}  // namespace accel::exporters
