// CUDA-only checks of the executor: the forward on CUDA against the CPU in fp32 (math and fused
// attention), bf16 training through `accel run` with the CUDA caching allocator's memory in the
// metrics, and checkpoints moving between CPU and CUDA runs. Without a CUDA device the binary
// prints why and exits 77, which CTest reports as skipped (SKIP_RETURN_CODE), never as passed.
// LibTorch defines a CHECK macro of its own: Catch2's must be defined after it.
#include <torch/torch.h>

#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "executor/models/causal_lm.h"
#include "common/remove_tree.h"
#include "executor/models/model_config.h"
#include "nlohmann/json.hpp"
#include "tests/common/files.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

ModelConfig SmallConfig(ModelArch arch) {
  ModelConfig c;
  c.arch = arch;
  c.hidden_size = 64;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = arch == ModelArch::kLlama ? 2 : 4;
  c.ffn_size = arch == ModelArch::kLlama ? 176 : 256;
  c.vocab_size = 256;
  c.max_seq_len = 64;
  c.tie_embeddings = arch == ModelArch::kGpt2;
  return c;
}

torch::Tensor Logits(const ModelConfig& config, const torch::Device& device, const torch::Tensor& tokens) {
  std::shared_ptr<CausalLm> model = BuildCausalLm(config, /*seed=*/7, TensorParallel{}).value();
  model->to(device);
  torch::NoGradGuard no_grad;
  return model->Forward(tokens.to(device)).to(torch::kCPU);
}

// fp32 on both devices: only the order of the sums differs (cuBLAS and the fused kernel tile
// their reductions differently; TF32 is off by default in LibTorch). Over reductions of at most
// 256 terms of O(1) values, fp32 rounding gives differences around 1e-5; 1e-4 leaves a margin
// that a wrong mask, a wrong scale or a transposed head (O(1) differences) cannot hide in.
constexpr double kFp32Tolerance = 1e-4;

TEST_CASE("CUDA forward matches the CPU forward in fp32, math and fused attention") {
  for (ModelArch arch : {ModelArch::kGpt2, ModelArch::kLlama}) {
    ModelConfig config = SmallConfig(arch);
    const torch::Tensor tokens = torch::randint(0, 256, {3, 48}, torch::kLong);
    const torch::Tensor cpu = Logits(config, torch::kCPU, tokens);
    const torch::Tensor cuda_math = Logits(config, torch::Device(torch::kCUDA, 0), tokens);
    INFO(ModelArchName(arch));
    CHECK((cpu - cuda_math).abs().max().item<double>() < kFp32Tolerance);
    if (SdpaAvailable()) {
      config.fused_attention = true;
      const torch::Tensor cuda_sdpa = Logits(config, torch::Device(torch::kCUDA, 0), tokens);
      CHECK((cpu - cuda_sdpa).abs().max().item<double>() < kFp32Tolerance);
      // The fused kernel on the CPU too (LibTorch 2.x): the same numbers.
      const torch::Tensor cpu_sdpa = Logits(config, torch::kCPU, tokens);
      CHECK((cpu - cpu_sdpa).abs().max().item<double>() < kFp32Tolerance);
    }
  }
}

// ---- accel run on CUDA ------------------------------------------------------------------------

struct Output {
  int code = -1;
  std::string text;
};

Output RunAccel(const std::string& args) {
  Output out;
  const std::string command = std::string(ACCEL_BINARY) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) out.text.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

using accel::testing::ReadAll;

std::vector<nlohmann::json> Metrics(const fs::path& run_dir) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(ReadAll(run_dir / "metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// A tiny llama job in `dir` on `device` (cpu or cuda) with `precision`.
void WriteJob(const fs::path& dir, const std::string& device, const std::string& precision) {
  fs::create_directories(dir);
  {
    std::ofstream corpus(dir / "corpus.txt");
    for (int i = 0; i < 2000; ++i) corpus << "line " << i % 97 << ": the quick brown fox jumps over the lazy dog.\n";
  }
  std::ofstream(dir / "job.yaml") << R"(version: 1
name: cuda-test
model: {arch: llama, hidden_size: 64, num_layers: 2, num_heads: 4, num_kv_heads: 2, ffn_hidden_size: 176, vocab_size: 256, max_seq_len: 64}
data:
  train: {path: corpus.txt, format: text, tokenizer: bytes}
  seq_len: 64
  micro_batch_size: 8
training:
  steps: 40
  log_every_steps: 10
  sample_tokens: 0
  optimizer: {name: adamw, lr: 3.0e-3}
  lr_schedule: {name: cosine, warmup_steps: 4}
precision: )" << precision << R"(
checkpoint: {dir: )" << (dir / "ckpt").string() << R"(, every_steps: 4, keep: 2}
cluster: {nodes: 1, devices_per_node: 1, device: )" << device << R"(, device_memory: 8GiB}
)";
}

fs::path TempDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("accel_cuda_test_" + name);
  std::error_code ec;
  RemoveTree(dir.string(), ec);
  return dir;
}

TEST_CASE("accel run trains bf16 on CUDA with falling loss and measures the caching allocator") {
  const fs::path dir = TempDir("bf16");
  WriteJob(dir, "cuda", "{params: bf16, compute: bf16, reduce: bf16}");
  Output run = RunAccel("run " + (dir / "job.yaml").string() + " --run-dir " + (dir / "run").string());
  INFO(run.text);
  REQUIRE(run.code == 0);
  CHECK(run.text.find("nccl on cuda:0") != std::string::npos);
  const std::vector<nlohmann::json> steps = Metrics(dir / "run");
  REQUIRE(steps.size() == 40);
  const double first = steps.front()["loss"].get<double>();
  const double last = steps.back()["loss"].get<double>();
  CHECK(last < 0.7 * first);
  CHECK(steps.back()["peak_tensor_bytes"].get<int64_t>() > 0);
  CHECK(steps.back()["peak_reserved_bytes"].get<int64_t>() >= steps.back()["peak_tensor_bytes"].get<int64_t>());
  const nlohmann::json summary = nlohmann::json::parse(ReadAll(dir / "run" / "summary.json"));
  const nlohmann::json& rank0 = summary["memory"]["ranks"][0];
  CHECK(rank0["peak_reserved_bytes"].get<int64_t>() > 0);
  CHECK(rank0["measured_over_estimate"].is_number());
  // The plan ran the fused kernel it names.
  CHECK(ReadAll(dir / "run" / "plan.txt").find("model.attention_kernel = sdpa") != std::string::npos);
}

// fp32 through 4 steps on one device, then 4 more on the other, against 8 on the first: the
// checkpoint carries weights, AdamW state and the generators across. Tolerance: the same fp32
// arithmetic in another summation order (see kFp32Tolerance), compounded over 4 AdamW steps.
void CheckMove(const std::string& from, const std::string& to) {
  const fs::path moved = TempDir("move_" + from + "_" + to);
  const fs::path stay = TempDir("stay_" + from + "_" + to);
  WriteJob(moved, from, "{params: fp32, compute: fp32}");
  WriteJob(stay, from, "{params: fp32, compute: fp32}");
  auto run = [](const fs::path& dir, const std::string& device, int steps) {
    return RunAccel("run " + (dir / "job.yaml").string() + " --run-dir " + (dir / "run").string() +
                    " --set cluster.device=" + device + " --set training.steps=" + std::to_string(steps));
  };
  Output a = run(moved, from, 4);
  INFO(a.text);
  REQUIRE(a.code == 0);
  Output b = run(moved, to, 8);
  INFO(b.text);
  REQUIRE(b.code == 0);
  CHECK(b.text.find("resumed from") != std::string::npos);
  Output c = run(stay, from, 8);
  INFO(c.text);
  REQUIRE(c.code == 0);
  const std::vector<nlohmann::json> moved_steps = Metrics(moved / "run");
  const std::vector<nlohmann::json> stay_steps = Metrics(stay / "run");
  REQUIRE(moved_steps.size() == 8);
  REQUIRE(stay_steps.size() == 8);
  for (size_t i = 4; i < 8; ++i) {
    const double x = moved_steps[i]["loss"].get<double>();
    const double y = stay_steps[i]["loss"].get<double>();
    INFO("step " << i + 1 << ": " << x << " vs " << y);
    CHECK(std::abs(x - y) <= 1e-3 * std::abs(y));
  }
}

TEST_CASE("a CPU checkpoint resumes on CUDA and a CUDA checkpoint on the CPU") {
  CheckMove("cpu", "cuda");
  CheckMove("cuda", "cpu");
}

}  // namespace
}  // namespace accel::exec

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::printf("SKIPPED: no CUDA device visible to LibTorch (this build: %s); the CUDA tests run on "
                "a GPU machine built by scripts/build-cuda.sh\n",
                TORCH_VERSION);
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
