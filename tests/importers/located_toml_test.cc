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
  for (const char* text : {"a = 1\na = 2\n", "[t\n", "x = \"unterminated\n", "= 3\n"}) {
    DiagnosticSink sink;
    INFO(text);
    CHECK_FALSE(ParseLocatedToml(text, "f.toml", sink));
    REQUIRE(sink.diagnostics().size() == 1);
    CHECK(sink.diagnostics()[0].code == codes::kImportSyntax);
    CHECK(sink.diagnostics()[0].location.known());
  }
}

}  // namespace
}  // namespace accel::importers
