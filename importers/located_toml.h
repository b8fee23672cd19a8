#ifndef ACCEL_IMPORTERS_LOCATED_TOML_H_
#define ACCEL_IMPORTERS_LOCATED_TOML_H_

#include <memory>
#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "spec/yaml_tree.h"

namespace accel::importers {

// Parses TOML (tomlplusplus) into the located tree the YAML loader uses (spec::YamlDocument):
// tables become mappings with their keys in document order, arrays sequences; strings are quoted
// scalars, integers kInt, floats kFloat, booleans kBool, dates and times strings. Every node
// carries the line:column tomlplusplus reports for it (a dotted table header's keys point into
// the header). Returns nullptr after adding E0701 at the parser's position for malformed TOML
// (syntax, redefined keys, nesting beyond tomlplusplus's limit).
std::unique_ptr<spec::YamlDocument> ParseLocatedToml(std::string_view text,
                                                     const std::string& file,
                                                     DiagnosticSink& sink);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_LOCATED_TOML_H_
