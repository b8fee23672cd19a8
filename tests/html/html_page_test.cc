#include "html/html_page.h"

#include <string>

#include <catch2/catch.hpp>

#include "cli/compile_job.h"
#include "html/plan_page.h"
#include "nlohmann/json.hpp"

namespace accel::html {
namespace {

ir::Plan ExamplePlan(const std::string& spec) {
  DiagnosticSink sink;
  SourceManager sources;
  cli::CompiledJob job = cli::CompileJob(std::string(ACCEL_SOURCE_ROOT) + "/examples/specs/" + spec,
                                         {}, {}, sink, sources);
  REQUIRE(job.ok());
  return job.planned.plan;
}

TEST_CASE("EscapeJsonForScript keeps </script> and <!-- from ending the data block", "[html]") {
  const std::string json = R"({"name":"</script><script>alert(1)</script><!--"})";
  const std::string escaped = EscapeJsonForScript(json);
  CHECK(escaped.find('<') == std::string::npos);
  // JSON.parse (here nlohmann) reads back the same value.
  CHECK(nlohmann::json::parse(escaped) == nlohmann::json::parse(json));
}

TEST_CASE("EscapeHtml escapes markup and quotes", "[html]") {
  CHECK(EscapeHtml(R"(<a href="x">'&'</a>)") ==
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
}

TEST_CASE("TimelineJson places every compute op of the 70B example", "[html]") {
  const ir::Plan plan = ExamplePlan("llama-2-70b_16x8xh100_3d.yaml");
  const nlohmann::json timeline = nlohmann::json::parse(TimelineJson(plan));
  const int64_t m = plan.pipeline().microbatches();
  const int64_t p = plan.pipeline().stages_size();
  CHECK(timeline["makespan"] == 2 * (m + p - 1));  // 1F1B, forward = backward = 1 slot
  CHECK(timeline["bubble_fraction"].get<double>() ==
        Approx(plan.pipeline().bubble_fraction()));
  REQUIRE(timeline["stages"].size() == static_cast<size_t>(p));
  for (const auto& stage : timeline["stages"]) CHECK(stage.size() == static_cast<size_t>(2 * m));
  CHECK(timeline["stages"][0][0] == nlohmann::json::array({0, "F", 0, 0}));
  CHECK(timeline["stall"] == "");
}

TEST_CASE("SearchJson lists the ranked rows with the term each lost by", "[html]") {
  planner::SearchResult result;
  result.global_batch = 32;
  result.enumerated = 10;
  for (int i = 0; i < 3; ++i) {
    planner::RankedLayout r;
    r.layout.tensor = i + 1;
    r.step_time.set_step_seconds(1.0 + i);
    r.step_time.set_compute_seconds(1.0 + i);
    result.ranked.push_back(r);
  }
  const nlohmann::json json = nlohmann::json::parse(SearchJson(result, 2));
  REQUIRE(json["rows"].size() == 2);
  CHECK(json["rows"][0]["lost"] == "-");
  CHECK(json["rows"][1]["tp"] == 2);
  CHECK(json["rows"][1]["lost"].get<std::string>().find("compute") != std::string::npos);
  CHECK(json["enumerated"] == 10);
}

TEST_CASE("PlanToHtml is one self-contained page, or says to run install-deps.sh", "[html]") {
  const ir::Plan plan = ExamplePlan("gpt2-mini_cpu8_3d.yaml");
  absl::StatusOr<std::string> page = PlanToHtml(plan);
  if (!ACCEL_HAVE_ECHARTS) {
    REQUIRE(absl::IsFailedPrecondition(page.status()));
    CHECK(std::string(page.status().message()).find("scripts/install-deps.sh") != std::string::npos);
    return;
  }
  REQUIRE(page.ok());
  CHECK(page->find("<script type=\"application/json\" id=\"plan-data\">") != std::string::npos);
  CHECK(page->find("id=\"timeline-data\"") != std::string::npos);
  CHECK(page->find("id=\"search-data\"") == std::string::npos);
  CHECK(page->find("echarts") != std::string::npos);
  // Nothing is fetched when the page is viewed.
  CHECK(page->find("<script src=") == std::string::npos);
  CHECK(page->find("<link") == std::string::npos);
}

}  // namespace
}  // namespace accel::html
