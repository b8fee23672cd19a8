#include "checkpoint/sharded_tensors.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "absl/strings/str_format.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/crc32c.h"
#include "checkpoint/safetensors.h"
#include "tests/common/temp_root.h"

namespace accel::exec {
namespace {
namespace fs = std::filesystem;

using testing::TempRoot;

// A global tensor of the test model with deterministic, position-dependent bytes.
struct Original {
  std::string dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

std::map<std::string, Original> Model() {
  auto make = [](std::string dtype, std::vector<int64_t> shape, int seed) {
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    std::string bytes(numel * SafetensorsDtypeSize(dtype), '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 131 + seed * 17 + i / 7) & 0xFF);
    return Original{dtype, shape, bytes};
  };
  return {{"wte.weight", make("F32", {7, 5}, 1)},
          {"h.0.w", make("F32", {6, 4}, 2)},
          {"optimizer.exp_avg.h.0.w", make("F32", {6, 4}, 3)},
          {"ln.bias", make("BF16", {5}, 4)},
          {"step", make("I64", {}, 5)}};
}

TensorSlice Slice(const std::map<std::string, Original>& model, const std::string& name, int64_t begin, int64_t end) {
  const Original& o = model.at(name);
  const int size = SafetensorsDtypeSize(o.dtype);
  return {name, o.dtype, o.shape, begin, end, o.bytes.substr(begin * size, (end - begin) * size)};
}

// Uneven 4-way layout: wte whole on rank 0, h.0.w split 10/1/0/13, ln.bias with empty ranges on
// ranks 0 and 3, the scalar on rank 3.
std::vector<std::vector<TensorSlice>> FourWay(const std::map<std::string, Original>& m) {
  return {
      {Slice(m, "wte.weight", 0, 35), Slice(m, "h.0.w", 0, 10), Slice(m, "optimizer.exp_avg.h.0.w", 0, 6),
       Slice(m, "ln.bias", 0, 0)},
      {Slice(m, "h.0.w", 10, 11), Slice(m, "optimizer.exp_avg.h.0.w", 6, 12), Slice(m, "ln.bias", 0, 2)},
      {Slice(m, "h.0.w", 11, 11), Slice(m, "optimizer.exp_avg.h.0.w", 12, 18), Slice(m, "ln.bias", 2, 5)},
      {Slice(m, "h.0.w", 11, 24), Slice(m, "optimizer.exp_avg.h.0.w", 18, 24), Slice(m, "ln.bias", 5, 5),
       Slice(m, "step", 0, 1)},
  };
}

// Every rank writes its shard into the step's temporary directory; rank 0 publishes.
std::string WriteCheckpoint(CheckpointStore& store, int64_t step, const std::vector<std::vector<TensorSlice>>& ranks) {
  const int world = static_cast<int>(ranks.size());
  for (int r = 0; r < world; ++r) {
    absl::StatusOr<std::string> tmp = store.BeginStep(step);
    REQUIRE(tmp.ok());
    absl::StatusOr<std::string> bytes = SerializeShardFile(ranks[r]);
    REQUIRE(bytes.ok());
    REQUIRE(CheckpointStore::WriteRankFiles(*tmp, r, {{ShardFileName(r, world), *bytes}}).ok());
  }
  absl::StatusOr<std::string> dir = store.Publish(step, world, {{"config.json", "{}\n"}});
  INFO(dir.status().message());
  REQUIRE(dir.ok());
  return *dir;
}

// Even split of numel over world ranks (the first numel % world ranks get one more).
std::pair<int64_t, int64_t> EvenRange(int64_t numel, int rank, int world) {
  const int64_t base = numel / world, extra = numel % world;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  return {begin, begin + base + (rank < extra ? 1 : 0)};
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST_CASE("shard files name and encode their slices") {
  CHECK(ShardFileName(3, 16) == "shard-00003-of-00016.safetensors");
  auto m = Model();
  absl::StatusOr<std::string> bytes = SerializeShardFile({Slice(m, "h.0.w", 3, 9), Slice(m, "ln.bias", 0, 0)});
  REQUIRE(bytes.ok());
  absl::StatusOr<SafetensorsFile> file = ParseSafetensors(*bytes, "x");
  REQUIRE(file.ok());
  CHECK(file->metadata.at("format") == "accel-shard");
  CHECK(file->metadata.at("version") == "1");
  CHECK(file->metadata.at("slices") ==
        R"({"h.0.w":{"range":[3,9],"shape":[6,4]},"ln.bias":{"range":[0,0],"shape":[5]}})");
  REQUIRE(file->tensors.size() == 2);
  CHECK(file->tensors[0].shape == std::vector<int64_t>{6});
  CHECK(file->tensors[0].data == m["h.0.w"].bytes.substr(12, 24));
}

TEST_CASE("SerializeShardFile rejects bad slices") {
  auto m = Model();
  auto error = [](std::vector<TensorSlice> slices) { return Message(SerializeShardFile(slices).status()); };
  TensorSlice s = Slice(m, "h.0.w", 0, 4);
  s.begin = -1;
  CHECK(error({s}) == "tensor h.0.w: range [-1, 4) is not within [0, 24)");
  s = Slice(m, "h.0.w", 20, 24);
  s.end = 25;
  CHECK(error({s}) == "tensor h.0.w: range [20, 25) is not within [0, 24)");
  s = Slice(m, "h.0.w", 5, 5);
  s.end = 4;
  CHECK(error({s}) == "tensor h.0.w: range [5, 4) is not within [0, 24)");
  s = Slice(m, "h.0.w", 0, 4);
  s.data.pop_back();
  CHECK(error({s}) == "tensor h.0.w: 15 data bytes for range [0, 4) of F32, expected 16");
  s = Slice(m, "h.0.w", 0, 4);
  s.dtype = "F8";
  CHECK(error({s}) == "tensor h.0.w: unknown dtype F8");
  s = Slice(m, "h.0.w", 0, 0);
  s.global_shape = {6, -4};
  CHECK(error({s}) == "tensor h.0.w: negative dimension in shape [6, -4]");
  CHECK(error({Slice(m, "h.0.w", 0, 4), Slice(m, "h.0.w", 4, 8)}) == "duplicate tensor slice h.0.w");
  CHECK(SerializeShardFile({s}).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("4 writers publish, ranges read back across file boundaries") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 3);
  auto m = Model();
  const std::string dir = WriteCheckpoint(store, 10, FourWay(m));
  CHECK(dir == (root.path / "step_00000010").string());
  CHECK(CheckpointStore::Verify(dir).ok());
  CHECK(*CheckpointStore::ManifestFiles(dir) ==
        std::vector<std::string>{"shard-00000-of-00004.safetensors", "shard-00001-of-00004.safetensors",
                                 "shard-00002-of-00004.safetensors", "shard-00003-of-00004.safetensors",
                                 "config.json"});
  CHECK_FALSE(fs::exists(fs::path(dir) / "rank-00000.files.json"));
  CHECK_FALSE(fs::exists(root.path / ".tmp-step_00000010"));

  absl::StatusOr<ShardedTensorReader> reader = ShardedTensorReader::Open(dir);
  INFO(reader.status().message());
  REQUIRE(reader.ok());
  std::vector<GlobalTensorInfo> tensors = reader->Tensors();
  REQUIRE(tensors.size() == 5);
  CHECK(tensors[0].name == "h.0.w");
  CHECK(tensors[1].name == "ln.bias");
  CHECK(tensors[1].dtype == "BF16");
  CHECK(tensors[4].name == "wte.weight");
  CHECK(tensors[4].shape == std::vector<int64_t>{7, 5});
  for (const GlobalTensorInfo& t : tensors) {
    const Original& o = m.at(t.name);
    CHECK(t.dtype == o.dtype);
    CHECK(t.shape == o.shape);
    CHECK(*reader->ReadWhole(t.name) == o.bytes);
    const int size = SafetensorsDtypeSize(o.dtype);
    for (int64_t b = 0; b <= t.numel(); ++b) {
      for (int64_t e = b; e <= t.numel(); ++e) {
        absl::StatusOr<std::string> range = reader->ReadRange(t.name, b, e);
        REQUIRE(range.ok());
        REQUIRE(*range == o.bytes.substr(b * size, (e - b) * size));
      }
    }
  }
  CHECK(reader->ReadRange("nope", 0, 1).status().code() == absl::StatusCode::kNotFound);
  CHECK(Message(reader->ReadRange("nope", 0, 1).status()) == dir + ": no tensor nope");
  CHECK(reader->ReadRange("h.0.w", 3, 25).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(Message(reader->ReadRange("h.0.w", 3, 25).status()) == "tensor h.0.w: range [3, 25) is not within [0, 24)");
  CHECK(Message(reader->ReadRange("h.0.w", 5, 4).status()) == "tensor h.0.w: range [5, 4) is not within [0, 24)");
  CHECK(Message(reader->ReadWhole("nope").status()) == dir + ": no tensor nope");
}

TEST_CASE("a 4-way checkpoint reshards to 2 and 3 readers and back") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 5);
  auto m = Model();
  const std::string four = WriteCheckpoint(store, 1, FourWay(m));
  absl::StatusOr<ShardedTensorReader> reader = ShardedTensorReader::Open(four);
  REQUIRE(reader.ok());
  int64_t step = 2;
  for (int world : {2, 3}) {
    std::vector<std::vector<TensorSlice>> ranks(world);
    for (const GlobalTensorInfo& t : reader->Tensors()) {
      std::string joined;
      for (int r = 0; r < world; ++r) {
        auto [b, e] = EvenRange(t.numel(), r, world);
        absl::StatusOr<std::string> bytes = reader->ReadRange(t.name, b, e);
        REQUIRE(bytes.ok());
        joined += *bytes;
        ranks[r].push_back({t.name, t.dtype, t.shape, b, e, *bytes});
      }
      CHECK(joined == m.at(t.name).bytes);
    }
    // What the new ranks read is a valid checkpoint of their own.
    absl::StatusOr<ShardedTensorReader> again = ShardedTensorReader::Open(WriteCheckpoint(store, step++, ranks));
    REQUIRE(again.ok());
    for (const auto& [name, o] : m) CHECK(*again->ReadWhole(name) == o.bytes);
  }
}

TEST_CASE("a filter keeps only the tensors asked for") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 1);
  auto m = Model();
  const std::string dir = WriteCheckpoint(store, 1, FourWay(m));
  auto reader = ShardedTensorReader::Open(dir, [](const std::string& name) { return name.rfind("optimizer.", 0) != 0; });
  REQUIRE(reader.ok());
  CHECK(reader->Tensors().size() == 4);
  CHECK(reader->ReadWhole("optimizer.exp_avg.h.0.w").status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("gaps, overlaps and inconsistent shapes or dtypes are DataLoss") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 10);
  auto m = Model();
  const std::string f0 = ShardFileName(0, 2), f1 = ShardFileName(1, 2);
  auto open_error = [&](int64_t step, std::vector<std::vector<TensorSlice>> ranks) {
    absl::StatusOr<ShardedTensorReader> r = ShardedTensorReader::Open(WriteCheckpoint(store, step, ranks));
    CHECK(r.status().code() == absl::StatusCode::kDataLoss);
    return Message(r.status());
  };
  const std::string d1 = (root.path / "step_00000001").string();
  CHECK(open_error(1, {{Slice(m, "h.0.w", 0, 10)}, {Slice(m, "h.0.w", 11, 24)}}) ==
        d1 + ": tensor h.0.w: elements [10, 11) are missing");
  const std::string d2 = (root.path / "step_00000002").string();
  CHECK(open_error(2, {{Slice(m, "h.0.w", 0, 10)}, {Slice(m, "h.0.w", 10, 20)}}) ==
        d2 + ": tensor h.0.w: elements [20, 24) are missing");
  const std::string d3 = (root.path / "step_00000003").string();
  CHECK(open_error(3, {{Slice(m, "h.0.w", 5, 24)}, {Slice(m, "h.0.w", 0, 0)}}) ==
        d3 + ": tensor h.0.w: elements [0, 5) are missing");
  const std::string d4 = (root.path / "step_00000004").string();
  CHECK(open_error(4, {{Slice(m, "h.0.w", 0, 10)}, {Slice(m, "h.0.w", 8, 24)}}) ==
        d4 + ": tensor h.0.w: elements [8, 10) overlap (" + f0 + " and " + f1 + ")");
  TensorSlice transposed = Slice(m, "h.0.w", 10, 24);
  transposed.global_shape = {4, 6};
  const std::string d5 = (root.path / "step_00000005").string();
  CHECK(open_error(5, {{Slice(m, "h.0.w", 0, 10)}, {transposed}}) ==
        d5 + ": tensor h.0.w: shape [6, 4] in " + f0 + " but [4, 6] in " + f1);
  TensorSlice as_int = Slice(m, "h.0.w", 10, 24);
  as_int.dtype = "I32";
  const std::string d6 = (root.path / "step_00000006").string();
  CHECK(open_error(6, {{Slice(m, "h.0.w", 0, 10)}, {as_int}}) ==
        d6 + ": tensor h.0.w: dtype F32 in " + f0 + " but I32 in " + f1);
}

TEST_CASE("files that are not accel shards are rejected") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 3);
  SafetensorsFile plain;
  plain.tensors.push_back({"x", "F32", {2}, std::string(8, 'a')});
  const std::string name = ShardFileName(0, 1);
  absl::StatusOr<std::string> dir = store.Write(1, {{name, *SerializeSafetensors(plain)}});
  REQUIRE(dir.ok());
  CHECK(Message(ShardedTensorReader::Open(*dir).status()) ==
        *dir + "/" + name + ": not an accel shard file (metadata format '')");

  plain.metadata = {{"format", "accel-shard"}, {"version", "1"}, {"slices", R"({"x": {"shape": [3], "range": [0, 2]}})"}};
  dir = store.Write(2, {{name, *SerializeSafetensors(plain)}});
  REQUIRE(dir.ok());
  absl::StatusOr<ShardedTensorReader> ok = ShardedTensorReader::Open(*dir);
  CHECK(Message(ok.status()) == *dir + ": tensor x: elements [2, 3) are missing");

  plain.metadata["slices"] = R"({"x": {"shape": [3], "range": [1, 2]}})";
  dir = store.Write(3, {{name, *SerializeSafetensors(plain)}});
  CHECK(Message(ShardedTensorReader::Open(*dir).status()) ==
        *dir + "/" + name + ": tensor x has shape [2], its range [1, 2) needs [1]");

  plain.metadata["slices"] = R"({"x": {"shape": [3], "range": [0, 2]}, "y": {"shape": [1], "range": [0, 1]}})";
  dir = store.Write(4, {{name, *SerializeSafetensors(plain)}});
  CHECK(Message(ShardedTensorReader::Open(*dir).status()) ==
        *dir + "/" + name + ": slices metadata names y, which the file does not hold");

  plain.metadata["slices"] = "{}";
  dir = store.Write(5, {{name, *SerializeSafetensors(plain)}});
  CHECK(Message(ShardedTensorReader::Open(*dir).status()) == *dir + "/" + name + ": tensor x has no slices metadata entry");

  dir = store.Write(6, {{"notes.txt", "hello"}});
  CHECK(ShardedTensorReader::Open(*dir).status().code() == absl::StatusCode::kNotFound);
  CHECK(Message(ShardedTensorReader::Open(*dir).status()) ==
        *dir + ": the manifest lists no shard-*.safetensors or model.safetensors");
}

TEST_CASE("the single-writer model.safetensors layout reads as whole tensors") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 1);
  auto m = Model();
  SafetensorsFile model;
  model.metadata["format"] = "pt";
  model.tensors.push_back({"wte.weight", "F32", {7, 5}, m["wte.weight"].bytes});
  model.tensors.push_back({"ln.bias", "BF16", {5}, m["ln.bias"].bytes});
  absl::StatusOr<std::string> dir = store.Write(3, {{"model.safetensors", *SerializeSafetensors(model)},
                                                    {"optimizer.pt", "opaque"}});
  REQUIRE(dir.ok());
  absl::StatusOr<ShardedTensorReader> reader = ShardedTensorReader::Open(*dir);
  REQUIRE(reader.ok());
  REQUIRE(reader->Tensors().size() == 2);
  CHECK(*reader->ReadRange("wte.weight", 3, 17) == m["wte.weight"].bytes.substr(12, 56));
  CHECK(*reader->ReadWhole("ln.bias") == m["ln.bias"].bytes);
}

TEST_CASE("publication needs every rank's list and refuses leftovers") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 3);
  auto m = Model();
  const std::string good = WriteCheckpoint(store, 10, FourWay(m));
  auto ranks = FourWay(m);
  absl::StatusOr<std::string> tmp = store.BeginStep(20);
  REQUIRE(tmp.ok());
  CHECK(*tmp == (root.path / ".tmp-step_00000020").string());
  CHECK(*store.BeginStep(20) == *tmp);  // idempotent: every rank calls it
  for (int r : {0, 1, 3}) {
    REQUIRE(CheckpointStore::WriteRankFiles(*tmp, r, {{ShardFileName(r, 4), *SerializeShardFile(ranks[r])}}).ok());
  }
  absl::StatusOr<std::string> published = store.Publish(20, 4, {});
  CHECK(published.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(Message(published.status()) ==
        *tmp + ": rank 2 of 4 has not written its file list (rank-00002.files.json)");
  CHECK(store.LatestGood()->step == 10);

  // A list left by an earlier attempt with more ranks.
  REQUIRE(CheckpointStore::WriteRankFiles(*tmp, 2, {{ShardFileName(2, 4), *SerializeShardFile(ranks[2])}}).ok());
  REQUIRE(CheckpointStore::WriteRankFiles(*tmp, 5, {{"shard-00005-of-00006.safetensors", "x"}}).ok());
  CHECK(Message(store.Publish(20, 4, {}).status()) ==
        *tmp + ": rank-00005.files.json is from rank 5, but the world size is 4 (left over from an earlier run?)");
  fs::remove(fs::path(*tmp) / "rank-00005.files.json");

  // Two ranks claiming one file name.
  REQUIRE(CheckpointStore::WriteRankFiles(*tmp, 3, {{ShardFileName(2, 4), *SerializeShardFile(ranks[2])}}).ok());
  CHECK(Message(store.Publish(20, 4, {}).status()) ==
        *tmp + ": shard-00002-of-00004.safetensors is written by rank 2 and rank 3");
  REQUIRE(CheckpointStore::WriteRankFiles(*tmp, 3, {{ShardFileName(3, 4), *SerializeShardFile(ranks[3])}}).ok());

  // A file shorter than its rank's list says.
  const fs::path shard1 = fs::path(*tmp) / ShardFileName(1, 4);
  const uintmax_t size1 = fs::file_size(shard1);
  fs::resize_file(shard1, 10);
  published = store.Publish(20, 4, {});
  CHECK(published.status().code() == absl::StatusCode::kDataLoss);
  CHECK(Message(published.status()) ==
        *tmp + ": rank 1's shard-00001-of-00004.safetensors has 10 bytes, its list says " + std::to_string(size1));
  fs::remove(shard1);
  CHECK(Message(store.Publish(20, 4, {}).status()) == *tmp + ": rank 1's shard-00001-of-00004.safetensors is missing");
  REQUIRE(CheckpointStore::WriteRankFiles(*tmp, 1, {{ShardFileName(1, 4), *SerializeShardFile(ranks[1])}}).ok());

  // A malformed list.
  { std::ofstream(fs::path(*tmp) / "rank-00000.files.json") << "{"; }
  CHECK(Message(store.Publish(20, 4, {}).status()) == *tmp + ": rank-00000.files.json is malformed");
  REQUIRE(CheckpointStore::WriteRankFiles(*tmp, 0, {{ShardFileName(0, 4), *SerializeShardFile(ranks[0])}}).ok());

  // An extra file that a rank already wrote, and a stray file of a crashed writer.
  CHECK(store.Publish(20, 4, {{ShardFileName(0, 4), "x"}}).status().code() == absl::StatusCode::kInvalidArgument);
  { std::ofstream(fs::path(*tmp) / "stray.bin") << "junk"; }
  published = store.Publish(20, 4, {{"trainer_state.json", "{}"}});
  INFO(published.status().message());
  REQUIRE(published.ok());
  CHECK_FALSE(fs::exists(fs::path(*published) / "stray.bin"));
  CHECK(store.LatestGood()->step == 20);
  CHECK(ShardedTensorReader::Open(*published).ok());
  CHECK(ShardedTensorReader::Open(good).ok());

  CHECK(Message(store.Publish(30, 4, {}).status()) ==
        "no checkpoint of step 30 is in progress (" + (root.path / ".tmp-step_00000030").string() + " is missing)");
  CHECK(store.Publish(-1, 4, {}).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(store.Publish(20, 0, {}).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(store.BeginStep(-1).status().code() == absl::StatusCode::kInvalidArgument);
}

// Found with fuzz/checkpoint_manifest_fuzzer (fuzz/regressions/checkpoint_manifest_fuzzer): a list
// with a non-string "format" threw out of nlohmann's value() (the process aborted), and a list could
// name files outside the checkpoint ("../x", "/dev/zero") for Publish to put in the manifest.
TEST_CASE("rank lists with a mistyped format or a name outside the checkpoint are malformed") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 3);
  absl::StatusOr<std::string> tmp = store.BeginStep(1);
  REQUIRE(tmp.ok());
  REQUIRE(CheckpointStore::WriteRankFiles(*tmp, 0, {{"a.bin", "hello"}}).ok());
  const fs::path list = fs::path(*tmp) / CheckpointStore::RankListName(0);
  auto publish_with = [&](const std::string& text) {
    { std::ofstream(list) << text; }
    return Message(store.Publish(1, 1, {}).status());
  };
  CHECK(publish_with(R"({"format": 1, "rank": 0, "files": []})") == *tmp + ": rank-00000.files.json is malformed");
  const std::string entry = R"(", "size_bytes": 5, "crc32c": "9a71bb4c"}]})";
  for (const std::string name : {"../a.bin", "/dev/zero", ".", "..", "manifest.json", ".tmp"}) {
    CHECK(publish_with(R"({"format": "accel-rank-files", "rank": 0, "files": [{"name": ")" + name + entry) ==
          *tmp + ": rank-00000.files.json names '" + name + "', which is not a checkpoint file name");
  }
  CHECK(publish_with(R"({"format": "accel-rank-files", "rank": 0, "files": [{"name": "a.bin)" + entry) == "");
}

TEST_CASE("WriteRankFiles checks its arguments") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 3);
  const std::string tmp = *store.BeginStep(1);
  CHECK(CheckpointStore::WriteRankFiles(tmp, -1, {}).code() == absl::StatusCode::kInvalidArgument);
  CHECK(CheckpointStore::WriteRankFiles(tmp, 0, {{"rank-00001.files.json", "x"}}).code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(CheckpointStore::WriteRankFiles(tmp, 0, {{"a/b", "x"}}).code() == absl::StatusCode::kInvalidArgument);
  CHECK(CheckpointStore::WriteRankFiles(tmp, 0, {{"a", "x"}, {"a", "y"}}).code() == absl::StatusCode::kInvalidArgument);
  CHECK(CheckpointStore::WriteRankFiles(tmp, 0, {{"manifest.json", "x"}}).code() == absl::StatusCode::kInvalidArgument);
  const std::string missing = (root.path / ".tmp-step_00000009").string();
  absl::Status s = CheckpointStore::WriteRankFiles(missing, 0, {{"a", "x"}});
  CHECK(s.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(Message(s) == missing + " does not exist (BeginStep creates it)");
  CHECK(CheckpointStore::RankListName(7) == "rank-00007.files.json");
}

TEST_CASE("a killed write leaves the previous checkpoint readable") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 3);
  auto m = Model();
  const std::string good = WriteCheckpoint(store, 10, FourWay(m));
  // Step 20: two of four ranks wrote, then the job died before Publish.
  auto ranks = FourWay(m);
  const std::string tmp = *store.BeginStep(20);
  for (int r : {0, 1}) {
    REQUIRE(CheckpointStore::WriteRankFiles(tmp, r, {{ShardFileName(r, 4), *SerializeShardFile(ranks[r])}}).ok());
  }
  // A crash in the middle of writing a shard leaves a partial file too.
  { std::ofstream(fs::path(tmp) / ShardFileName(2, 4)) << "partial"; }
  absl::StatusOr<CheckpointInfo> latest = store.LatestGood();
  REQUIRE(latest.ok());
  CHECK(latest->step == 10);
  absl::StatusOr<ShardedTensorReader> reader = ShardedTensorReader::Open(latest->path);
  REQUIRE(reader.ok());
  CHECK(*reader->ReadWhole("h.0.w") == m["h.0.w"].bytes);

  // After the restart, rank 0 clears leftovers before anyone writes.
  REQUIRE(store.RemoveStaleTemporaries().ok());
  CHECK_FALSE(fs::exists(tmp));
  CHECK(fs::exists(good));
}

TEST_CASE("Publish prunes to keep-K and only temporaries of earlier steps") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 2);
  auto m = Model();
  REQUIRE(store.BeginStep(5).ok());
  REQUIRE(store.BeginStep(50).ok());
  for (int64_t step : {10, 20, 30}) WriteCheckpoint(store, step, FourWay(m));
  auto all = store.List();
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].step == 20);
  CHECK((*all)[1].step == 30);
  CHECK_FALSE(fs::exists(root.path / ".tmp-step_00000005"));
  CHECK(fs::exists(root.path / ".tmp-step_00000050"));
}

TEST_CASE("a corrupt byte in a shard makes LatestGood fall back") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 3);
  auto m = Model();
  WriteCheckpoint(store, 1, FourWay(m));
  const std::string newest = WriteCheckpoint(store, 2, FourWay(m));
  const fs::path shard = fs::path(newest) / ShardFileName(1, 4);
  std::string bytes;
  {
    std::ifstream in(shard, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string good_crc = absl::StrFormat("%08x", Crc32c(bytes));
  bytes[bytes.size() - 3] ^= 0x40;
  { std::ofstream(shard, std::ios::binary) << bytes; }
  const std::string bad_crc = absl::StrFormat("%08x", Crc32c(bytes));
  const std::string expected =
      newest + ": shard-00001-of-00004.safetensors fails its CRC-32C (" + bad_crc + " != " + good_crc + ")";
  std::vector<std::string> skipped;
  absl::StatusOr<CheckpointInfo> latest = store.LatestGood(&skipped);
  REQUIRE(latest.ok());
  CHECK(latest->step == 1);
  CHECK(skipped == std::vector<std::string>{expected});
  absl::StatusOr<ShardedTensorReader> reader = ShardedTensorReader::Open(newest);
  CHECK(reader.status().code() == absl::StatusCode::kDataLoss);
  CHECK(Message(reader.status()) == expected);
}

TEST_CASE("ranks writing concurrently, then rank 0 publishing") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 2);
  auto m = Model();
  const auto ranks = FourWay(m);
  for (int64_t step : {100, 200}) {
    std::vector<absl::Status> results(ranks.size());
    std::vector<std::thread> threads;
    for (int r = 0; r < static_cast<int>(ranks.size()); ++r) {
      threads.emplace_back([&, r] {
        // Each rank has its own store object, as each process would.
        CheckpointStore own(root.path.string(), 2);
        absl::StatusOr<std::string> tmp = own.BeginStep(step);
        absl::StatusOr<std::string> bytes = SerializeShardFile(ranks[r]);
        results[r] = !tmp.ok() ? tmp.status() : !bytes.ok() ? bytes.status()
                     : CheckpointStore::WriteRankFiles(*tmp, r, {{ShardFileName(r, 4), *bytes}});
      });
    }
    for (std::thread& t : threads) t.join();  // the barrier
    for (const absl::Status& s : results) CHECK(s.ok());
    absl::StatusOr<std::string> dir = store.Publish(step, 4, {});
    REQUIRE(dir.ok());
    absl::StatusOr<ShardedTensorReader> reader = ShardedTensorReader::Open(*dir);
    REQUIRE(reader.ok());
    for (const auto& [name, o] : m) CHECK(*reader->ReadWhole(name) == o.bytes);
  }
  CHECK(store.LatestGood()->step == 200);
}

}  // namespace
}  // namespace accel::exec
