// Golden plans: every example spec's plan (textproto), its DOT picture and its terminal summary
// must match the files under tests/planner/golden/ byte for byte. Regenerate deliberately with
//   ACCEL_UPDATE_GOLDENS=1 ctest -R golden
// and review the diff before committing.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/diagnostics.h"
#include "ir/graph_export.h"
#include "ir/plan_verifier.h"
#include "ir/plan_writer.h"
#include "planner/planner.h"
#include "spec/loader.h"

namespace accel::planner {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Compares `actual` with the golden file, or rewrites it when ACCEL_UPDATE_GOLDENS is set.
void CheckGolden(const fs::path& golden, const std::string& actual) {
  const char* update = std::getenv("ACCEL_UPDATE_GOLDENS");
  if (update != nullptr && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden, std::ios::binary) << actual;
    return;
  }
  INFO("golden file " << golden.string() << " (regenerate with ACCEL_UPDATE_GOLDENS=1)");
  REQUIRE(fs::exists(golden));
  CHECK(ReadFile(golden) == actual);
}

// Paths in plans are relative to the repository root, as a user running from there sees them.
struct InRepoRoot {
  InRepoRoot() { REQUIRE(chdir(ACCEL_SOURCE_ROOT) == 0); }
};

std::vector<fs::path> ExampleSpecs() {
  std::vector<fs::path> specs;
  for (const auto& entry : fs::directory_iterator(fs::path("examples") / "specs")) {
    if (entry.path().extension() == ".yaml") specs.push_back(entry.path());
  }
  std::sort(specs.begin(), specs.end());
  return specs;
}

TEST_CASE("every example spec plans to its golden plan, DOT and summary") {
  InRepoRoot root;
  const std::vector<fs::path> specs = ExampleSpecs();
  REQUIRE(specs.size() >= 6);
  for (const fs::path& spec_path : specs) {
    DYNAMIC_SECTION(spec_path.string()) {
      DiagnosticSink sink;
      SourceManager sources;
      auto job = spec::LoadJobSpec(spec_path.string(), {}, sink, sources);
      INFO(RenderText(sink.diagnostics(), sources));
      REQUIRE(job.has_value());
      PlanOptions options;
      options.verify_each_pass = true;
      PlanResult result = BuildPlan(*job, options, sink);
      INFO(RenderText(sink.diagnostics(), sources));
      REQUIRE(result.ok);
      CHECK(result.verifier_violations.empty());
      CHECK(sink.error_count() == 0);
      const std::string stem = spec_path.stem().string();
      const fs::path golden = fs::path("tests") / "planner" / "golden";
      CheckGolden(golden / (stem + ".textproto"), ir::PlanToTextproto(result.plan));
      CheckGolden(golden / (stem + ".dot"), ir::PlanToDot(result.plan));
      CheckGolden(golden / (stem + ".txt"), ir::PlanSummary(result.plan));
      // The JSON and binary forms round-trip to the same plan.
      ir::Plan reparsed;
      REQUIRE(reparsed.ParseFromString(ir::PlanToBinary(result.plan)));
      CHECK(ir::PlanToTextproto(reparsed) == ir::PlanToTextproto(result.plan));
    }
  }
}

TEST_CASE("a job that does not fit gets its exact golden diagnostic") {
  InRepoRoot root;
  const fs::path spec_path = fs::path("tests") / "planner" / "specs" / "llama-2-7b_8xa100-40gb_dp.yaml";
  DiagnosticSink sink;
  SourceManager sources;
  auto job = spec::LoadJobSpec(spec_path.string(), {}, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job.has_value());
  PlanResult result = BuildPlan(*job, {}, sink);
  CHECK_FALSE(result.ok);
  CHECK(result.last_pass == "estimate-memory");
  fs::path expected = spec_path;
  expected.replace_extension(".expected");
  CheckGolden(expected, RenderText(sink.diagnostics(), sources));
}

}  // namespace
}  // namespace accel::planner

namespace accel::planner {
namespace {

// The does-not-fit diagnostic's suggestions, applied to the spec as overrides, really fit:
// the same estimator plans them without an error.
TEST_CASE("the suggested changes for the does-not-fit spec plan without errors") {
  InRepoRoot root;
  const std::string spec_path = "tests/planner/specs/llama-2-7b_8xa100-40gb_dp.yaml";
  const std::vector<std::vector<std::string>> suggestions = {
      {"sharding.stage=3", "parallel.data_shard=8", "parallel.data_replicate=1",
       "training.recompute=full"},
      {"parallel.tensor=8", "parallel.data_replicate=1"},
  };
  for (const auto& overrides : suggestions) {
    DiagnosticSink sink;
    SourceManager sources;
    spec::LoadOptions options;
    options.overrides = overrides;
    auto job = spec::LoadJobSpec(spec_path, options, sink, sources);
    REQUIRE(job.has_value());
    PlanResult result = BuildPlan(*job, {}, sink);
    INFO(RenderText(sink.diagnostics(), sources));
    CHECK(result.ok);
    for (const ir::MemoryEstimate& e : result.plan.memory()) CHECK(e.fits());
  }
}

}  // namespace
}  // namespace accel::planner
