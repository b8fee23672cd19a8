// libFuzzer target: the JSON files of a checkpoint directory (checkpoint/checkpoint_store.h).
// The first input byte picks the file; the rest is its contents:
//   'R'  rank-00000.files.json, the per-rank list CheckpointStore::Publish merges (multi-writer
//        checkpoints), in ROOT/.tmp-step_00000001 next to a file a.bin; then Publish(1, 1, ...);
//   else manifest.json of ROOT/step_00000001 next to model.safetensors and config.json; then
//        Verify, ManifestFiles, ReadFile of each listed name and LatestGood, as resume does.
//
// Invariants: names a manifest or list yields are plain file names (no '/', not "." or ".."), as
// CheckpointFile documents, so no file outside the checkpoint directory is ever read; a directory
// that verifies can read every file it lists; a published checkpoint lists what was written.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/checkpoint_store.h"
#include "common/remove_tree.h"
#include "fuzz/fuzz_util.h"

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxReads = 8;

void CheckPlainName(const std::string& name) {
  ACCEL_FUZZ_CHECK(!name.empty() && name.find('/') == std::string::npos && name != "." && name != "..",
                   "checkpoint file name '" + name + "' is not a plain file name");
}

void FuzzManifest(const std::string& root, std::string_view manifest) {
  using accel::exec::CheckpointStore;
  const std::string dir = root + "/step_00000001";
  fs::create_directories(dir);
  accel::fuzz::WriteFileOrDie(dir + "/model.safetensors", "hello");
  accel::fuzz::WriteFileOrDie(dir + "/config.json", "{}\n");
  accel::fuzz::WriteFileOrDie(dir + "/manifest.json", manifest);
  const absl::Status verified = CheckpointStore::Verify(dir);
  absl::StatusOr<std::vector<std::string>> names = CheckpointStore::ManifestFiles(dir);
  ACCEL_FUZZ_CHECK(names.ok() || !verified.ok(), "Verify passes but ManifestFiles fails");
  if (names.ok()) {
    for (size_t i = 0; i < names->size() && i < kMaxReads; ++i) {
      const std::string& name = (*names)[i];
      CheckPlainName(name);
      absl::StatusOr<std::string> bytes = CheckpointStore::ReadFile(dir, name);
      ACCEL_FUZZ_CHECK(bytes.ok() || !verified.ok(), "Verify passes but ReadFile(" + name + ") fails");
    }
  }
  std::vector<std::string> skipped;
  absl::StatusOr<accel::exec::CheckpointInfo> latest = CheckpointStore(root, 2).LatestGood(&skipped);
  ACCEL_FUZZ_CHECK(latest.ok() == verified.ok(), "LatestGood disagrees with Verify");
}

void FuzzRankList(const std::string& root, std::string_view list) {
  using accel::exec::CheckpointStore;
  const std::string tmp = root + "/.tmp-step_00000001";
  fs::create_directories(tmp);
  accel::fuzz::WriteFileOrDie(tmp + "/a.bin", "hello");
  accel::fuzz::WriteFileOrDie(tmp + "/" + CheckpointStore::RankListName(0), list);
  absl::StatusOr<std::string> published = CheckpointStore(root, 2).Publish(1, 1, {{"config.json", "{}\n"}});
  if (!published.ok()) return;
  absl::StatusOr<std::vector<std::string>> names = CheckpointStore::ManifestFiles(*published);
  ACCEL_FUZZ_CHECK(names.ok(), "published checkpoint has no readable manifest: " + names.status().ToString());
  for (const std::string& name : *names) {
    CheckPlainName(name);
    ACCEL_FUZZ_CHECK(fs::exists(fs::path(*published) / name), "published checkpoint lacks " + name);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string root = accel::fuzz::ScratchDir() + "/ckpt";
  std::error_code ec;
  accel::RemoveTree(root, ec);
  const std::string_view contents(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] == 'R') {
    FuzzRankList(root, contents);
  } else {
    FuzzManifest(root, contents);
  }
  return 0;
}
