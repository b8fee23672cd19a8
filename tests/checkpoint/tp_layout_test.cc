// tensor_parallel.json and the merge of tp-major tensors that `accel export` runs.
#include "checkpoint/tp_layout.h"

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/export.h"
#include "checkpoint/sharded_tensors.h"
#include "tests/common/temp_root.h"

namespace accel::exec {
namespace {

// An F32 tensor of the given values.
SafetensorsTensor F32(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& values) {
  std::string data(values.size() * 4, '\0');
  std::memcpy(data.data(), values.data(), data.size());
  return {name, "F32", std::move(shape), std::move(data)};
}

std::vector<float> Values(const SafetensorsTensor& t) {
  std::vector<float> out(t.data.size() / 4);
  std::memcpy(out.data(), t.data.data(), t.data.size());
  return out;
}

TEST_CASE("MergeTpMajor interleaves the q, k and v blocks of two ranks back into one tensor") {
  // Whole [1, 6] = q0 q1 | k0 k1 | v0 v1 split on dim 1 in 3 parts: rank 0 holds q0 k0 v0.
  SafetensorsTensor stacked = F32("c_attn", {2, 1, 3}, {0, 2, 4, 1, 3, 5});
  absl::StatusOr<SafetensorsTensor> whole = MergeTpMajor(stacked, 2, {1, 3});
  REQUIRE(whole.ok());
  CHECK(whole->shape == std::vector<int64_t>{1, 6});
  CHECK(Values(*whole) == std::vector<float>{0, 1, 2, 3, 4, 5});
  // Rows split on dim 0 (a column-parallel nn.Linear weight [out, in]).
  absl::StatusOr<SafetensorsTensor> rows = MergeTpMajor(F32("w", {2, 1, 2}, {0, 1, 2, 3}), 2, {0, 1});
  REQUIRE(rows.ok());
  CHECK(rows->shape == std::vector<int64_t>{2, 2});
  CHECK(Values(*rows) == std::vector<float>{0, 1, 2, 3});
  // Columns split on dim 1 (a row-parallel weight): rank 0 holds column 0 of both rows.
  absl::StatusOr<SafetensorsTensor> cols = MergeTpMajor(F32("w", {2, 2, 1}, {0, 2, 1, 3}), 2, {1, 1});
  REQUIRE(cols.ok());
  CHECK(Values(*cols) == std::vector<float>{0, 1, 2, 3});

  CHECK(MergeTpMajor(stacked, 4, {1, 3}).status().message() == "tensor c_attn: is not stacked over 4 tensor-parallel ranks");
  CHECK(MergeTpMajor(stacked, 2, {2, 1}).status().message() == "tensor c_attn: split dim 2 is not one of its 2 dims");
  CHECK(MergeTpMajor(stacked, 2, {1, 2}).status().message() == "tensor c_attn: dim of 3 does not split in 2");
  SafetensorsTensor short_data = stacked;
  short_data.data.resize(8);
  CHECK(MergeTpMajor(short_data, 2, {1, 3}).status().message() == "tensor c_attn: 8 data bytes do not match its shape");
}

TEST_CASE("tensor_parallel.json round trip and malformed files") {
  TpLayoutRecord record;
  record.degree = 2;
  record.parameters["transformer.h.0.attn.c_attn.weight"] = {1, 3};
  record.parameters["transformer.wte.weight"] = {0, 1};
  absl::StatusOr<TpLayoutRecord> back = ParseTpLayoutJson(TpLayoutJson(record), "tp.json");
  REQUIRE(back.ok());
  CHECK(back->degree == 2);
  CHECK(back->parameters.size() == 2);
  CHECK(back->parameters.at("transformer.h.0.attn.c_attn.weight").parts == 3);
  CHECK(ParseTpLayoutJson("[1]", "tp.json").status().message() == "tp.json is malformed: not a JSON object");
  CHECK(ParseTpLayoutJson(R"({"degree": 1, "parameters": {}})", "tp.json").status().message() ==
        "tp.json is malformed: \"degree\" must be an integer >= 2");
  CHECK(ParseTpLayoutJson(R"({"degree": 2, "parameters": {"w": {"dim": -1, "parts": 1}}})", "tp.json").status().message() ==
        "tp.json is malformed: parameter w needs integer \"dim\" in [0, 64] and \"parts\" in [1, 64]");
  CHECK(back->parameters.at("transformer.wte.weight").replicas == 1);
  CHECK(TpLayoutJson(record).find("replicas") == std::string::npos);
}

TEST_CASE("tensor_parallel.json records replicated key/value slices, and their merge reads each once") {
  TpLayoutRecord record;
  record.degree = 4;
  record.parameters["model.layers.0.self_attn.k_proj.weight"] = {0, 1, 2};
  const std::string json = TpLayoutJson(record);
  CHECK(json.find("\"replicas\": 2") != std::string::npos);
  absl::StatusOr<TpLayoutRecord> back = ParseTpLayoutJson(json, "tp.json");
  REQUIRE(back.ok());
  CHECK(back->parameters.at("model.layers.0.self_attn.k_proj.weight").replicas == 2);
  CHECK(ParseTpLayoutJson(R"({"degree": 4, "parameters": {"w": {"dim": 0, "parts": 1, "replicas": 3}}})", "tp.json")
            .status()
            .message() == "tp.json is malformed: parameter w needs integer \"replicas\" dividing the degree 4");
  // tp 4 with 2 key/value heads: stored once per head, [4 / 2, 1 head row, 2], as a split over 2.
  absl::StatusOr<SafetensorsTensor> whole = MergeTpMajor(F32("k", {2, 1, 2}, {0, 1, 2, 3}), 4 / 2, {0, 1, 2});
  REQUIRE(whole.ok());
  CHECK(whole->shape == std::vector<int64_t>{2, 2});
  CHECK(Values(*whole) == std::vector<float>{0, 1, 2, 3});
}

TEST_CASE("export merges a tensor-parallel checkpoint into whole Hugging Face tensors") {
  testing::TempRoot root;
  CheckpointStore store((root.path / "ckpt").string(), 2);
  // Two tp ranks, each writing its row of the tp-major tensor; the replicated bias by rank 0 only.
  const SafetensorsTensor stacked = F32("transformer.h.0.attn.c_attn.weight", {2, 1, 3}, {0, 2, 4, 1, 3, 5});
  const SafetensorsTensor bias = F32("transformer.h.0.attn.c_proj.bias", {2}, {7, 8});
  for (int r = 0; r < 2; ++r) {
    std::vector<TensorSlice> slices = {
        {stacked.name, "F32", stacked.shape, 3 * r, 3 * r + 3, stacked.data.substr(12 * r, 12)}};
    if (r == 0) slices.push_back({bias.name, "F32", bias.shape, 0, 2, bias.data});
    const std::string tmp = *store.BeginStep(1);
    REQUIRE(CheckpointStore::WriteRankFiles(tmp, r, {{ShardFileName(r, 2), *SerializeShardFile(slices)}}).ok());
  }
  TpLayoutRecord record;
  record.degree = 2;
  record.parameters[stacked.name] = {1, 3};
  absl::StatusOr<std::string> dir = store.Publish(
      1, 2, {{"config.json", "{}\n"}, {kTensorParallelFile, TpLayoutJson(record)}});
  REQUIRE(dir.ok());
  REQUIRE(ExportCheckpoint(*dir, (root.path / "out").string()).ok());
  absl::StatusOr<SafetensorsFile> file = ReadSafetensorsFile((root.path / "out" / "model.safetensors").string());
  REQUIRE(file.ok());
  REQUIRE(file->tensors.size() == 2);
  CHECK(file->tensors[0].name == stacked.name);
  CHECK(file->tensors[0].shape == std::vector<int64_t>{1, 6});
  CHECK(Values(file->tensors[0]) == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(Values(file->tensors[1]) == std::vector<float>{7, 8});
}

}  // namespace
}  // namespace accel::exec
