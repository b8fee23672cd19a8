#include <catch2/catch.hpp>

#include "common/diag_codes.h"
#include "importers/located_json.h"

namespace accel::importers {
namespace {

TEST_CASE("located JSON: every key and value has its line and column", "[importers][json]") {
  DiagnosticSink sink;
  auto doc = ParseLocatedJson("{\n\t\"a\": 1,\n  \"b\": {\"c\": \"x\\/y\", \"d\": [1.5, 2e8, true]}\n}", "f.json", sink);
  REQUIRE(doc);
  REQUIRE(sink.empty());
  const spec::YamlNode& root = *doc->root;
  REQUIRE(root.is_mapping());
  REQUIRE(root.entries.size() == 2);
  CHECK(root.entries[0].key->location == SourceLocation{2, 2});
  CHECK(root.entries[0].value->scalar_type == spec::ScalarType::kInt);
  const spec::YamlNode& b = *root.entries[1].value;
  CHECK(b.location == SourceLocation{3, 8});
  CHECK(b.entries[0].value->value == "x/y");
  CHECK(b.entries[0].value->quoted);
  const spec::YamlNode& d = *b.entries[1].value;
  REQUIRE(d.items.size() == 3);
  CHECK(d.items[0]->scalar_type == spec::ScalarType::kFloat);
  CHECK(d.items[1]->scalar_type == spec::ScalarType::kFloat);
  CHECK(d.items[2]->scalar_type == spec::ScalarType::kBool);
}

TEST_CASE("located JSON: syntax errors are located, YAML-only syntax is rejected",
          "[importers][json]") {
  for (const char* text : {"{\"a\": 1,}", "{a: 1}", "{\"a\": 1} # c", "", "[1, 2"}) {
    DiagnosticSink sink;
    INFO(text);
    CHECK_FALSE(ParseLocatedJson(text, "f.json", sink));
    REQUIRE(sink.diagnostics().size() == 1);
    CHECK(sink.diagnostics()[0].code == codes::kImportSyntax);
    CHECK(sink.diagnostics()[0].location.known());
  }
}

}  // namespace
}  // namespace accel::importers
