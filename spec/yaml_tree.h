#ifndef ACCEL_SPEC_YAML_TREE_H_
#define ACCEL_SPEC_YAML_TREE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostics.h"
#include "common/source_location.h"

// A YAML document as a small tree whose every node knows its 1-based line:column. Built from
// yaml-cpp parser events (not YAML::Node) so that duplicate keys stay visible, aliases are shared
// instead of copied, and nesting depth and expanded size are bounded while parsing.
namespace accel::spec {

// Type of a scalar under the YAML 1.2 core schema. Quoted scalars are always strings.
enum class ScalarType { kNull, kBool, kInt, kFloat, kString };

struct YamlNode;

// One `key: value` pair of a mapping, in document order (duplicates included).
struct YamlEntry {
  const YamlNode* key = nullptr;
  const YamlNode* value = nullptr;
};

// A node of the tree. An alias (`*name`) is its own node with the alias's location whose
// `target` is the anchored node; use content() to read through it.
struct YamlNode {
  enum class Kind { kScalar, kMapping, kSequence };

  Kind kind = Kind::kScalar;
  SourceLocation location;             // first character of the node (1-based)
  std::string value;                   // scalar text after unquoting; empty for collections
  bool quoted = false;                 // scalar was written in quotes or as a block scalar
  ScalarType scalar_type = ScalarType::kNull;  // meaningful for scalars only
  std::vector<YamlEntry> entries;      // kMapping
  std::vector<const YamlNode*> items;  // kSequence
  const YamlNode* target = nullptr;    // non-null for an alias
  int64_t expanded_size = 1;           // nodes after expanding aliases (saturates at the cap)

  // The node itself, or the anchored node for an alias.
  const YamlNode& content() const { return target != nullptr ? *target : *this; }
  bool is_scalar() const { return content().kind == Kind::kScalar; }
  bool is_mapping() const { return content().kind == Kind::kMapping; }
  bool is_sequence() const { return content().kind == Kind::kSequence; }
  bool is_null() const { return is_scalar() && content().scalar_type == ScalarType::kNull; }
};

// Bounds that keep hostile input from exhausting time or memory.
struct YamlLimits {
  int max_depth = 64;           // nested mappings/sequences; the root collection is depth 1
  int64_t max_nodes = 100000;   // nodes counted with every alias expanded
};

// A parsed document. Owns its nodes; `root` is never null for a document returned by ParseYaml.
struct YamlDocument {
  std::deque<YamlNode> nodes;
  const YamlNode* root = nullptr;
};

// Parses `text`, which must hold exactly one YAML document, into a located tree. `file` names
// the text in diagnostics. Returns nullptr after adding errors to `sink`: E0004 syntax errors
// (at yaml-cpp's mark, converted to 1-based) and aliases that refer to a node containing them,
// E0005 when there is no document or only a null one, E0006 nesting deeper than
// limits.max_depth, E0007 more than limits.max_nodes nodes after alias expansion, E0009 a
// second document. Does not check tabs, encoding or size (see spec/text_checks.h).
std::unique_ptr<YamlDocument> ParseYaml(std::string_view text, const std::string& file,
                                        DiagnosticSink& sink, const YamlLimits& limits = {});

// Classifies a plain (unquoted) scalar under the YAML 1.2 core schema: null (`~`, `null`,
// empty), bool (`true`/`false` in three casings), int (decimal, `0x` hex, `0o` octal),
// float (`1.5`, `3e-4`, `.inf`, `.nan`), else string.
ScalarType ClassifyPlainScalar(std::string_view text);

// Parses an integer scalar as classified above; false when it does not fit in int64.
bool ParseYamlInt(std::string_view text, int64_t* out);

// Parses an int or float scalar as a double (`.inf`, `-.inf`, `.nan` included).
bool ParseYamlFloat(std::string_view text, double* out);

// "null", "boolean", "integer", "float", "string", "mapping" or "list": how diagnostics name
// what a node is, e.g. "expected an integer, got string".
std::string DescribeYamlType(const YamlNode& node);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_YAML_TREE_H_
