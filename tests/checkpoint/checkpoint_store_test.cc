#include "checkpoint/checkpoint_store.h"
#include "tests/common/temp_root.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

namespace accel::exec {
namespace {
namespace fs = std::filesystem;

using testing::TempRoot;

std::vector<CheckpointFile> Files(int64_t step) {
  return {{"model.safetensors", std::string(1000, static_cast<char>('a' + step % 26))},
          {"state.json", "{\"step\": " + std::to_string(step) + "}"}};
}

TEST_CASE("write publishes a verified checkpoint and reads files back") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 3);
  auto dir = store.Write(7, Files(7));
  REQUIRE(dir.ok());
  CHECK(*dir == (root.path / "step_00000007").string());
  CHECK(CheckpointStore::Verify(*dir).ok());
  CHECK(*CheckpointStore::ReadFile(*dir, "state.json") == "{\"step\": 7}");
  CHECK(CheckpointStore::ReadFile(*dir, "nope").status().code() == absl::StatusCode::kNotFound);
  CHECK_FALSE(fs::exists(root.path / ".tmp-step_00000007"));
  auto latest = store.LatestGood();
  REQUIRE(latest.ok());
  CHECK(latest->step == 7);
}

TEST_CASE("keep-K prunes the oldest checkpoints and stale temporaries") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 2);
  fs::create_directories(root.path / ".tmp-step_00000099");
  for (int64_t step : {10, 20, 30, 40}) REQUIRE(store.Write(step, Files(step)).ok());
  auto all = store.List();
  REQUIRE(all.ok());
  REQUIRE(all->size() == 2);
  CHECK((*all)[0].step == 30);
  CHECK((*all)[1].step == 40);
  CHECK_FALSE(fs::exists(root.path / ".tmp-step_00000099"));
}

TEST_CASE("truncation and bit flips are detected and latest-good falls back") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 5);
  for (int64_t step : {1, 2, 3}) REQUIRE(store.Write(step, Files(step)).ok());
  const fs::path s3 = root.path / "step_00000003";
  const fs::path s2 = root.path / "step_00000002";

  // Truncate the newest checkpoint's model file.
  fs::resize_file(s3 / "model.safetensors", 500);
  absl::Status v3 = CheckpointStore::Verify(s3.string());
  CHECK(v3.code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(v3.message()) ==
        s3.string() + ": model.safetensors has 500 bytes, manifest says 1000 (truncated?)");

  // Flip one byte of the next one.
  {
    std::fstream f(s2 / "model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(123);
    f.put('Z');
  }
  absl::Status v2 = CheckpointStore::Verify(s2.string());
  CHECK(v2.code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(v2.message()).find("model.safetensors fails its CRC-32C") != std::string::npos);
  CHECK(CheckpointStore::ReadFile(s2.string(), "model.safetensors").status().code() == absl::StatusCode::kDataLoss);

  std::vector<std::string> skipped;
  auto latest = store.LatestGood(&skipped);
  REQUIRE(latest.ok());
  CHECK(latest->step == 1);
  CHECK(skipped.size() == 2);

  // A missing manifest (crash before publication cannot cause it, manual damage can).
  fs::remove(root.path / "step_00000001" / "manifest.json");
  CHECK(store.LatestGood().status().message() == "no valid checkpoint under " + root.path.string());
}

// Found with fuzz/checkpoint_manifest_fuzzer (fuzz/regressions/checkpoint_manifest_fuzzer): a
// manifest with a non-string "format" threw out of nlohmann's value() (the process aborted), and
// one naming "/dev/zero" or "../x" made Verify and ReadFile read outside the checkpoint.
TEST_CASE("manifests with a mistyped format or a name outside the checkpoint are DataLoss") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 3);
  absl::StatusOr<std::string> dir = store.Write(1, Files(1));
  REQUIRE(dir.ok());
  const fs::path manifest = fs::path(*dir) / "manifest.json";
  auto with_manifest = [&](const std::string& text) {
    { std::ofstream(manifest) << text; }
    return std::string(CheckpointStore::Verify(*dir).message());
  };
  CHECK(with_manifest(R"({"format": 1, "files": []})") ==
        *dir + ": manifest.json is not a valid accel checkpoint manifest");
  CHECK(CheckpointStore::ManifestFiles(*dir).status().code() == absl::StatusCode::kDataLoss);
  for (const std::string name : {"/dev/zero", "../step_00000001/state.json", ".", "manifest.json", ".hidden"}) {
    const std::string text = R"({"format": "accel-checkpoint", "files": [{"name": ")" + name +
                             R"(", "size_bytes": 1, "crc32c": "00000000"}]})";
    const std::string expected = *dir + ": manifest.json names '" + name + "', which is not a checkpoint file name";
    CHECK(with_manifest(text) == expected);
    CHECK(CheckpointStore::ReadFile(*dir, name).status().message() == expected);
    CHECK(CheckpointStore::ManifestFiles(*dir).status().message() == expected);
  }
  CHECK(store.LatestGood().status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("rewriting a step replaces it and bad names are rejected") {
  TempRoot root;
  CheckpointStore store(root.path.string(), 2);
  REQUIRE(store.Write(5, Files(5)).ok());
  REQUIRE(store.Write(5, {{"other.bin", "x"}}).ok());
  CHECK_FALSE(fs::exists(root.path / "step_00000005" / "model.safetensors"));
  CHECK(store.Write(6, {{"a/b", "x"}}).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(store.Write(6, {{"manifest.json", "x"}}).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(store.LatestGood()->step == 5);
}

}  // namespace
}  // namespace accel::exec
