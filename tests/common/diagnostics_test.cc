#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "common/diagnostics.h"
#include "common/terminal_text.h"

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

// A hostile spec quoted ESC, CR and BEL in its messages: "\e[2K\r" erased the error line and a
// fake "checked 1 file: 1 valid" followed (#42). Every renderer escapes what a terminal acts on.
TEST_CASE("renderers escape terminal control characters", "[diagnostics]") {
  CHECK(EscapeTerminalControls("a\x1b[2K\rb\x07") == "a\\x1b[2K\\rb\\x07");
  CHECK(EscapeTerminalControls("x\ny\tz\x7f") == "x\\ny\tz\\x7f");
  CHECK(EscapeTerminalControls("\xc2\x9b" "1A \xe2\x80\xae" "evil") == "\\u009b1A \\u202eevil");
  CHECK(EscapeTerminalControls("caf\xc3\xa9 \xd0\xb0") == "caf\xc3\xa9 \xd0\xb0");  // é, Cyrillic а
  CHECK(EscapeTerminalControls("\x9b" "2J") == "\\x9b2J");  // a lone byte, not UTF-8
  DiagnosticSink sink;
  sink.Error("E0101", "job\x1b.yaml", {2, 9}, "", "unknown key 'a\x1b[2K\rb'")
      .Note("n\ry.json", {1, 1}, "bell\x07 here");
  SourceManager sources;
  sources.Add("job\x1b.yaml", "x: 1\n\"a\xe2\x80\xae\": 2\n");
  CHECK(RenderText(sink.diagnostics(), sources) ==
        "job\\x1b.yaml:2:9: error[E0101]: unknown key 'a\\x1b[2K\\rb'\n"
        " \"a\\u202e\": 2\n"
        "            ^\n"
        "n\\ry.json:1:1: note: bell\\x07 here\n");
  CHECK(RenderGithub(sink.diagnostics()) ==
        "::error file=job\\x1b.yaml,line=2,col=9,title=E0101::unknown key 'a\\x1b[2K\\rb'%0A"
        "n\\ry.json:1:1: note: bell\\x07 here\n");
  const std::string json = RenderJson(sink.diagnostics());
  CHECK(json.find("a\\u001b[2K\\rb") != std::string::npos);
  CHECK(nlohmann::json::parse(json)[0]["message"] == "unknown key 'a\x1b[2K\rb'");  // exact data
}
