#include <catch2/catch.hpp>

#include "common/diag_codes.h"
#include "spec/text_checks.h"

using namespace accel;
using namespace accel::spec;

TEST_CASE("CheckSpecText accepts UTF-8 text", "[text]") {
  DiagnosticSink sink;
  CHECK(CheckSpecText("name: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80\n\tx\r\n", "f", sink));
  CHECK(sink.empty());
}

TEST_CASE("CheckSpecText rejects binary data and invalid UTF-8 at the offending byte", "[text]") {
  struct Case {
    std::string text;
    SourceLocation location;
  };
  const std::vector<Case> cases = {
      {std::string("a: 1\nb: \0", 10), {2, 4}},
      {"a: \x01", {1, 4}},
      {"a: \xff", {1, 4}},
      {"a: \xc0\xaf", {1, 4}},          // overlong '/'
      {"a: \xed\xa0\x80", {1, 4}},      // UTF-16 surrogate
      {"a: \xf4\x90\x80\x80", {1, 4}},  // above U+10FFFF
      {"a: \xe2\x82", {1, 4}},          // truncated
  };
  for (const Case& c : cases) {
    DiagnosticSink sink;
    CHECK_FALSE(CheckSpecText(c.text, "f", sink));
    REQUIRE(sink.error_count() == 1);
    CHECK(sink.diagnostics()[0].code == codes::kNotText);
    CHECK(sink.diagnostics()[0].location == c.location);
  }
}

TEST_CASE("CheckSpecText rejects files over 1 MiB", "[text]") {
  DiagnosticSink sink;
  CHECK(CheckSpecText(std::string(kMaxSpecFileBytes, '#'), "f", sink));
  CHECK_FALSE(CheckSpecText(std::string(kMaxSpecFileBytes + 1, '#'), "f", sink));
  CHECK(sink.diagnostics()[0].code == codes::kFileTooLarge);
}

TEST_CASE("SanitizeForDisplay keeps columns", "[text]") {
  CHECK(SanitizeForDisplay(std::string("a\0b\xff" "c\xc3\xa9", 7)) == "a?b?c\xc3\xa9");
}

TEST_CASE("FindTabIndentation finds tabs in indentation only", "[text]") {
  const std::string text = "a:\n\tb: 1\n  \tc: 2\nd: \"x\ty\"\n\t# comment\n\t\n";
  std::vector<SourceLocation> tabs = FindTabIndentation(text);
  CHECK(tabs == std::vector<SourceLocation>{{2, 1}, {3, 3}});
}
