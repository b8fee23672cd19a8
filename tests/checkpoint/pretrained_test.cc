// The header index of Hugging Face weights (checkpoint/pretrained.h): one file, a
// directory with model.safetensors or a sharded index, and the check against the plan.
#include "checkpoint/pretrained.h"

#include <unistd.h>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "checkpoint/safetensors.h"
#include "tests/common/temp_root.h"

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
  absl::StatusOr<PretrainedCheckpoint> mapped = PretrainedCheckpoint::Open((root.path / "one").string());
  REQUIRE(mapped.ok());
  CHECK(mapped->Read("h.0.w", mapped->index().at("h.0.w"))->data == std::string(24, '\x01'));
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
  // Every header offset is checked against the mapped file's size before use.
  auto header = [](const std::string& json, size_t data_bytes) {
    std::string out(8, '\0');
    for (int k = 0; k < 8; ++k) out[k] = static_cast<char>((json.size() >> (8 * k)) & 0xff);
    return out + json + std::string(data_bytes, '\x01');
  };
  const std::vector<std::pair<std::string, std::string>> corrupt = {
      {std::string("\x02\0\0", 3), "shorter than its 8-byte header length"},
      {std::string(8, '\0'), "header is not a JSON object"},
      {header("[1, 2]", 0), "header is not a JSON object"},
      {header(R"({"w": {"dtype": "F32", "shape": [2]}})", 8), "entry w lacks dtype, shape or data_offsets"},
      {header(R"({"w": {"dtype": "Q4", "shape": [2], "data_offsets": [0, 8]}})", 8),
       "entry w has unknown dtype Q4"},
      {header(R"({"w": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", 8), "entry w has a bad shape"},
      {header(R"({"w": {"dtype": "F32", "shape": [4611686018427387904, 4], "data_offsets": [0, 8]}})", 8),
       "entry w is larger than the file"},
      {header(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, -8]}})", 8),
       "entry w has bad data_offsets"},
      {header(R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})", 8),
       "entry w's data_offsets do not match its shape or leave the file"},
      {header(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]}})", 8),
       "entry w's data_offsets do not match its shape or leave the file"},
  };
  for (const auto& [bytes, why] : corrupt) {
    INFO(why);
    std::ofstream(root.path / "bad.safetensors", std::ios::binary | std::ios::trunc) << bytes;
    CHECK(PretrainedCheckpoint::Open((root.path / "bad.safetensors").string()).status().message() ==
          (root.path / "bad.safetensors").string() + ": not a safetensors file: " + why);
  }
}

// A tensor whose every byte says where it is: element i (F32) holds bytes 4i..4i+3 mod 251.
SafetensorsTensor Numbered(const std::string& name, std::vector<int64_t> shape) {
  SafetensorsTensor t = F32(name, shape);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<char>(i % 251);
  return t;
}

// The bytes of elements [from, from + count) of a Numbered tensor.
std::string Elements(int64_t from, int64_t count) {
  std::string out;
  for (int64_t i = from * 4; i < (from + count) * 4; ++i) out += static_cast<char>(i % 251);
  return out;
}

TEST_CASE("PretrainedCheckpoint reads rows, strided column pieces and fused blocks of a mapped file") {
  testing::TempRoot root("accel_pretrained_");
  fs::create_directories(root.path);
  // [6, 4]: column-parallel rows of a Linear, row-parallel columns; [4, 6] as gpt2's c_attn
  // (Conv1D [in, 3 x out]: q, k, v blocks of 2 columns each).
  Write(root.path / "model.safetensors", {Numbered("rows", {6, 4}), Numbered("c_attn", {4, 6})});
  absl::StatusOr<PretrainedCheckpoint> checkpoint =
      PretrainedCheckpoint::Open((root.path / "model.safetensors").string());
  REQUIRE(checkpoint.ok());
  const PretrainedTensor& rows = checkpoint->index().at("rows");
  const PretrainedTensor& c_attn = checkpoint->index().at("c_attn");

  // Rank 1 of 2 along dim 0: rows 3..5, one contiguous run.
  absl::StatusOr<SafetensorsTensor> r = checkpoint->Read("rows", rows, TpSelection({0, 1}, 6, 1, 2));
  REQUIRE(r.ok());
  CHECK(r->shape == std::vector<int64_t>{3, 4});
  CHECK(r->data == Elements(12, 12));
  // Rank 0 of 2 along dim 1: columns 0..1 of every row, a strided read.
  absl::StatusOr<SafetensorsTensor> c = checkpoint->Read("rows", rows, TpSelection({1, 1}, 4, 0, 2));
  REQUIRE(c.ok());
  CHECK(c->shape == std::vector<int64_t>{6, 2});
  std::string columns;
  for (int64_t row = 0; row < 6; ++row) columns += Elements(row * 4, 2);
  CHECK(c->data == columns);
  // Rank 1 of 2 of c_attn's three blocks: columns 1, 3 and 5 of every row.
  absl::StatusOr<SafetensorsTensor> q = checkpoint->Read("c_attn", c_attn, TpSelection({1, 3}, 6, 1, 2));
  REQUIRE(q.ok());
  CHECK(q->shape == std::vector<int64_t>{4, 3});
  std::string blocks;
  for (int64_t row = 0; row < 4; ++row) {
    for (int64_t col : {1, 3, 5}) blocks += Elements(row * 6 + col, 1);
  }
  CHECK(q->data == blocks);
  // A padded vocabulary: the model has 8 rows, the checkpoint 6; rank 1 of 2 owns rows 4..7 and
  // gets the checkpoint's rows 4..5.
  absl::StatusOr<SafetensorsTensor> padded = checkpoint->Read("rows", rows, TpSelection({0, 1}, 8, 1, 2));
  REQUIRE(padded.ok());
  CHECK(padded->shape == std::vector<int64_t>{2, 4});
  CHECK(padded->data == Elements(16, 8));
  // The whole tensor.
  CHECK(checkpoint->Read("rows", rows)->data == Elements(0, 24));

  // Only what was selected was copied: 48 + 48 + 48 + 32 + 96 bytes.
  CHECK(checkpoint->stats().tensors == 5);
  CHECK(checkpoint->stats().bytes_copied == 48 + 48 + 48 + 32 + 96);
  CHECK(checkpoint->stats().tensor_bytes == 96 * 5);
  CHECK(checkpoint->stats().pages_touched == 1);  // the file is smaller than a page

  // Pages are counted once each: rows 2..3 of [4, 2048] F32 (16 KiB from the middle of a file
  // of 32 KiB of data) touch the pages of those bytes alone, however often they are read.
  Write(root.path / "big.safetensors", {Numbered("big", {4, 2048})});
  absl::StatusOr<PretrainedCheckpoint> big = PretrainedCheckpoint::Open((root.path / "big.safetensors").string());
  REQUIRE(big.ok());
  const PretrainedTensor& t = big->index().at("big");
  REQUIRE(big->Read("big", t, TpSelection({0, 1}, 4, 1, 2)).ok());
  REQUIRE(big->Read("big", t, TpSelection({0, 1}, 4, 1, 2)).ok());
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t from = t.begin + 2 * 2048 * 4, to = t.end;
  CHECK(big->stats().bytes_copied == 2 * 16384);
  CHECK(big->stats().pages_touched == (to - 1) / page - from / page + 1);
}

TEST_CASE("PretrainedCheckpoint refuses selections and tensors outside its files") {
  testing::TempRoot root("accel_pretrained_");
  fs::create_directories(root.path);
  Write(root.path / "model.safetensors", {Numbered("w", {2, 3})});
  absl::StatusOr<PretrainedCheckpoint> checkpoint = PretrainedCheckpoint::Open(root.path.string());
  REQUIRE(checkpoint.ok());
  const PretrainedTensor& w = checkpoint->index().at("w");
  CHECK(checkpoint->Read("w", w, TensorSelection{2, {{0, 1}}}).status().message() ==
        "tensor w: dim 2 is not one of its 2 dims");
  CHECK(checkpoint->Read("w", w, TensorSelection{1, {{1, 2}, {0, 1}}}).status().message() ==
        "tensor w: selected ranges must be increasing and disjoint");
  PretrainedTensor beyond = w;
  beyond.end += 4;
  CHECK(checkpoint->Read("w", beyond).status().message() ==
        "tensor w does not lie within " + w.file);
  PretrainedTensor other_shape = w;
  other_shape.shape = {3, 3};
  CHECK(checkpoint->Read("w", other_shape).status().message() ==
        "tensor w: 24 bytes do not match its shape");
  CHECK(checkpoint->stats().tensors == 0);
  CHECK(checkpoint->stats().bytes_copied == 0);

  // A sharded index naming a file that is not there.
  fs::create_directories(root.path / "sharded");
  std::ofstream(root.path / "sharded" / "model.safetensors.index.json")
      << R"({"weight_map": {"x": "gone.safetensors"}})";
  CHECK(OpenPretrained((root.path / "sharded").string()).status().message() ==
        "cannot open " + (root.path / "sharded" / "gone.safetensors").string() +
            ": No such file or directory");
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
