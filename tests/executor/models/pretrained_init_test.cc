// Starting a model from Hugging Face weights (executor/models/pretrained_init.h): the weights a
// model was saved with load back into another (identical logits), and its logits match an
// independent forward pass in Python (tests/executor/models/gpt2_reference.py on Debian's
// python3-torch) reading the same model.safetensors.
#include "executor/models/pretrained_init.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

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

TEST_CASE("weights saved from one model load into another with identical logits, and match an "
          "independent GPT-2 forward in Python") {
  const fs::path dir = fs::temp_directory_path() / ("accel_pretrained_init_" + std::to_string(::getpid()));
  const ModelConfig config = Gpt2Config();
  std::shared_ptr<CausalLm> source = BuildCausalLm(config, /*seed=*/11).value();
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

  // The Python reference reads the same file.
  {
    std::ofstream out(dir / "tokens.bin", std::ios::binary);
    const int64_t header[2] = {tokens.size(0), tokens.size(1)};
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    out.write(static_cast<const char*>(tokens.contiguous().data_ptr()), tokens.numel() * 8);
  }
  const std::string command = "/usr/bin/python3 " ACCEL_SOURCE_ROOT "/tests/executor/models/gpt2_reference.py " +
                              (dir / "model.safetensors").string() + " " + (dir / "tokens.bin").string() + " " +
                              (dir / "logits.bin").string() + " " + std::to_string(config.num_heads);
  REQUIRE(std::system(command.c_str()) == 0);
  std::ifstream in(dir / "logits.bin", std::ios::binary);
  torch::Tensor reference = torch::empty_like(logits);
  in.read(static_cast<char*>(reference.data_ptr()), reference.numel() * 4);
  REQUIRE(in.good());
  // fp32 both ways; only the order of the sums differs (the reference's GELU is the tanh formula
  // written out): differences are rounding, 1e-5 absolute on logits of magnitude ~1.
  CHECK((reference - logits).abs().max().item<double>() < 1e-5);
  fs::remove_all(dir);
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
