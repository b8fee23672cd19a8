#include "html/run_report.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "cli/report_command.h"
#include "common/exit_codes.h"
#include "common/remove_tree.h"

namespace accel::html {
namespace {

namespace fs = std::filesystem;

const std::string kLine =
    R"({"step":1,"loss":7.5,"lr":0.001,"grad_norm":2.5,"tokens":4096,"step_seconds":0.4,)"
    R"("tokens_per_second":9800,"peak_memory_bytes":430000000,"peak_tensor_bytes":41000000,)"
    R"("peak_reserved_bytes":null,"skipped":false})";

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// A fresh directory under the temporary directory, distinct per process (other builds' tests
// may run at the same time), removed at the end of the test.
struct TempDir {
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() /
             ("accel_report_test_" + name + "." + std::to_string(getpid()))) {
    std::error_code ignored;
    RemoveTree(path.string(), ignored);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    RemoveTree(path.string(), ignored);
  }
  fs::path path;
};

void Write(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

TEST_CASE("ParseMetrics reads the series, null as NaN or unmeasured", "[html][report]") {
  std::string second = kLine;
  second.replace(second.find("\"step\":1"), 8, "\"step\":2");
  second.replace(second.find("\"loss\":7.5"), 10, "\"loss\":null");
  absl::StatusOr<StepSeries> s = ParseMetrics(kLine + "\n\n" + second + "\n", "m.jsonl");
  REQUIRE(s.ok());
  CHECK(s->step == std::vector<int64_t>{1, 2});
  CHECK(s->loss[0] == 7.5);
  CHECK(std::isnan(s->loss[1]));
  CHECK(s->peak_reserved_bytes[0] == -1);
  CHECK(s->peak_tensor_bytes[1] == 41000000);
}

TEST_CASE("ParseMetrics locates a malformed line and field", "[html][report]") {
  SECTION("not JSON: a line cut off") {
    absl::StatusOr<StepSeries> s = ParseMetrics(kLine + "\n{\"step\":2,\"lo", "run/metrics.jsonl");
    REQUIRE(absl::IsInvalidArgument(s.status()));
    CHECK(Message(s.status()).rfind("run/metrics.jsonl:2: not JSON", 0) == 0);
  }
  SECTION("a field of the wrong type") {
    std::string bad = kLine;
    bad.replace(bad.find("\"loss\":7.5"), 10, "\"loss\":\"abc\"");
    absl::StatusOr<StepSeries> s = ParseMetrics(kLine + "\n" + bad + "\n", "m.jsonl");
    REQUIRE(absl::IsInvalidArgument(s.status()));
    CHECK(Message(s.status()) == "m.jsonl:2: field \"loss\": expected a number or null, got \"abc\"");
  }
  SECTION("a missing field") {
    std::string bad = kLine;
    bad.replace(bad.find("\"lr\":0.001,"), 11, "");
    absl::StatusOr<StepSeries> s = ParseMetrics(bad, "m.jsonl");
    CHECK(Message(s.status()) == "m.jsonl:1: field \"lr\": missing");
  }
  SECTION("a fractional step") {
    std::string bad = kLine;
    bad.replace(bad.find("\"step\":1"), 8, "\"step\":1.5");
    CHECK(Message(ParseMetrics(bad, "m.jsonl").status()) ==
          "m.jsonl:1: field \"step\": expected an integer, got 1.5");
  }
  SECTION("not an object") {
    CHECK(Message(ParseMetrics("[1,2]\n", "m.jsonl").status()) == "m.jsonl:1: expected a JSON object");
  }
  SECTION("no steps") {
    CHECK(Message(ParseMetrics("\n\n", "m.jsonl").status()) == "m.jsonl: no steps");
  }
}

TEST_CASE("ReadRunDirectory says what is missing or malformed", "[html][report]") {
  SECTION("no directory") {
    absl::StatusOr<RunData> r = ReadRunDirectory("/nonexistent/accel-run");
    REQUIRE(absl::IsNotFound(r.status()));
    CHECK(Message(r.status()) == "/nonexistent/accel-run: no such directory");
  }
  SECTION("no metrics.jsonl") {
    const TempDir temp("empty");
    const fs::path& dir = temp.path;
    absl::StatusOr<RunData> r = ReadRunDirectory(dir.string());
    REQUIRE(absl::IsNotFound(r.status()));
    CHECK(Message(r.status()).find("metrics.jsonl: no such file") != std::string::npos);
  }
  SECTION("malformed summary.json and plan.binpb") {
    const TempDir temp("bad");
    const fs::path& dir = temp.path;
    Write(dir / "metrics.jsonl", kLine + "\n");
    Write(dir / "summary.json", "{\"steps_done\": ");
    CHECK(Message(ReadRunDirectory(dir.string()).status()).find("summary.json: not a JSON object") !=
          std::string::npos);
    fs::remove(dir / "summary.json");
    Write(dir / "plan.binpb", "not a plan");
    CHECK(Message(ReadRunDirectory(dir.string()).status()).find("plan.binpb: not an accel plan") !=
          std::string::npos);
    fs::remove(dir / "plan.binpb");
    absl::StatusOr<RunData> r = ReadRunDirectory(dir.string());
    REQUIRE(r.ok());
    CHECK(!r->plan);
    CHECK(!r->summary);
  }
  SECTION("the test run directory") {
    absl::StatusOr<RunData> r =
        ReadRunDirectory(std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/report/run");
    REQUIRE(r.ok());
    CHECK(r->steps.step.size() == 60);
    REQUIRE(r->summary);
    CHECK((*r->summary)["memory"]["ranks"].size() == 8);
  }
}

TEST_CASE("accel report: bad input is a located error and exit 1, never a crash", "[html][report]") {
  const TempDir temp("cli");
  const fs::path& dir = temp.path;
  Write(dir / "metrics.jsonl", kLine + "\n" + kLine.substr(0, 30) + "\n");
  std::ostringstream out, err;
  cli::ReportOptions options;
  options.run_dir = dir.string();
  CHECK(cli::RunReportCommand(options, out, err) == kExitInvalid);
  CHECK(err.str() == "error: " + (dir / "metrics.jsonl").string() +
                         ":2: not JSON (a line cut off by a crash?)\n");
  CHECK(!fs::exists(dir / "report.html"));

  std::ostringstream err2;
  options.format = "htm";
  CHECK(cli::RunReportCommand(options, out, err2) == kExitUsage);
  CHECK(err2.str().find("did you mean 'html'?") != std::string::npos);
}

TEST_CASE("accel report writes the report into the run directory by default", "[html][report]") {
  const TempDir temp("ok");
  const fs::path& dir = temp.path;
  Write(dir / "metrics.jsonl", kLine + "\n");
  std::ostringstream out, err;
  cli::ReportOptions options;
  options.run_dir = dir.string();
  const int code = cli::RunReportCommand(options, out, err);
  if (!ACCEL_HAVE_ECHARTS) {
    CHECK(code == kExitUsage);
    CHECK(err.str().find("install-deps.sh") != std::string::npos);
    return;
  }
  CHECK(code == kExitOk);
  CHECK(fs::exists(dir / "report.html"));
  CHECK(!fs::exists(dir / "plan.html"));  // no plan.binpb, nothing to link
  CHECK(err.str() == "wrote " + (dir / "report.html").string() + "\n");
}

}  // namespace
}  // namespace accel::html
