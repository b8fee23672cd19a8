#include <catch2/catch.hpp>

#include "common/diag_codes.h"
#include "importers/located_toml.h"

namespace accel::importers {
namespace {

TEST_CASE("located TOML: tables keep document order and source positions", "[importers][toml]") {
  DiagnosticSink sink;
  auto doc = ParseLocatedToml("[zeta]\nb = 2\na = 1.5\n\n[alpha.beta]\nc = \"s\"\nd = [1, 2]\n", "f.toml", sink);
  REQUIRE(doc);
  REQUIRE(sink.empty());
  const spec::YamlNode& root = *doc->root;
  REQUIRE(root.entries.size() == 2);
  CHECK(root.entries[0].key->value == "zeta");  // not alphabetical
  const spec::YamlNode& zeta = *root.entries[0].value;
  CHECK(zeta.entries[0].key->value == "b");
  CHECK(zeta.entries[0].key->location == SourceLocation{2, 1});
  CHECK(zeta.entries[0].value->location == SourceLocation{2, 5});
  CHECK(zeta.entries[1].value->scalar_type == spec::ScalarType::kFloat);
  CHECK(zeta.entries[1].value->value == "1.5");
  const spec::YamlNode& beta = *root.entries[1].value->entries[0].value;
  CHECK(beta.entries[0].value->quoted);
  CHECK(beta.entries[1].value->items.size() == 2);
}

TEST_CASE("located TOML: malformed input is a located error", "[importers][toml]") {
  // "[\n" and "[ # c" abort tomlplusplus 3.3.0 (an assertion; undefined behaviour with
  // NDEBUG): they are caught before it parses.
  for (const char* text : {"a = 1\na = 2\n", "[t\n", "x = \"unterminated\n", "= 3\n", "[\n",
                           "a = 1\n[ # c\n", "[[\t#\n", "[\t!]\n",
                           "\xef\xbb\x8f\n", "[t]\nk\xc3\xa9 = 1\n"}) {
    DiagnosticSink sink;
    INFO(text);
    CHECK_FALSE(ParseLocatedToml(text, "f.toml", sink));
    REQUIRE(sink.diagnostics().size() == 1);
    CHECK(sink.diagnostics()[0].code == codes::kImportSyntax);
    CHECK(sink.diagnostics()[0].location.known());
  }
  // A quote glued to a bare value opens no string for tomlplusplus, which then tests the
  // non-ASCII characters after it, even past a later quote, against its incomplete whitespace
  // table (found by fuzz/torchtitan_import_fuzzer: quote-after-bare-value-unreachable,
  // quote-in-bare-value-then-string). Such a quote is rejected where it stands.
  for (const char* text : {"l =1\"-.t\xd4\xa3:=0-\xcf\x8b\\\\\\", "l =1\"-.t=1\"-.x=\"-.i\xd4\xa3:=0\n"}) {
    DiagnosticSink sink;
    INFO(text);
    CHECK_FALSE(ParseLocatedToml(text, "q.toml", sink));
    REQUIRE(sink.diagnostics().size() == 1);
    CHECK(sink.diagnostics()[0].message == "not valid TOML: a quote inside a bare value");
    CHECK(sink.diagnostics()[0].location.line == 1);
    CHECK(sink.diagnostics()[0].location.column == 5);
  }
  DiagnosticSink key;
  CHECK_FALSE(ParseLocatedToml("ab\"c\xc3\xa9\" = 1\n", "k.toml", key));
  REQUIRE(key.diagnostics().size() == 1);
  CHECK(key.diagnostics()[0].message == "not valid TOML: a quote right after a bare key or value");
  CHECK(key.diagnostics()[0].location.column == 3);
  // A bare value runs to whitespace, ',', ']', '}' or '#' for tomlplusplus, through '=' and
  // quotes (bare-value-then-equals-quote).
  DiagnosticSink bare;
  CHECK_FALSE(ParseLocatedToml("l =-.iable_fl=\"-.ineer\xd4\xa3:=0-\xcf\x8b\\\\\\", "b.toml", bare));
  REQUIRE(bare.diagnostics().size() == 1);
  CHECK(bare.diagnostics()[0].message == "not valid TOML: a quote inside a bare value");
  CHECK(bare.diagnostics()[0].location.column == 15);
  // Strings, arrays and inline tables with non-ASCII text in their strings still parse.
  for (const char* text : {"a = \"caf\xc3\xa9\"\n", "a = [1, \"\xc3\xa9\", 2]\n", "t = {x = 1, y = \"\xc3\xa9\"}\n",
                           "a = [\n  \"\xc3\xa9\",\n  3,\n]\n[s]\nb = 2020-01-01T00:00:00Z # \xc3\xa9\n"}) {
    DiagnosticSink fine;
    INFO(text);
    CHECK(ParseLocatedToml(text, "ok.toml", fine));
    CHECK(fine.diagnostics().empty());
  }
  // A dotted key's quoted part still opens a string: its non-ASCII text is fine.
  DiagnosticSink ok;
  CHECK(ParseLocatedToml("site.\"g\xc3\xa9\" = 1\n", "d.toml", ok));
  CHECK(ok.diagnostics().empty());
}

}  // namespace
}  // namespace accel::importers

namespace accel::importers {
namespace {

TEST_CASE("located TOML: brackets inside values and strings are not headers", "[importers][toml]") {
  DiagnosticSink sink;
  auto doc = ParseLocatedToml(
      "x = [\n[ 1, 2 ],\n[\n3]]\ns = \"\"\"\n[# not a header \xc3\xa9\n\"\"\"\n# caf\xc3\xa9\n", "f.toml",
      sink);
  CHECK(doc);
  CHECK(sink.empty());
}

}  // namespace
}  // namespace accel::importers
