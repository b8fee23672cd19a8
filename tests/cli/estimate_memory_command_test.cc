#include "cli/estimate_memory_command.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/exit_codes.h"

namespace accel::cli {
namespace {

std::string Corpus(const std::string& model) {
  return std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models/" + model + "/config.json";
}

struct Output {
  int code;
  std::string out, err;
};

Output Run(const EstimateMemoryOptions& options) {
  std::ostringstream out, err;
  const int code = RunEstimateMemory(options, out, err);
  return {code, out.str(), err.str()};
}

TEST_CASE("estimate-memory on a config.json: exact count, Accelerate table, DeepSpeed ZeRO-3") {
  EstimateMemoryOptions o;
  o.model = Corpus("gpt2");
  o.zero_stage = 3;
  o.gpus = 8;
  Output r = Run(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK(r.out.find("parameters: 124,439,808 (every weight and bias") != std::string::npos);
  CHECK(r.out.find("12 x 7,087,872 = 85,054,464") != std::string::npos);
  CHECK(r.out.find("Training using Adam") != std::string::npos);
  // 124,439,808 x 4 B = 474.70 MB in Accelerate's units.
  CHECK(r.out.find("474.7 MB") != std::string::npos);
  CHECK(r.out.find("DeepSpeed ZeRO-3 model states (1 node, 8 GPUs per node; 124M total params, "
                   "38M largest layer params") != std::string::npos);
  CHECK(r.out.find("offload_param=none, offload_optimizer=none, zero_init=1") != std::string::npos);
}

TEST_CASE("estimate-memory: Qwen2 with q/k/v biases, dtype subset, ZeRO-2") {
  EstimateMemoryOptions o;
  o.model = Corpus("Qwen2-0.5B-Instruct");
  o.dtypes = {"float16"};
  o.zero_stage = 2;
  o.gpus = 4;
  o.nodes = 2;
  Output r = Run(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK(r.out.find("parameters: 494,032,768") != std::string::npos);
  CHECK(r.out.find("float32 |") == std::string::npos);
  CHECK(r.out.find("float16 |") != std::string::npos);
  CHECK(r.out.find("offload_optimizer=cpu") != std::string::npos);
  CHECK(r.out.find("2 nodes, 4 GPUs per node") != std::string::npos);
}

TEST_CASE("estimate-memory: Mixtral's total and active parameters") {
  EstimateMemoryOptions o;
  o.model = Corpus("Mixtral-8x7B-v0.1");
  o.zero_stage = 3;
  o.gpus = 8;
  Output r = Run(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK(r.out.find("parameters: 46,702,792,704 (every weight and bias") != std::string::npos);
  CHECK(r.out.find("  mixture of experts: 8 routed experts of ffn 14336, top-2, 32 of 32 blocks "
                   "MoE; routed experts 45,097,156,608; active per token 12,879,925,248\n") !=
        std::string::npos);
  CHECK(r.out.find("32 x 1,451,270,144 = 46,440,644,608") != std::string::npos);
}

TEST_CASE("estimate-memory usage errors") {
  EstimateMemoryOptions o;
  o.model = Corpus("gpt2");
  o.zero_stage = 3;
  Output r = Run(o);
  CHECK(r.code == kExitUsage);
  CHECK(r.err == "error: --zero-stage needs --gpus (GPUs per node, at least 1)\n");
  o.zero_stage = 0;
  o.dtypes = {"bfloat8"};
  CHECK(Run(o).code == kExitUsage);
  o.dtypes = {"float32"};
  o.overrides = {"parallel.tensor=2"};
  CHECK(Run(o).code == kExitUsage);
}

TEST_CASE("estimate-memory: unreadable config.json is an invalid input") {
  EstimateMemoryOptions o;
  o.model = "/nonexistent/config.json";
  Output r = Run(o);
  CHECK(r.code == kExitInvalid);
  CHECK(r.err.find("E0201") != std::string::npos);
}

TEST_CASE("estimate-memory: bert-base-cased, Accelerate's table over BertModel") {
  EstimateMemoryOptions o;
  o.model = Corpus("bert-base-cased");
  Output r = Run(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK(r.out.find("parameters: 108,310,272 (BertModel; every weight and bias, tied weights once)\n") !=
        std::string::npos);
  CHECK(r.out.find("  embeddings | 22,665,216\n  encoder    | 85,054,464\n  pooler     | 590,592\n") !=
        std::string::npos);
  // Current Accelerate with current transformers (BertEmbeddings is a no-split module; no
  // training estimate below 16 bits). Its documentation's older table differs in those cells
  // only (tests/planner/hf_architectures_test.cc derives both).
  CHECK(r.out.find("largest layer embeddings; sizes in MiB/GiB, labelled MB/GB as Accelerate prints them):\n"
                   "  dtype   | Largest Layer | Total Size | Training using Adam\n"
                   "  float32 | 86.47 MB      | 413.18 MB  | 1.61 GB\n"
                   "  float16 | 43.23 MB      | 206.59 MB  | 826.36 MB\n"
                   "  int8    | 21.62 MB      | 103.29 MB  | N/A\n"
                   "  int4    | 10.81 MB      | 51.65 MB   | N/A\n") != std::string::npos);
}

TEST_CASE("estimate-memory: a counted family with DeepSpeed ZeRO-3 figures") {
  EstimateMemoryOptions o;
  o.model = Corpus("phi-2");
  o.zero_stage = 3;
  o.gpus = 8;
  Output r = Run(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK(r.out.find("model: " + o.model + " (model_type phi-msft; counted, not planned)\n") != std::string::npos);
  CHECK(r.out.find("parameters: 2,779,683,840 (PhiForCausalLM;") != std::string::npos);
  // The largest module owns the 51200 x 2560 embedding: 131M.
  CHECK(r.out.find("2779M total params, 131M largest layer params") != std::string::npos);
}

TEST_CASE("estimate-memory: Gemma 2 and OLMo 2 are planned, with their published counts") {
  EstimateMemoryOptions o;
  o.model = Corpus("gemma-2-2b-it");
  o.zero_stage = 3;
  o.gpus = 8;
  Output r = Run(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK(r.out.find("model: " + o.model + " (llama, model_type gemma2)\n") != std::string::npos);
  CHECK(r.out.find("parameters: 2,614,341,888 (every weight and bias;") != std::string::npos);
  // The largest tensor is the tied 256000 x 2304 embedding: 589M.
  CHECK(r.out.find("2614M total params, 589M largest layer params") != std::string::npos);
  o.model = Corpus("OLMo-2-1124-7B");
  r = Run(o);
  REQUIRE(r.code == kExitOk);
  CHECK(r.out.find("model: " + o.model + " (llama, model_type olmo2)\n") != std::string::npos);
  CHECK(r.out.find("parameters: 7,298,617,344 (every weight and bias;") != std::string::npos);
}

TEST_CASE("estimate-memory: Qwen3 is planned, with the same count as the counted families' reader") {
  EstimateMemoryOptions o;
  o.model = Corpus("Qwen3-8B");
  o.zero_stage = 3;
  o.gpus = 8;
  Output r = Run(o);
  INFO(r.err);
  REQUIRE(r.code == kExitOk);
  CHECK(r.out.find("model: " + o.model + " (llama, model_type qwen3)\n") != std::string::npos);
  CHECK(r.out.find("parameters: 8,190,735,360 (every weight and bias;") != std::string::npos);
  CHECK(r.out.find("8190M total params, 622M largest layer params") != std::string::npos);
}

// Every config.json of the corpus (tests/testdata/corpus/SOURCES.md) is estimated: planned
// families through the planner's count, the others through planner/hf_architectures.h.
TEST_CASE("estimate-memory works on every corpus config.json") {
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(
           std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/corpus/models")) {
    EstimateMemoryOptions o;
    o.model = (entry.path() / "config.json").string();
    Output r = Run(o);
    INFO(o.model << "\n" << r.err);
    CHECK(r.code == kExitOk);
    CHECK(r.out.find("parameters: ") != std::string::npos);
    CHECK(r.out.find("| Training using Adam\n") != std::string::npos);
    ++seen;
  }
  CHECK(seen >= 29);
}

TEST_CASE("estimate-memory refuses a model_type no one counts, at the key") {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("accel_estimate_memory_" + std::to_string(::getpid()) + ".json"))
                               .string();
  std::ofstream(path) << "{\n  \"model_type\": \"mamba\"\n}\n";
  EstimateMemoryOptions o;
  o.model = path;
  Output r = Run(o);
  CHECK(r.code == kExitInvalid);
  CHECK(r.err.find(path + ":2:17: error[E0203]: model config has model_type 'mamba'; accel plans gpt2, "
                   "llama, mistral, qwen2, qwen3, phi3, olmo2, gemma2, gemma3_text, mixtral, qwen2_moe, qwen3_moe and "
                   "counts bert, roberta, vit, clip, t5, whisper, phi, phi-msft\n") !=
        std::string::npos);
  CHECK(r.out.empty());
  std::remove(path.c_str());
}

// A small cpu job, written to a temporary file because the loader reads paths.
std::string WriteSpec(const std::string& device_memory) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("accel_estimate_memory_" + std::to_string(::getpid()) + ".yaml"))
                               .string();
  std::ofstream(path) << R"(version: 1
name: tiny
model: {arch: gpt2, hidden_size: 256, num_layers: 4, num_heads: 4, vocab_size: 256, max_seq_len: 256}
data:
  train: {path: data.txt, format: text, tokenizer: bytes}
  seq_len: 128
  micro_batch_size: 16
training: {steps: 10}
parallel: {data_replicate: auto}
cluster: {nodes: 1, devices_per_node: 2, device: cpu, device_memory: )" << device_memory << "}\n";
  return path;
}

TEST_CASE("estimate-memory on a spec: per-stage breakdown and fit") {
  EstimateMemoryOptions o;
  o.model = WriteSpec("8GiB");
  Output r = Run(o);
  INFO(r.err);
  CHECK(r.code == kExitOk);
  CHECK(r.out.find("stage 0 (layers 0-3, embedding, head): ") != std::string::npos);
  CHECK(r.out.find(": fits\n") != std::string::npos);
  CHECK(r.out.find("optimizer_states") != std::string::npos);
  std::remove(o.model.c_str());

  o.model = WriteSpec("400MiB");
  r = Run(o);
  INFO(r.err);
  CHECK(r.code == kExitInvalid);
  CHECK(r.out.find("does not fit") != std::string::npos);
  CHECK(r.out.find("would fit with") != std::string::npos);
  CHECK(r.err.find("E0501") == std::string::npos);  // reported as output, not as an error
  std::remove(o.model.c_str());
}

}  // namespace
}  // namespace accel::cli
