#include <catch2/catch.hpp>
#include <cmath>

#include "common/diag_codes.h"
#include "spec/yaml_tree.h"

using namespace accel;
using namespace accel::spec;

TEST_CASE("plain scalars are typed by the YAML 1.2 core schema", "[yaml]") {
  CHECK(ClassifyPlainScalar("") == ScalarType::kNull);
  CHECK(ClassifyPlainScalar("~") == ScalarType::kNull);
  CHECK(ClassifyPlainScalar("null") == ScalarType::kNull);
  CHECK(ClassifyPlainScalar("true") == ScalarType::kBool);
  CHECK(ClassifyPlainScalar("FALSE") == ScalarType::kBool);
  CHECK(ClassifyPlainScalar("yes") == ScalarType::kString);  // YAML 1.1 only
  CHECK(ClassifyPlainScalar("8") == ScalarType::kInt);
  CHECK(ClassifyPlainScalar("-4") == ScalarType::kInt);
  CHECK(ClassifyPlainScalar("0x1F") == ScalarType::kInt);
  CHECK(ClassifyPlainScalar("0o17") == ScalarType::kInt);
  CHECK(ClassifyPlainScalar("1.5") == ScalarType::kFloat);
  CHECK(ClassifyPlainScalar("3e-4") == ScalarType::kFloat);
  CHECK(ClassifyPlainScalar("1.0e-3") == ScalarType::kFloat);
  CHECK(ClassifyPlainScalar(".5") == ScalarType::kFloat);
  CHECK(ClassifyPlainScalar("-.inf") == ScalarType::kFloat);
  CHECK(ClassifyPlainScalar(".nan") == ScalarType::kFloat);
  CHECK(ClassifyPlainScalar("1e") == ScalarType::kString);
  CHECK(ClassifyPlainScalar("1f1b") == ScalarType::kString);
  CHECK(ClassifyPlainScalar("8GiB") == ScalarType::kString);
  CHECK(ClassifyPlainScalar("auto") == ScalarType::kString);
  CHECK(ClassifyPlainScalar(".") == ScalarType::kString);
}

TEST_CASE("numeric scalars parse", "[yaml]") {
  int64_t i = 0;
  CHECK(ParseYamlInt("42", &i));
  CHECK(i == 42);
  CHECK(ParseYamlInt("0x10", &i));
  CHECK(i == 16);
  CHECK(ParseYamlInt("-7", &i));
  CHECK(i == -7);
  CHECK_FALSE(ParseYamlInt("99999999999999999999", &i));
  double d = 0;
  CHECK(ParseYamlFloat("3e-4", &d));
  CHECK(d == Approx(3e-4));
  CHECK(ParseYamlFloat("1.0e-3", &d));
  CHECK(d == Approx(1e-3));
  CHECK(ParseYamlFloat("12", &d));
  CHECK(d == 12.0);
  CHECK(ParseYamlFloat("-.inf", &d));
  CHECK(std::isinf(d));
}

TEST_CASE("ParseYaml builds a located tree", "[yaml]") {
  DiagnosticSink sink;
  auto doc = ParseYaml("a: 1\nb:\n  c: \"x\"\n  d: [1, 2]\ne:\n", "t.yaml", sink);
  REQUIRE(doc != nullptr);
  CHECK(sink.empty());
  const YamlNode& root = *doc->root;
  REQUIRE(root.is_mapping());
  REQUIRE(root.entries.size() == 3);
  CHECK(root.entries[0].key->location == SourceLocation{1, 1});
  CHECK(root.entries[0].value->location == SourceLocation{1, 4});
  CHECK(root.entries[0].value->scalar_type == ScalarType::kInt);
  const YamlNode& b = *root.entries[1].value;
  REQUIRE(b.is_mapping());
  CHECK(b.entries[0].value->quoted);
  CHECK(b.entries[0].value->scalar_type == ScalarType::kString);
  CHECK(b.entries[1].value->is_sequence());
  CHECK(b.entries[1].value->items[1]->location == SourceLocation{4, 10});
  // An empty value points at its key, not at the next token.
  CHECK(root.entries[2].value->is_null());
  CHECK(root.entries[2].value->location == SourceLocation{5, 1});
}

TEST_CASE("ParseYaml keeps duplicate keys for the loader to report", "[yaml]") {
  DiagnosticSink sink;
  auto doc = ParseYaml("a: 1\na: 2\n", "t.yaml", sink);
  REQUIRE(doc != nullptr);
  CHECK(doc->root->entries.size() == 2);
}

TEST_CASE("aliases share their anchored node instead of copying it", "[yaml]") {
  DiagnosticSink sink;
  auto doc = ParseYaml("a: &x [1, 2, 3]\nb: *x\nc: *x\n", "t.yaml", sink);
  REQUIRE(doc != nullptr);
  const YamlNode& b = *doc->root->entries[1].value;
  CHECK(b.target == doc->root->entries[0].value);
  CHECK(b.location == SourceLocation{2, 4});
  CHECK(b.is_sequence());
  CHECK(b.content().items.size() == 3);
  CHECK(b.expanded_size == 4);
}

TEST_CASE("ParseYaml enforces depth and node limits", "[yaml]") {
  YamlLimits limits;
  limits.max_depth = 3;
  limits.max_nodes = 20;
  {
    DiagnosticSink sink;
    CHECK(ParseYaml("a: [[1]]\n", "t.yaml", sink, limits) != nullptr);
  }
  {
    DiagnosticSink sink;
    CHECK(ParseYaml("a: [[[1]]]\n", "t.yaml", sink, limits) == nullptr);
    REQUIRE(sink.error_count() == 1);
    CHECK(sink.diagnostics()[0].code == codes::kTooDeep);
    CHECK(sink.diagnostics()[0].location == SourceLocation{1, 6});
  }
  {
    DiagnosticSink sink;
    CHECK(ParseYaml("a: &a [1, 2, 3, 4]\nb: [*a, *a, *a, *a]\n", "t.yaml", sink, limits) == nullptr);
    REQUIRE(sink.error_count() == 1);
    CHECK(sink.diagnostics()[0].code == codes::kTooManyNodes);
  }
}

TEST_CASE("a billion laughs is rejected quickly", "[yaml]") {
  std::string text = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  const std::string names = "abcdefghijklmnopqrstuvwxyz";
  for (size_t i = 1; i < names.size(); ++i) {
    text += std::string(1, names[i]) + ": &" + names[i] + " [";
    for (int k = 0; k < 10; ++k) text += std::string(k ? ", " : "") + "*" + names[i - 1];
    text += "]\n";
  }
  DiagnosticSink sink;
  CHECK(ParseYaml(text, "t.yaml", sink) == nullptr);
  REQUIRE(sink.error_count() == 1);
  CHECK(sink.diagnostics()[0].code == codes::kTooManyNodes);
}

TEST_CASE("ParseYaml reports syntax errors, empty input and extra documents", "[yaml]") {
  {
    DiagnosticSink sink;
    CHECK(ParseYaml("a: [1, 2\nb: 3\n", "t.yaml", sink) == nullptr);
    CHECK(sink.diagnostics()[0].code == codes::kYamlSyntax);
    CHECK(sink.diagnostics()[0].location.known());
  }
  for (const char* empty : {"", "# only a comment\n", "---\n", "~\n"}) {
    DiagnosticSink sink;
    CHECK(ParseYaml(empty, "t.yaml", sink) == nullptr);
    CHECK(sink.diagnostics()[0].code == codes::kEmptyDocument);
  }
  {
    DiagnosticSink sink;
    CHECK(ParseYaml("a: 1\n---\nb: 2\n", "t.yaml", sink) == nullptr);
    CHECK(sink.diagnostics()[0].code == codes::kMultipleDocuments);
    CHECK(sink.diagnostics()[0].location == SourceLocation{2, 1});
  }
}

TEST_CASE("DescribeYamlType names node types", "[yaml]") {
  DiagnosticSink sink;
  auto doc = ParseYaml("a: 1\nb: 1.5\nc: x\nd: true\ne: ~\nf: []\ng: {}\n", "t.yaml", sink);
  REQUIRE(doc != nullptr);
  std::vector<std::string> names;
  for (const YamlEntry& e : doc->root->entries) names.push_back(DescribeYamlType(*e.value));
  CHECK(names == std::vector<std::string>{"integer", "float", "string", "boolean", "null",
                                          "list", "mapping"});
}
