// Every config of the corpus (tests/testdata/corpus/configs, copied from real repositories; see
// tests/testdata/corpus/SOURCES.md) either imports to a spec that the loader and the planner accept
// without errors, or is refused with located errors that name the source keys. Nothing crashes.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "common/diag_codes.h"
#include "importers/importer.h"
#include "planner/planner.h"
#include "spec/loader.h"
#include "tests/importers/import_test_util.h"
#include "tests/common/files.h"

namespace fs = std::filesystem;

namespace accel::importers {
namespace {

const fs::path kCorpus = fs::path(ACCEL_SOURCE_ROOT) / "tests/testdata/corpus/configs";

std::vector<fs::path> CorpusFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(kCorpus)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

using accel::testing::ReadAll;

enum class Outcome { kClean, kWarnings, kRefused };


// The value of a torchtitan `expert_parallel_degree = N` line (TOML) or
// `"expert_parallel_degree": N` (the 2026 JSON dumps), or 1.
int64_t ExpertParallelDegree(const std::string& text) {
  const size_t json = text.find("\"expert_parallel_degree\":");
  if (json != std::string::npos) return std::atoll(text.c_str() + json + 25);
  const size_t key = text.find("expert_parallel_degree");
  if (key == std::string::npos || (key > 0 && text[key - 1] != '\n')) return 1;
  const size_t eq = text.find('=', key);
  return eq == std::string::npos ? 1 : std::atoll(text.c_str() + eq + 1);
}

// Imports one corpus file and checks the contract; returns how it went.
Outcome CheckFile(const fs::path& path) {
  const std::string file = fs::relative(path, kCorpus).string();
  INFO("corpus file " << file);
  const std::string text = ReadAll(path);
  importers::ImportOptions options = testing::TestOptions();
  // Expert parallelism needs a mixture-of-experts model (E0424): a tiny Mixtral stands in for
  // the source's own model, as the tiny Llama does for the dense ones.
  if (ExpertParallelDegree(text) > 1) options.model_config = testing::TinyMoeModel();
  // A Megatron-LM script gives the model's shape itself (--num-layers, ...): validated as is.
  if (file.starts_with("megatron/")) options.model_config.clear();
  testing::Imported imported = testing::Import(text, file, options);
  INFO(imported.messages);
  for (const Diagnostic& d : imported.sink.diagnostics()) {
    // Every message points into the source file: a line and column, and the key it is about.
    CHECK(d.file == file);
    CHECK(d.location.known());
    if (d.code == codes::kImportUnmappedKey || d.code == codes::kImportUnsupported) {
      CHECK(d.message.find(" key '") != std::string::npos);
    }
  }
  if (!imported.yaml) {
    CHECK(imported.sink.HasErrors());
    return Outcome::kRefused;
  }
  REQUIRE_FALSE(imported.sink.HasErrors());
  // The spec validates: loader, JSON Schema and every planner pass (as `accel validate`).
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<spec::JobSpec> job = spec::LoadJobSpecFromString(
      *imported.yaml, testing::SpecPath(), spec::LoadOptions{}, sink, sources);
  if (job) planner::CheckSpec(*job, sink);
  INFO(*imported.yaml);
  INFO(RenderText(sink.diagnostics(), sources));
  CHECK(job.has_value());
  CHECK_FALSE(sink.HasErrors());
  return imported.sink.warning_count() == 0 ? Outcome::kClean : Outcome::kWarnings;
}

struct Counts {
  int files = 0, clean = 0, warnings = 0, refused = 0;
};

std::map<std::string, Counts> CountCorpus() {
  std::map<std::string, Counts> counts;
  for (const fs::path& path : CorpusFiles()) {
    const std::string source = fs::relative(path, kCorpus).begin()->string();
    Counts& c = counts[source];
    ++c.files;
    switch (CheckFile(path)) {
      case Outcome::kClean: ++c.clean; break;
      case Outcome::kWarnings: ++c.warnings; break;
      case Outcome::kRefused: ++c.refused; break;
    }
  }
  return counts;
}

TEST_CASE("every corpus config imports to a valid spec or is refused with located errors",
          "[importers][corpus]") {
  std::map<std::string, Counts> counts = CountCorpus();
  CHECK(counts.size() == 4);
  int files = 0;
  for (const auto& [source, c] : counts) files += c.files;
  CHECK(files == 154);
  // Most real configs must be importable: refusals are the features accel lacks.
  for (const auto& [source, c] : counts) {
    INFO(source);
    CHECK(c.refused * 4 < c.files);
  }
}

// The coverage table of docs/import.md:
//   build-core/tests/importers/importers_test "[counts]"
TEST_CASE("print the corpus import counts", "[.][counts]") {
  std::cout << "| source | files | imported cleanly | imported with warnings | refused |\n"
               "|---|---:|---:|---:|---:|\n";
  Counts total;
  for (const auto& [source, c] : CountCorpus()) {
    std::cout << "| " << source << " | " << c.files << " | " << c.clean << " | " << c.warnings
              << " | " << c.refused << " |\n";
    total.files += c.files;
    total.clean += c.clean;
    total.warnings += c.warnings;
    total.refused += c.refused;
  }
  std::cout << "| total | " << total.files << " | " << total.clean << " | " << total.warnings
            << " | " << total.refused << " |\n";
}

}  // namespace
}  // namespace accel::importers
