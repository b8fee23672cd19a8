#include <catch2/catch.hpp>
#include <algorithm>
#include <set>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/diag_codes.h"
#include "schemas/schema_validator.h"
#include "spec/field_registry.h"
#include "spec/loader.h"
#include "spec/spec_json.h"
#include "spec/yaml_tree.h"
#include "tests/common/files.h"

using namespace accel;
using namespace accel::spec;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// What the schema says about one key, reduced to what the registry also knows.
struct SchemaField {
  FieldKind kind = FieldKind::kSection;
  bool allows_auto = false;
  bool required = false;
  std::optional<double> minimum, maximum;
  bool exclusive_minimum = false, exclusive_maximum = false;
  std::vector<std::string> enum_values;
  std::string pattern;
  bool has_description = false;
  std::string description;
  std::optional<json> default_value;
};

void ReadBounds(const json& node, SchemaField& field) {
  if (node.contains("minimum")) field.minimum = node["minimum"].get<double>();
  if (node.contains("exclusiveMinimum")) {
    field.minimum = node["exclusiveMinimum"].get<double>();
    field.exclusive_minimum = true;
  }
  if (node.contains("maximum")) field.maximum = node["maximum"].get<double>();
  if (node.contains("exclusiveMaximum")) {
    field.maximum = node["exclusiveMaximum"].get<double>();
    field.exclusive_maximum = true;
  }
  if (node.contains("const") && node["const"].is_number()) {
    field.minimum = field.maximum = node["const"].get<double>();
  }
}

SchemaField Describe(const json& node) {
  SchemaField field;
  field.has_description = node.contains("description") && node["description"].is_string() &&
                          node["description"].get<std::string>().size() > 20;
  if (field.has_description) field.description = node["description"].get<std::string>();
  if (node.contains("default")) field.default_value = node["default"];
  if (node.contains("properties")) return field;
  if (node.contains("anyOf")) {
    bool has_pattern_string = false;
    for (const json& option : node["anyOf"]) {
      if (option.contains("const") && option["const"] == "auto") field.allows_auto = true;
      if (option.value("type", "") == "integer") ReadBounds(option, field);
      if (option.value("type", "") == "string" && option.contains("pattern")) has_pattern_string = true;
    }
    field.kind = has_pattern_string ? FieldKind::kSize : FieldKind::kInteger;
    return field;
  }
  const std::string type = node.value("type", "");
  if (type == "integer") field.kind = FieldKind::kInteger;
  if (type == "number") field.kind = FieldKind::kNumber;
  if (type == "boolean") field.kind = FieldKind::kBoolean;
  if (type == "string") {
    field.kind = node.contains("enum") ? FieldKind::kEnum : FieldKind::kString;
    if (node.contains("enum")) field.enum_values = node["enum"].get<std::vector<std::string>>();
    field.pattern = node.value("pattern", "");
  }
  if (type == "array") {
    field.kind = FieldKind::kNumberPair;
    CHECK(node["minItems"] == 2);
    CHECK(node["maxItems"] == 2);
    ReadBounds(node["items"], field);
    return field;
  }
  ReadBounds(node, field);
  return field;
}

void Walk(const json& object, const std::string& prefix, std::map<std::string, SchemaField>& out) {
  CHECK(object.value("additionalProperties", true) == false);
  std::vector<std::string> required;
  if (object.contains("required")) required = object["required"].get<std::vector<std::string>>();
  for (const auto& [key, node] : object["properties"].items()) {
    std::string path = JoinPath(prefix, key);
    SchemaField field = Describe(node);
    field.required = std::find(required.begin(), required.end(), key) != required.end();
    out[path] = field;
    if (node.contains("properties")) Walk(node, path, out);
  }
}

using accel::testing::ReadAll;

}  // namespace

// The embedded schema is generated from the field registry at build time; the checked-in copy
// (which editors and the examples reference) must be the same text. When this fails, refresh it:
// cmake --build build-core --target accel_spec_refresh (the test spec_generated_files_up_to_date
// fails too, and says so).
TEST_CASE("the embedded schema is the file in the repository", "[schema]") {
  INFO("refresh with: cmake --build build-core --target accel_spec_refresh");
  CHECK(schemas::JobSchemaText() ==
        ReadAll(fs::path(ACCEL_SOURCE_ROOT) / "schemas" / "accel-job.schema.json"));
  REQUIRE(schemas::JobSchemaJson().ok());
}

TEST_CASE("the schema and the loader accept exactly the same keys", "[schema]") {
  absl::StatusOr<const json*> schema = schemas::JobSchemaJson();
  REQUIRE(schema.ok());
  CHECK((**schema)["$schema"] == "http://json-schema.org/draft-07/schema#");
  std::map<std::string, SchemaField> from_schema;
  Walk(**schema, "", from_schema);
  std::set<std::string> registry_paths;
  for (const FieldInfo& field : JobFields()) {
    registry_paths.insert(field.path);
    INFO(field.path);
    auto it = from_schema.find(field.path);
    REQUIRE(it != from_schema.end());
    const SchemaField& s = it->second;
    CHECK(s.has_description);
    CHECK(s.description == field.description);
    CHECK(s.default_value.has_value() == !field.default_json.empty());
    if (s.default_value.has_value() && !field.default_json.empty()) {
      CHECK(*s.default_value == json::parse(field.default_json));
    }
    CHECK(s.kind == field.kind);
    CHECK(s.allows_auto == field.allows_auto);
    CHECK(s.required == field.required);
    CHECK(s.enum_values == field.enum_values);
    CHECK(s.pattern == field.pattern);
    if (field.kind != FieldKind::kSection && field.kind != FieldKind::kBoolean &&
        field.kind != FieldKind::kString && field.kind != FieldKind::kEnum) {
      CHECK(s.minimum == field.minimum);
      CHECK(s.maximum == field.maximum);
      CHECK(s.exclusive_minimum == field.exclusive_minimum);
      CHECK(s.exclusive_maximum == field.exclusive_maximum);
    }
  }
  for (const auto& [path, field] : from_schema) {
    INFO(path);
    CHECK(registry_paths.count(path) == 1);
  }
}

// The registry states the model's conditional requirements for the schema (RequiredUnless,
// RequiredIf); the loader enforces them in code. Both must agree: a model without `config`
// missing one of them is an error for the loader and for the schema.
TEST_CASE("the registry's conditional requirements are the loader's", "[schema][registry]") {
  const std::map<std::string, std::string> dims = {
      {"arch", "llama"},     {"hidden_size", "8"}, {"num_layers", "1"},     {"num_heads", "1"},
      {"vocab_size", "8"},   {"max_seq_len", "8"}, {"ffn_hidden_size", "16"}};
  auto spec_without = [&](const std::string& missing, const std::string& arch) {
    std::string model;
    for (const auto& [key, value] : dims) {
      if (key == missing) continue;
      model += (model.empty() ? "" : ", ") + key + ": " + (key == "arch" ? arch : value);
    }
    return "version: 1\nname: s\nmodel: {" + model +
           "}\ndata: {train: {path: p}, seq_len: 8, micro_batch_size: 1}\n"
           "training: {steps: 1}\ncluster: {devices_per_node: 1}\n";
  };
  int conditional = 0;
  for (const FieldInfo& field : JobFields()) {
    if (field.required_unless.empty() && field.required_if_key.empty()) continue;
    ++conditional;
    REQUIRE(field.parent == "model");  // the loader checks these for the model only
    CHECK(field.required_unless == "config");
    for (const std::string arch : {"gpt2", "llama"}) {
      INFO(field.path << " with arch " << arch);
      const bool required = field.required_if_key.empty() ||
                            (field.required_if_key == "arch" && field.required_if_value == arch);
      if (field.key == "arch" && arch == "llama") continue;  // no arch: nothing to vary
      const std::string text = spec_without(field.key, arch);
      DiagnosticSink sink;
      SourceManager sources;
      LoadJobSpecFromString(text, "t.yaml", {}, sink, sources);
      bool loader_missing = false;
      for (const Diagnostic& d : sink.diagnostics()) {
        if (d.message.rfind("missing required key '" + field.key + "' in model", 0) == 0) {
          loader_missing = true;
        }
      }
      CHECK(loader_missing == required);
      DiagnosticSink parse_sink;
      auto doc = ParseYaml(text, "t.yaml", parse_sink);
      REQUIRE(doc != nullptr);
      auto violations = schemas::ValidateJobDocument(YamlToJson(*doc->root));
      REQUIRE(violations.ok());
      CHECK(violations->empty() == !required);
    }
  }
  CHECK(conditional == 7);
}

TEST_CASE("every example spec validates without diagnostics", "[schema][examples]") {
  const fs::path examples = fs::path(ACCEL_SOURCE_ROOT) / "examples" / "specs";
  int count = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(examples)) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    DiagnosticSink sink;
    SourceManager sources;
    std::optional<JobSpec> spec = LoadJobSpec(entry.path().string(), {}, sink, sources);
    INFO(RenderText(sink.diagnostics(), sources));
    CHECK(spec.has_value());
    CHECK(sink.empty());
    const std::string text = ReadAll(entry.path());
    CHECK(text.rfind("# yaml-language-server: $schema=../../schemas/accel-job.schema.json\n", 0) == 0);
    // The schema alone agrees.
    DiagnosticSink parse_sink;
    auto doc = ParseYaml(text, entry.path().string(), parse_sink);
    REQUIRE(doc != nullptr);
    absl::StatusOr<std::vector<schemas::SchemaViolation>> violations =
        schemas::ValidateJobDocument(YamlToJson(*doc->root));
    REQUIRE(violations.ok());
    CHECK(violations->empty());
  }
  CHECK(count >= 6);
}

TEST_CASE("the schema rejects what the loader rejects", "[schema]") {
  auto violations_of = [](const std::string& text) {
    DiagnosticSink sink;
    auto doc = ParseYaml(text, "t.yaml", sink);
    REQUIRE(doc != nullptr);
    auto violations = schemas::ValidateJobDocument(YamlToJson(*doc->root));
    REQUIRE(violations.ok());
    return *violations;
  };
  const std::string base = R"(version: 1
name: s
model: {arch: gpt2, hidden_size: 8, num_layers: 1, num_heads: 1, vocab_size: 8, max_seq_len: 8}
data: {train: {path: p}, seq_len: 8, micro_batch_size: 1}
training: {steps: 1}
cluster: {devices_per_node: 1}
)";
  CHECK(violations_of(base).empty());
  CHECK(violations_of(base + "parallel: {tensor: auto, data_shard: 2}\n").empty());
  CHECK(violations_of(base + "cluster2: {}\n").size() >= 1);
  CHECK_FALSE(violations_of(base + "sharding: {stage: 4}\n").empty());
  CHECK_FALSE(violations_of(base + "precision: {compute: bf17}\n").empty());
  CHECK_FALSE(violations_of(base + "checkpoint: {keep: auto}\n").empty());
  CHECK_FALSE(violations_of(base + "sharding: {bucket_size: \"8\"}\n").empty());
  CHECK_FALSE(violations_of("version: 1\nname: s\nmodel: {arch: llama, hidden_size: 8, num_layers: 1, "
                            "num_heads: 1, vocab_size: 8, max_seq_len: 8}\n"
                            "data: {train: {path: p}, seq_len: 8, micro_batch_size: 1}\n"
                            "training: {steps: 1}\ncluster: {devices_per_node: 1}\n")
                  .empty());  // llama without ffn_hidden_size
  CHECK(violations_of("version: 1\nname: s\nmodel: {config: c.json}\n"
                      "data: {train: {path: p}, seq_len: 8, micro_batch_size: 1}\n"
                      "training: {steps: 1}\ncluster: {devices_per_node: 1}\n")
            .empty());
}

TEST_CASE("schema violations map back to line:column", "[schema]") {
  DiagnosticSink sink;
  auto doc = ParseYaml("a:\n  b: [1, {c: 2}]\n  d: x\n", "t.yaml", sink);
  REQUIRE(doc != nullptr);
  JsonPathTarget t = LocateJsonPath(*doc->root, {"a", "b", "1", "c"});
  CHECK(t.field == "a.b[1].c");
  CHECK(t.location == SourceLocation{2, 14});
  t = LocateJsonPath(*doc->root, {"a"});
  CHECK(t.field == "a");
  CHECK(t.location == SourceLocation{1, 1});  // a mapping: its key
  t = LocateJsonPath(*doc->root, {"a", "d"});
  CHECK(t.location == SourceLocation{3, 6});  // a scalar: the value
  t = LocateJsonPath(*doc->root, {});
  CHECK(t.location == SourceLocation{1, 1});
  t = LocateJsonPath(*doc->root, {"a", "missing"});
  CHECK(t.field == "a");
}

TEST_CASE("YamlToJson types scalars like the loader", "[schema]") {
  DiagnosticSink sink;
  auto doc = ParseYaml("i: 8\nf: 3e-4\nq: \"8\"\nb: true\nn: ~\ns: 8GiB\nl: [1, x]\nd: 1\nd: 2\n"
                       "big: 99999999999999999999\n",
                       "t.yaml", sink);
  REQUIRE(doc != nullptr);
  json j = YamlToJson(*doc->root);
  CHECK(j["i"].is_number_integer());
  CHECK(j["f"].is_number_float());
  CHECK(j["q"] == "8");
  CHECK(j["b"] == true);
  CHECK(j["n"].is_null());
  CHECK(j["s"] == "8GiB");
  CHECK(j["l"] == json::array({1, "x"}));
  CHECK(j["d"] == 1);  // the first of duplicate keys, as yaml-cpp
  CHECK(j["big"].is_string());
}
