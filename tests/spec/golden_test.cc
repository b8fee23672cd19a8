// Golden diagnostics for invalid specs: every tests/spec/bad/<case>.yaml is loaded (with the
// `--set` arguments listed one per line in <case>.set, if present) and the text rendering must
// match <case>.expected byte for byte. Paths print as "bad/<case>.yaml": the test runs with
// tests/spec as the working directory.
//
// To regenerate after an intended change to messages: ACCEL_UPDATE_GOLDENS=1 ./spec_test
// "[golden]", then review the diff. Tests never write goldens otherwise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/diagnostics.h"
#include "spec/loader.h"
#include "tests/common/files.h"

namespace fs = std::filesystem;

namespace {

using accel::testing::ReadAll;

std::vector<std::string> ReadLines(const fs::path& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

// Switches to tests/spec for the lifetime of the object, so relative paths are stable however
// the binary was started.
class ScopedCwd {
 public:
  explicit ScopedCwd(const fs::path& dir) : previous_(fs::current_path()) { fs::current_path(dir); }
  ~ScopedCwd() { fs::current_path(previous_); }

 private:
  fs::path previous_;
};

}  // namespace

TEST_CASE("invalid specs produce their golden diagnostics", "[golden]") {
  ScopedCwd cwd(ACCEL_SPEC_TEST_DIR);
  const bool update = std::getenv("ACCEL_UPDATE_GOLDENS") != nullptr;
  std::vector<std::string> cases;
  for (const fs::directory_entry& entry : fs::directory_iterator("bad")) {
    if (entry.path().extension() == ".yaml") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  REQUIRE(cases.size() >= 40);
  for (const std::string& name : cases) {
    DYNAMIC_SECTION(name) {
      const std::string file = "bad/" + name + ".yaml";
      accel::spec::LoadOptions options;
      if (fs::exists("bad/" + name + ".set")) options.overrides = ReadLines("bad/" + name + ".set");
      accel::DiagnosticSink sink;
      accel::SourceManager sources;
      std::optional<accel::spec::JobSpec> job = accel::spec::LoadJobSpec(file, options, sink, sources);
      CHECK_FALSE(job.has_value());
      CHECK(sink.HasErrors());
      const std::string actual = RenderText(sink.diagnostics(), sources);
      const fs::path expected_path = "bad/" + name + ".expected";
      if (update) {
        std::ofstream(expected_path, std::ios::binary) << actual;
      }
      REQUIRE(fs::exists(expected_path));
      CHECK(actual == ReadAll(expected_path));
    }
  }
}
