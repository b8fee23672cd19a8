// The header index of Hugging Face weights (executor/checkpoint/pretrained.h): one file, a
// directory with model.safetensors or a sharded index, and the check against the plan.
#include "executor/checkpoint/pretrained.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "executor/checkpoint/safetensors.h"
#include "tests/executor/checkpoint/temp_root.h"

namespace accel::exec {
namespace {

namespace fs = std::filesystem;

SafetensorsTensor F32(const std::string& name, std::vector<int64_t> shape) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  return {name, "F32", shape, std::string(static_cast<size_t>(numel) * 4, '\x01')};
}

void Write(const fs::path& path, std::vector<SafetensorsTensor> tensors) {
  SafetensorsFile file;
  file.tensors = std::move(tensors);
  std::ofstream(path, std::ios::binary) << SerializeSafetensors(file).value();
}

ir::Plan PlanWith(std::vector<std::pair<std::string, std::vector<int64_t>>> params) {
  ir::Plan plan;
  plan.mutable_model()->set_vocab_size(5);
  plan.mutable_model()->set_padded_vocab_size(8);
  ir::ShardUnit* unit = plan.mutable_sharding()->add_units();
  for (const auto& [name, shape] : params) {
    ir::Parameter* p = unit->add_parameters();
    p->set_name(name);
    for (int64_t d : shape) p->add_shape(d);
  }
  return plan;
}

TEST_CASE("OpenPretrained indexes one file, model.safetensors and a sharded index") {
  testing::TempRoot root("accel_pretrained_");
  fs::create_directories(root.path / "one");
  Write(root.path / "one" / "model.safetensors", {F32("h.0.w", {2, 3}), F32("wte.weight", {5, 2})});
  absl::StatusOr<PretrainedIndex> one = OpenPretrained((root.path / "one").string());
  REQUIRE(one.ok());
  CHECK(one->size() == 2);
  const PretrainedTensor& w = one->at("h.0.w");
  CHECK(w.shape == std::vector<int64_t>{2, 3});
  CHECK(w.end - w.begin == 24);
  CHECK(ReadPretrainedBytes(w).value() == std::string(24, '\x01'));
  // GPT2Model's names (no "transformer.") serve GPT2LMHeadModel's.
  CHECK(FindPretrained(*one, "transformer.h.0.w") == &w);
  CHECK(FindPretrained(*one, "transformer.h.1.w") == nullptr);
  CHECK(OpenPretrained((root.path / "one" / "model.safetensors").string())->size() == 2);

  fs::create_directories(root.path / "sharded");
  Write(root.path / "sharded" / "a.safetensors", {F32("x", {1})});
  Write(root.path / "sharded" / "b.safetensors", {F32("y", {2})});
  std::ofstream(root.path / "sharded" / "model.safetensors.index.json")
      << R"({"metadata": {}, "weight_map": {"x": "a.safetensors", "y": "b.safetensors"}})";
  absl::StatusOr<PretrainedIndex> sharded = OpenPretrained((root.path / "sharded").string());
  REQUIRE(sharded.ok());
  CHECK(sharded->at("y").file == (root.path / "sharded" / "b.safetensors").string());

  std::ofstream(root.path / "sharded" / "model.safetensors.index.json")
      << R"({"weight_map": {"x": "../a.safetensors"}})";
  CHECK(OpenPretrained((root.path / "sharded").string()).status().message() ==
        (root.path / "sharded" / "model.safetensors.index.json").string() +
            ": weight_map entry x is not a file name in " + (root.path / "sharded").string());
}

TEST_CASE("OpenPretrained names what is missing or corrupt") {
  testing::TempRoot root("accel_pretrained_");
  CHECK(OpenPretrained((root.path / "none").string()).status().message() ==
        (root.path / "none").string() + " does not exist");
  fs::create_directories(root.path);
  std::ofstream(root.path / "bad.safetensors", std::ios::binary) << std::string("\xff\xff\0\0\0\0\0\0{}", 10);
  CHECK(OpenPretrained((root.path / "bad.safetensors").string()).status().message() ==
        (root.path / "bad.safetensors").string() + ": not a safetensors file: header length beyond the file");
}

TEST_CASE("CheckPretrainedAgainstPlan lists missing tensors, other shapes and dtypes") {
  PretrainedIndex index;
  index["transformer.wte.weight"] = {"f", "F32", {5, 2}, 8, 48};   // vocab rows, the plan pads to 8
  index["h.0.attn.c_attn.weight"] = {"f", "F32", {2, 6}, 48, 96};
  index["h.0.ln_1.weight"] = {"f", "I64", {2}, 96, 112};
  index["h.0.attn.bias"] = {"f", "F32", {1}, 112, 116};            // a buffer: ignored
  const ir::Plan plan = PlanWith({{"transformer.wte.weight", {8, 2}},
                                  {"transformer.h.0.attn.c_attn.weight", {2, 5}},
                                  {"transformer.h.0.ln_1.weight", {2}},
                                  {"transformer.ln_f.weight", {2}}});
  CHECK(CheckPretrainedAgainstPlan(plan, index) ==
        std::vector<std::string>{
            "tensor transformer.h.0.attn.c_attn.weight has shape [2, 6], the plan expects [2, 5]",
            "tensor transformer.h.0.ln_1.weight is I64, not a floating-point dtype (F64, F32, F16, BF16)",
            "the checkpoint has no tensor transformer.ln_f.weight"});
}

}  // namespace
}  // namespace accel::exec
