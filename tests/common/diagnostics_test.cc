#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"

using namespace accel;

namespace {

std::vector<Diagnostic> Sample() {
  DiagnosticSink sink;
  sink.Error("E0203", "job.yaml", {3, 11}, "parallel.tensor",
             "tensor degree 3 does not divide num_heads 16")
      .Note("job.yaml", {2, 14}, "num_heads set here");
  sink.Warning("W0401", "job.yaml", {}, "", "tensor parallelism crosses nodes");
  return sink.diagnostics();
}

}  // namespace

TEST_CASE("SourceManager returns lines without newlines", "[diagnostics]") {
  SourceManager sources;
  sources.Add("a.yaml", "one\r\ntwo\n\nfour");
  CHECK(sources.Line("a.yaml", 1) == "one");
  CHECK(sources.Line("a.yaml", 2) == "two");
  CHECK(sources.Line("a.yaml", 3) == "");
  CHECK(sources.Line("a.yaml", 4) == "four");
  CHECK(sources.Line("a.yaml", 5) == "");
  CHECK(sources.Line("a.yaml", 0) == "");
  CHECK(sources.Line("other.yaml", 1) == "");
}

TEST_CASE("DiagnosticSink counts errors and warnings", "[diagnostics]") {
  DiagnosticSink sink;
  CHECK(sink.empty());
  sink.Error("E0101", "f", {}, "", "a");
  sink.Warning("W0401", "f", {}, "", "b");
  sink.Warning("W0402", "f", {}, "", "c");
  CHECK(sink.HasErrors());
  CHECK(sink.error_count() == 1);
  CHECK(sink.warning_count() == 2);
  DiagnosticSink other;
  other.Append(sink);
  CHECK(other.error_count() == 1);
  CHECK(other.diagnostics().size() == 3);
}

TEST_CASE("RenderText quotes the line and puts a caret under the column", "[diagnostics]") {
  SourceManager sources;
  sources.Add("job.yaml", "model:\n  num_heads: 16\n  tensor: 3\n");
  CHECK(RenderText(Sample(), sources) ==
        "job.yaml:3:11: error[E0203]: tensor degree 3 does not divide num_heads 16\n"
        "   tensor: 3\n"
        "           ^\n"
        "job.yaml:2:14: note: num_heads set here\n"
        "job.yaml: warning[W0401]: tensor parallelism crosses nodes\n");
}

TEST_CASE("RenderText keeps tabs in the caret line", "[diagnostics]") {
  SourceManager sources;
  sources.Add("t.yaml", "\tkey: 1\n");
  DiagnosticSink sink;
  sink.Error("E0008", "t.yaml", {1, 2}, "", "tab");
  CHECK(RenderText(sink.diagnostics(), sources) == "t.yaml:1:2: error[E0008]: tab\n \tkey: 1\n \t^\n");
}

TEST_CASE("RenderJson emits one object per diagnostic", "[diagnostics]") {
  nlohmann::json json = nlohmann::json::parse(RenderJson(Sample()));
  REQUIRE(json.is_array());
  REQUIRE(json.size() == 2);
  CHECK(json[0]["severity"] == "error");
  CHECK(json[0]["code"] == "E0203");
  CHECK(json[0]["line"] == 3);
  CHECK(json[0]["column"] == 11);
  CHECK(json[0]["field"] == "parallel.tensor");
  CHECK(json[0]["notes"][0]["message"] == "num_heads set here");
  CHECK(json[1]["severity"] == "warning");
  CHECK(json[1]["line"] == 0);
}

TEST_CASE("RenderGithub writes workflow commands with escaping", "[diagnostics]") {
  CHECK(RenderGithub(Sample()) ==
        "::error file=job.yaml,line=3,col=11,title=E0203::tensor degree 3 does not divide "
        "num_heads 16%0Ajob.yaml:2:14: note: num_heads set here\n"
        "::warning file=job.yaml,title=W0401::tensor parallelism crosses nodes\n");
  DiagnosticSink sink;
  sink.Error("E0001", "a,b:c.yaml", {}, "", "50% done");
  CHECK(RenderGithub(sink.diagnostics()) == "::error file=a%2Cb%3Ac.yaml,title=E0001::50%25 done\n");
}

TEST_CASE("RenderText names the planner pass that found a diagnostic", "[diagnostics]") {
  DiagnosticSink sink;
  Diagnostic& d = sink.Error("E0405", "job.yaml", {}, "parallel.pipeline",
                             "pipeline degree 8 exceeds num_layers 4");
  d.origin = "resolve-auto";
  CHECK(RenderText(sink.diagnostics(), SourceManager()) ==
        "job.yaml: error[E0405]: pipeline degree 8 exceeds num_layers 4 [resolve-auto]\n");
  CHECK(RenderJson(sink.diagnostics()).find("\"origin\": \"resolve-auto\"") != std::string::npos);
}
