// Starting a model from Hugging Face weights (executor/models/pretrained_init.h): the weights a
// model was saved with load back into another (identical logits), and its logits match an
// independent forward pass in Python (tests/executor/models/hf_reference.py on Debian's
// python3-torch) reading the same model.safetensors, for GPT-2 and the Llama family.
#include "executor/models/pretrained_init.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "executor/checkpoint/safetensors.h"
#include "executor/checkpoint/torch_tensors.h"
#include "executor/models/causal_lm.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

ModelConfig Gpt2Config() {
  ModelConfig c;
  c.arch = ModelArch::kGpt2;
  c.hidden_size = 32;
  c.num_layers = 2;
  c.num_heads = 4;
  c.num_kv_heads = 4;
  c.ffn_size = 128;
  c.vocab_size = 96;
  c.max_seq_len = 16;
  return c;
}

// Saves model's parameters as model.safetensors in dir, as `accel export` lays them out.
void Save(CausalLm& model, const fs::path& dir) {
  fs::create_directories(dir);
  SafetensorsFile file;
  for (const auto& item : model.named_parameters()) {
    file.tensors.push_back(TensorToSafetensors(item.key(), item.value()).value());
  }
  std::ofstream(dir / "model.safetensors", std::ios::binary) << SerializeSafetensors(file).value();
}

ModelConfig LlamaConfig(bool qwen2) {
  ModelConfig c = Gpt2Config();
  c.arch = ModelArch::kLlama;
  c.num_kv_heads = 2;  // grouped-query attention
  c.ffn_size = 88;
  c.tie_embeddings = qwen2;
  c.qkv_bias = qwen2;
  c.norm_eps = qwen2 ? 1e-6 : 1e-5;
  c.rope_theta = qwen2 ? 1e6 : 1e4;
  return c;
}

// Arguments of tests/executor/models/hf_reference.py after the file names.
std::string ReferenceArgs(const ModelConfig& c) {
  if (c.arch == ModelArch::kGpt2) return "gpt2 MODEL TOKENS LOGITS " + std::to_string(c.num_heads);
  std::ostringstream args;
  args.precision(17);
  args << "llama MODEL TOKENS LOGITS " << c.num_heads << " " << c.num_kv_heads << " " << c.norm_eps
       << " " << c.rope_theta;
  return args.str();
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  return text.replace(text.find(from), from.size(), to);
}

// Saves a seeded model, loads it into a model of another seed (identical logits), and compares
// the logits with the Python reference reading the same model.safetensors.
void CheckRoundTripAndReference(const ModelConfig& config, const std::string& label) {
  INFO(label);
  const fs::path dir = fs::temp_directory_path() /
                       ("accel_pretrained_init_" + label + "_" + std::to_string(::getpid()));
  std::shared_ptr<CausalLm> source = BuildCausalLm(config, /*seed=*/11).value();
  {
    // Biases and norm weights start at 0 and 1, and weights ~ N(0, 0.02) leave attention almost
    // uniform, where positions would not matter: random vectors and weights ten times larger
    // make every term (rotary tables included) count in the comparison.
    torch::NoGradGuard no_grad;
    for (auto& item : source->named_parameters()) {
      if (item.value().dim() == 1) item.value().normal_(0.5, 0.1);
      else item.value().mul_(10.0);
    }
  }
  Save(*source, dir);
  std::shared_ptr<CausalLm> loaded =
      BuildCausalLm(config, /*seed=*/99, {}, [&dir](CausalLm& whole) {
        return LoadPretrained(whole, dir.string());
      }).value();
  const torch::Tensor tokens = torch::randint(0, config.vocab_size, {2, 12}, torch::kLong);
  torch::NoGradGuard no_grad;
  const torch::Tensor expected = source->Forward(tokens);
  const torch::Tensor logits = loaded->Forward(tokens);
  CHECK(torch::equal(expected, logits));

  {
    std::ofstream out(dir / "tokens.bin", std::ios::binary);
    const int64_t header[2] = {tokens.size(0), tokens.size(1)};
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    out.write(static_cast<const char*>(tokens.contiguous().data_ptr()), tokens.numel() * 8);
  }
  std::string args = ReferenceArgs(config);
  args = Replace(args, "MODEL", (dir / "model.safetensors").string());
  args = Replace(args, "TOKENS", (dir / "tokens.bin").string());
  args = Replace(args, "LOGITS", (dir / "logits.bin").string());
  const std::string command =
      "/usr/bin/python3 " ACCEL_SOURCE_ROOT "/tests/executor/models/hf_reference.py " + args;
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(dir / "logits.bin", std::ios::binary);
  torch::Tensor reference = torch::empty_like(logits);
  in.read(static_cast<char*>(reference.data_ptr()), reference.numel() * 4);
  REQUIRE(in.good());
  // fp32 both ways; only the order of the sums differs (the reference writes GELU's tanh formula
  // and SiLU out): differences are rounding, within 1e-5 of the logits' largest magnitude (~10
  // here); a wrong rotary base or mask moves them by O(1).
  const double scale = logits.abs().max().item<double>();
  CHECK((reference - logits).abs().max().item<double>() < 1e-5 * scale);
  fs::remove_all(dir);
}

// gpt2; llama with grouped-query attention; qwen2-like with q/k/v biases and a tied head.
TEST_CASE("weights saved from one model load into another with identical logits and match an "
          "independent forward in Python for gpt2 and the llama family") {
  CheckRoundTripAndReference(Gpt2Config(), "gpt2");
  CheckRoundTripAndReference(LlamaConfig(/*qwen2=*/false), "llama");
  CheckRoundTripAndReference(LlamaConfig(/*qwen2=*/true), "qwen2");
}

TEST_CASE("LoadPretrained names a missing tensor and another shape") {
  const fs::path dir = fs::temp_directory_path() / ("accel_pretrained_bad_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  SafetensorsFile file;
  file.tensors.push_back(TensorToSafetensors("transformer.wte.weight", torch::zeros({96, 8})).value());
  std::ofstream(dir / "model.safetensors", std::ios::binary) << SerializeSafetensors(file).value();
  std::shared_ptr<CausalLm> model = BuildCausalLm(Gpt2Config(), 1).value();
  CHECK(LoadPretrained(*model, dir.string()).message() ==
        dir.string() + ": tensor transformer.wte.weight has shape [96, 8], the model has [96, 32]");
  file.tensors[0] = TensorToSafetensors("transformer.wte.weight", torch::zeros({96, 32})).value();
  std::ofstream(dir / "model.safetensors", std::ios::binary) << SerializeSafetensors(file).value();
  CHECK(LoadPretrained(*model, dir.string()).message() ==
        dir.string() + ": the checkpoint has no tensor transformer.wpe.weight");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace accel::exec
