#include "checkpoint/export.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/app.h"
#include "cli/export_command.h"
#include "common/exit_codes.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_tensors.h"
#include "tests/common/temp_root.h"

namespace accel::exec {
namespace {
namespace fs = std::filesystem;

using testing::TempRoot;

constexpr char kConfig[] = "{\n  \"model_type\": \"gpt2\"\n}\n";

// Model parameters (Hugging Face names) and one optimizer state, with distinct bytes.
std::vector<SafetensorsTensor> Originals() {
  auto bytes = [](size_t n, int seed) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 29 + seed * 71) & 0xFF);
    return s;
  };
  return {{"transformer.wte.weight", "F32", {10, 4}, bytes(160, 1)},
          {"transformer.h.0.ln_1.bias", "BF16", {4}, bytes(8, 2)},
          {"transformer.h.0.attn.c_attn.weight", "F32", {4, 12}, bytes(192, 3)},
          {"optimizer.exp_avg.transformer.wte.weight", "F32", {10, 4}, bytes(160, 4)}};
}

// A 3-rank sharded checkpoint: wte whole on rank 0, the others split unevenly; config.json from
// rank 0 unless with_config is false.
std::string WriteSharded(const fs::path& root, int64_t step, bool with_config = true) {
  CheckpointStore store(root.string(), 5);
  const std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges = {
      {{0, 40}, {0, 0}, {0, 5}, {0, 13}}, {{40, 40}, {0, 3}, {5, 40}, {13, 14}}, {{40, 40}, {3, 4}, {40, 48}, {14, 40}}};
  const std::vector<SafetensorsTensor> originals = Originals();
  for (int r = 0; r < 3; ++r) {
    std::vector<TensorSlice> slices;
    for (size_t t = 0; t < originals.size(); ++t) {
      const SafetensorsTensor& o = originals[t];
      const auto [b, e] = ranges[r][t];
      const int size = SafetensorsDtypeSize(o.dtype);
      slices.push_back({o.name, o.dtype, o.shape, b, e, o.data.substr(b * size, (e - b) * size)});
    }
    const std::string tmp = *store.BeginStep(step);
    REQUIRE(CheckpointStore::WriteRankFiles(tmp, r, {{ShardFileName(r, 3), *SerializeShardFile(slices)}}).ok());
  }
  std::vector<CheckpointFile> extra = {{"trainer_state.json", "{}"}};
  if (with_config) extra.push_back({"config.json", kConfig});
  absl::StatusOr<std::string> dir = store.Publish(step, 3, extra);
  REQUIRE(dir.ok());
  return *dir;
}

// Today's single-writer layout: Trainer::SaveState's files plus config.json.
std::string WriteLegacy(const fs::path& root, int64_t step) {
  SafetensorsFile model;
  model.metadata["format"] = "pt";
  for (const SafetensorsTensor& t : Originals()) {
    if (t.name.rfind("optimizer.", 0) != 0) model.tensors.push_back(t);
  }
  absl::StatusOr<std::string> dir = CheckpointStore(root.string(), 5)
                                        .Write(step, {{"model.safetensors", *SerializeSafetensors(model)},
                                                      {"optimizer.pt", "opaque torch archive"},
                                                      {"trainer_state.json", "{}"},
                                                      {"config.json", kConfig}});
  REQUIRE(dir.ok());
  return *dir;
}

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// out holds a model.safetensors with exactly the model tensors, the config and nothing else.
void CheckExported(const fs::path& out) {
  absl::StatusOr<SafetensorsFile> file = ReadSafetensorsFile((out / "model.safetensors").string());
  REQUIRE(file.ok());
  CHECK(file->metadata == std::map<std::string, std::string>{{"format", "pt"}});
  std::map<std::string, SafetensorsTensor> got;
  for (SafetensorsTensor& t : file->tensors) got[t.name] = t;
  CHECK(got.size() == 3);
  for (const SafetensorsTensor& o : Originals()) {
    if (o.name.rfind("optimizer.", 0) == 0) {
      CHECK(got.count(o.name) == 0);
      continue;
    }
    REQUIRE(got.count(o.name) == 1);
    CHECK(got[o.name].dtype == o.dtype);
    CHECK(got[o.name].shape == o.shape);
    CHECK(got[o.name].data == o.data);
  }
  CHECK(Slurp(out / "config.json") == kConfig);
  int entries = 0;
  for ([[maybe_unused]] const fs::directory_entry& e : fs::directory_iterator(out)) ++entries;
  CHECK(entries == 2);  // no temporaries left behind
}

TEST_CASE("export consolidates a sharded checkpoint") {
  TempRoot root;
  const std::string dir = WriteSharded(root.path / "ckpt", 7);
  ExportSummary summary;
  absl::Status s = ExportCheckpoint(dir, (root.path / "out").string(), &summary);
  INFO(s.message());
  REQUIRE(s.ok());
  CheckExported(root.path / "out");
  CHECK(summary.num_tensors == 3);
  CHECK(summary.num_bytes == static_cast<int64_t>(fs::file_size(root.path / "out" / "model.safetensors")));
  CHECK(summary.model_path == (root.path / "out" / "model.safetensors").string());
  // Exporting again over the same directory replaces the files.
  REQUIRE(ExportCheckpoint(dir, (root.path / "out").string()).ok());
  CheckExported(root.path / "out");
}

TEST_CASE("export reads the single-writer layout") {
  TempRoot root;
  const std::string dir = WriteLegacy(root.path / "ckpt", 3);
  REQUIRE(ExportCheckpoint(dir, (root.path / "out").string()).ok());
  CheckExported(root.path / "out");
}

TEST_CASE("export failures") {
  TempRoot root;
  const std::string no_config = WriteSharded(root.path / "ckpt", 1, /*with_config=*/false);
  absl::Status s = ExportCheckpoint(no_config, (root.path / "out").string());
  CHECK(s.code() == absl::StatusCode::kNotFound);
  CHECK(s.message() == no_config + " has no config.json");
  CHECK_FALSE(fs::exists(root.path / "out"));

  const std::string dir = WriteSharded(root.path / "ckpt", 2);
  fs::remove(fs::path(dir) / "shard-00001-of-00003.safetensors");
  s = ExportCheckpoint(dir, (root.path / "out").string());
  CHECK(s.code() == absl::StatusCode::kDataLoss);
  CHECK(s.message() == dir + ": shard-00001-of-00003.safetensors is missing");

  const std::string good = WriteSharded(root.path / "ckpt", 3);
  { std::ofstream(root.path / "file") << "x"; }
  s = ExportCheckpoint(good, (root.path / "file").string());
  CHECK(s.code() == absl::StatusCode::kInternal);
  CHECK(std::string(s.message()).rfind("cannot create " + (root.path / "file").string() + ": ", 0) == 0);
}

struct CliResult {
  int code;
  std::string out, err;
};

// Runs `accel ARGS...` in-process with only the export command registered.
CliResult Accel(std::vector<std::string> args) {
  args.insert(args.begin(), "accel");
  std::vector<const char*> argv;
  for (const std::string& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  cli::AppContext context;
  context.out = &out;
  context.err = &err;
  const int code = cli::RunApp(static_cast<int>(argv.size()), argv.data(), {cli::RegisterExportCommand}, context);
  return {code, out.str(), err.str()};
}

TEST_CASE("accel export: a step directory or the newest valid checkpoint of a root") {
  TempRoot root;
  const fs::path ckpt = root.path / "ckpt";
  WriteLegacy(ckpt, 1);
  const std::string step2 = WriteSharded(ckpt, 2);
  const std::string step3 = WriteSharded(ckpt, 3);
  const std::string out = (root.path / "hf").string();

  CliResult r = Accel({"export", step2, "-o", out});
  INFO(r.err);
  CHECK(r.code == kExitOk);
  CHECK(r.err.empty());
  const int64_t size = static_cast<int64_t>(fs::file_size(fs::path(out) / "model.safetensors"));
  CHECK(r.out == "exported " + step2 + " to " + out + " (3 tensors, " + std::to_string(size) + " bytes)\n");
  CheckExported(out);

  // The newest checkpoint is damaged: the root falls back to step 2 and says why.
  fs::resize_file(fs::path(step3) / "config.json", 3);
  r = Accel({"export", ckpt.string(), "--output", out});
  CHECK(r.code == kExitOk);
  CHECK(r.err == "accel export: skipping " + step3 + ": config.json has 3 bytes, manifest says " +
                     std::to_string(std::string(kConfig).size()) + " (truncated?)\n");
  CHECK(r.out.rfind("exported " + step2 + " to " + out, 0) == 0);
  CheckExported(out);

  // The damaged checkpoint itself, named directly, is refused.
  r = Accel({"export", step3, "-o", out});
  CHECK(r.code == kExitInvalid);
  CHECK(r.err == "accel export: " + step3 + ": config.json has 3 bytes, manifest says " +
                     std::to_string(std::string(kConfig).size()) + " (truncated?)\n");
}

TEST_CASE("accel export: failures") {
  TempRoot root;
  const std::string out = (root.path / "hf").string();
  const std::string missing = (root.path / "nope").string();
  CliResult r = Accel({"export", missing, "-o", out});
  CHECK(r.code == kExitInvalid);
  CHECK(r.err == "accel export: " + missing + " does not exist\n");
  CHECK(r.out.empty());

  fs::create_directories(root.path / "empty");
  r = Accel({"export", (root.path / "empty").string(), "-o", out});
  CHECK(r.code == kExitInvalid);
  CHECK(r.err == "accel export: no valid checkpoint under " + (root.path / "empty").string() + "\n");

  { std::ofstream(root.path / "file") << "x"; }
  r = Accel({"export", (root.path / "file").string(), "-o", out});
  CHECK(r.code == kExitInvalid);
  CHECK(r.err == "accel export: " + (root.path / "file").string() + " is not a directory\n");

  const std::string no_config = WriteSharded(root.path / "ckpt", 4, /*with_config=*/false);
  r = Accel({"export", no_config, "-o", out});
  CHECK(r.code == kExitInvalid);
  CHECK(r.err == "accel export: " + no_config + " has no config.json\n");

  const std::string good = WriteSharded(root.path / "ckpt", 5);
  r = Accel({"export", good, "-o", (root.path / "file").string()});
  CHECK(r.code == kExitRuntime);
  CHECK(r.err.rfind("accel export: cannot create " + (root.path / "file").string() + ": ", 0) == 0);

  CHECK(Accel({"export", good}).code == kExitUsage);
  CHECK(Accel({"export", "-o", out}).code == kExitUsage);
  CHECK_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace accel::exec
