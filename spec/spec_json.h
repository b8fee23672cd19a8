#ifndef ACCEL_SPEC_SPEC_JSON_H_
#define ACCEL_SPEC_SPEC_JSON_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/source_location.h"
#include "spec/yaml_tree.h"

// Bridges the located YAML tree and JSON: the JSON Schema check runs on a JSON copy of the
// document, and its findings are mapped back to line:column.
namespace accel::spec {

// Longest string copied into the JSON document, in bytes. Longer strings are cut: the loader
// has already checked them in full, and valijson's std::regex `pattern` matching recurses per
// character, which would overflow the stack on a hostile megabyte-long value.
inline constexpr size_t kMaxJsonStringBytes = 256;

// Converts a YAML node (aliases expanded; the tree's node cap bounds the result) to JSON with
// the YAML 1.2 core schema types: plain `8` is an integer, `3e-4` a number, `true` a boolean,
// `~` null, quoted scalars strings. Integers beyond int64 stay strings. With duplicate keys
// the first wins, as in yaml-cpp.
nlohmann::json YamlToJson(const YamlNode& node);

// Where a JSON path (keys and decimal indices from the root, see schemas::SchemaViolation)
// points in the tree: the dotted field ("training.optimizer.betas[1]", "" for the root) and a
// location: a mapping's key when the target is a mapping or list inside a mapping (errors about
// a section point at its name), else the value itself; 1:1 for the root. A path that leaves the
// tree stops at the last node found.
struct JsonPathTarget {
  std::string field;
  SourceLocation location;
};
JsonPathTarget LocateJsonPath(const YamlNode& root, const std::vector<std::string>& path);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_SPEC_JSON_H_
