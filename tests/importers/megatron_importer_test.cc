#include <catch2/catch.hpp>

#include <sstream>

#include "common/diag_codes.h"
#include "planner/planner.h"
#include "spec/loader.h"
#include "tests/importers/import_test_util.h"

namespace accel::importers {
namespace {

using testing::Import;

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

// Options with no --model: the script's own model arguments are the model.
ImportOptions OwnModel() {
  ImportOptions options = testing::TestOptions();
  options.model_config.clear();
  return options;
}

constexpr const char* kScript = R"(#!/bin/bash
GPUS_PER_NODE=8
MODEL_ARGS=(
    --num-layers 4
    --hidden-size 256
    --num-attention-heads 8
    --group-query-attention
    --num-query-groups 2
    --seq-length 512
    --max-position-embeddings 1024
    --position-embedding-type rope
    --swiglu
    --normalization RMSNorm
    --untie-embeddings-and-output-weights
    --disable-bias-linear
    --vocab-size 32000
)
TRAINING_ARGS=(
    --micro-batch-size 2
    --global-batch-size 64
    --train-iters 1000
    --lr 3e-4 --min-lr 3e-5 --lr-decay-style cosine --lr-warmup-iters 100
    --weight-decay 0.1 --adam-beta1 0.9 --adam-beta2 0.95 --clip-grad 1.0
    --bf16
    --recompute-granularity selective
    --use-distributed-optimizer
    --save-interval 500
)
PARALLEL_ARGS=(
    --tensor-model-parallel-size 2
    --pipeline-model-parallel-size 2
    --sequence-parallel
)
torchrun --nproc_per_node $GPUS_PER_NODE --nnodes 1 pretrain_gpt.py \
    ${MODEL_ARGS[@]} ${TRAINING_ARGS[@]} ${PARALLEL_ARGS[@]} --frobnicate 3
)";

TEST_CASE("megatron: a launch script becomes a commented spec that validates",
          "[importers][megatron]") {
  testing::Imported out = Import(kScript, "train.sh", OwnModel());
  INFO(out.messages);
  REQUIRE(out.yaml);
  CHECK(Section(*out.yaml, "model") ==
        "model:\n"
        "  arch: llama  # --position-embedding-type rope, --swiglu, --normalization RMSNorm\n"
        "  hidden_size: 256  # --hidden-size\n"
        "  num_layers: 4  # --num-layers\n"
        "  num_heads: 8  # --num-attention-heads\n"
        "  num_kv_heads: 2  # --num-query-groups\n"
        "  ffn_hidden_size: 640  # --ffn-hidden-size absent (Megatron-LM default int(4h * 2/3 / 64) * 64)\n"
        "  vocab_size: 32000  # --vocab-size = 32000 padded to a multiple of 256 (--make-vocab-size-divisible-by × tp)\n"
        "  max_seq_len: 1024  # --max-position-embeddings\n"
        "  tie_word_embeddings: false  # --untie-embeddings-and-output-weights\n"
        "  rope_theta: 10000.0  # --rotary-base absent (Megatron-LM default)\n");
  CHECK(Section(*out.yaml, "parallel") ==
        "parallel:\n"
        "  data_replicate: 1  # --use-distributed-optimizer (optimizer states sharded over data parallel: ZeRO-1)\n"
        "  data_shard: auto  # --use-distributed-optimizer (optimizer states sharded over data parallel: ZeRO-1)\n"
        "  context: 1  # --context-parallel-size absent: 1\n"
        "  tensor: 2  # --tensor-model-parallel-size\n"
        "  pipeline: 2  # --pipeline-model-parallel-size\n"
        "  sequence_parallel: true  # --sequence-parallel\n"
        "  pipeline_schedule: 1f1b  # Megatron-LM's pipeline schedule without a virtual pipeline\n");
  CHECK(out.yaml->find("  stage: 1  # --use-distributed-optimizer") != std::string::npos);
  CHECK(out.yaml->find("  min_lr_ratio: 0.1  # --min-lr / --lr\n") != std::string::npos);
  CHECK(out.yaml->find("  recompute: selective  # --recompute-granularity\n") != std::string::npos);
  CHECK(out.yaml->find("  compute: bf16  # --bf16\n") != std::string::npos);
  CHECK(out.yaml->find("  devices_per_node: 8  # --nproc_per_node\n") != std::string::npos);
  CHECK(out.messages ==
        "train.sh:35:62: warning[W0701]: Megatron-LM key '--frobnicate' = 3 has no accel equivalent; not imported\n"
        "     ${MODEL_ARGS[@]} ${TRAINING_ARGS[@]} ${PARALLEL_ARGS[@]} --frobnicate 3\n"
        "                                                              ^\n");
  // The spec loads and plans (as `accel validate`).
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<spec::JobSpec> job =
      spec::LoadJobSpecFromString(*out.yaml, testing::SpecPath(), spec::LoadOptions{}, sink, sources);
  if (job) planner::CheckSpec(*job, sink);
  INFO(RenderText(sink.diagnostics(), sources));
  CHECK((job && !sink.HasErrors()));
}

// The first diagnostic rendered, for exact comparisons.
std::string Only(const std::string& text, const std::string& file = "t.sh") {
  testing::Imported out = Import(text, file, OwnModel());
  return out.messages;
}

TEST_CASE("megatron: Qwen3's --qk-layernorm and --kv-channels set q/k norms and the head width",
          "[importers][megatron]") {
  std::string script = kScript;
  script.replace(script.find("    --vocab-size 32000\n"), 0, "    --qk-layernorm\n    --kv-channels 64\n");
  testing::Imported out = Import(script, "train.sh", OwnModel());
  INFO(out.messages);
  REQUIRE(out.yaml);
  CHECK(out.yaml->find("  head_dim: 64  # --kv-channels\n") != std::string::npos);
  CHECK(out.yaml->find("  qk_norm: true  # --qk-layernorm\n") != std::string::npos);
}

TEST_CASE("megatron: located refusals and warnings", "[importers][megatron]") {
  CHECK(Only("torchrun pretrain_gpt.py --num-layers 2 --fp8-format hybrid\n") ==
        "t.sh:1:54: error[E0703]: Megatron-LM key '--fp8-format' = \"hybrid\" cannot be expressed in accel: accel computes in fp32, bf16 or fp16, not fp8\n"
        " torchrun pretrain_gpt.py --num-layers 2 --fp8-format hybrid\n"
        "                                                      ^\n");
  CHECK(Only("SAVE=$1\ntorchrun pretrain_gpt.py --save $SAVE\n") ==
        "t.sh:2:33: warning[W0701]: Megatron-LM key '--save' = \"$SAVE\" refers to $SAVE, which the script does not set; not imported\n"
        " torchrun pretrain_gpt.py --save $SAVE\n"
        "                                 ^\n");
  CHECK(Only("if [ -n \"$X\" ]; then\n  A=(--bf16)\nelse\n  A=(--fp16)\nfi\ntorchrun pretrain_gpt.py ${A[@]}\n") ==
        "t.sh:4:6: warning[W0701]: Megatron-LM key '--fp16' is in an elif/else branch, which accel does not read (it reads the first branch of an if); not imported\n"
        "   A=(--fp16)\n"
        "      ^\n");
  CHECK(Only("torchrun pretrain_gpt.py ${EXTRA[@]}\n") ==
        "t.sh:1:26: warning[W0701]: Megatron-LM key '${EXTRA[@]}' cannot be read: the script does not set ${EXTRA[@]}, so the arguments it holds are unknown; not imported\n"
        " torchrun pretrain_gpt.py ${EXTRA[@]}\n"
        "                          ^\n");
  CHECK(Only("echo nothing to launch\n") ==
        "t.sh:1:1: error[E0704]: no Megatron-LM arguments found: expected a launch command running a training script (pretrain_gpt.py) or lines of --flag value\n"
        " echo nothing to launch\n"
        " ^\n");
  CHECK(Only("--tensor-model-parallel-size 2\n--expert-model-parallel-size 2\n--expert-tensor-parallel-size 1\n--num-experts 4\n") ==
        "t.sh:3:31: error[E0703]: Megatron-LM key '--expert-tensor-parallel-size' = 1 cannot be expressed in accel: it differs from --tensor-model-parallel-size 2, and accel splits every routed expert over the tensor-parallel ranks\n"
        " --expert-tensor-parallel-size 1\n"
        "                               ^\n");
  CHECK(Only("--position-embedding-type rope\n--normalization RMSNorm\n") ==
        "t.sh:1:27: error[E0703]: Megatron-LM key '--position-embedding-type' = \"rope\" without --swiglu cannot be expressed in accel: accel's models are llama (rope, --swiglu, RMSNorm) and gpt2 (learned positions, GELU, LayerNorm), and --position-embedding-type rope makes this one llama\n"
        " --position-embedding-type rope\n"
        "                           ^\n");
  CHECK(Only("torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 4 --global-batch-size 8\n") ==
        "t.sh:1:86: error[E0703]: Megatron-LM key '--global-batch-size' = 8 cannot be expressed in accel: it is not a multiple of --micro-batch-size 4 × 8 data-parallel ranks\n"
        " torchrun --nproc_per_node 8 pretrain_gpt.py --micro-batch-size 4 --global-batch-size 8\n"
        "                                                                                      ^\n");
}

TEST_CASE("megatron: too few ranks for the degrees grow the nodes, with a warning",
          "[importers][megatron]") {
  testing::Imported out = Import(
      "torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py --pipeline-model-parallel-size 4 "
      "--num-layers 8 --hidden-size 64 --num-attention-heads 4 --expert-model-parallel-size 8 "
      "--num-experts 8 --swiglu --normalization RMSNorm --position-embedding-type rope\n",
      "t.sh", OwnModel());
  REQUIRE(out.yaml);
  CHECK(out.messages.starts_with(
      "t.sh:1:38: warning[W0701]: Megatron-LM key '--nnodes' = 1 gives 8 ranks, fewer than the parallel degrees need (32); not imported: the job has 4 nodes\n"));
  CHECK(out.yaml->find("  nodes: 4  # the product of the parallel degrees, 8 per node\n") != std::string::npos);
  CHECK(out.yaml->find("  expert: 8  # --expert-model-parallel-size\n") != std::string::npos);
  CHECK(out.yaml->find("    experts_per_token: 2  # --moe-router-topk absent (Megatron-LM default)\n") != std::string::npos);
}

TEST_CASE("megatron: a plain python launch is one process, --model replaces the script's model",
          "[importers][megatron]") {
  testing::Imported out = Import("python pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4\n", "t.sh");
  REQUIRE(out.yaml);
  CHECK(out.yaml->find("  devices_per_node: 1  # --nproc_per_node absent: one process (torchrun's default)\n") != std::string::npos);
  CHECK(Section(*out.yaml, "model") ==
        "model:\n"
        "  # vocab_size: the script leaves it to its tokenizer\n"
        "  # the source's model arguments not used: --model names the model\n"
        "  config: models/llama-tiny/config.json  # --model\n");
}

}  // namespace
}  // namespace accel::importers
