#ifndef ACCEL_IMPORTERS_LOCATED_JSON_H_
#define ACCEL_IMPORTERS_LOCATED_JSON_H_

#include <memory>
#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "spec/yaml_tree.h"

namespace accel::importers {

// Parses strict JSON into the located tree the YAML loader uses (spec::YamlDocument), so the
// importers read JSON, YAML and TOML through one interface with a line:column on every key and
// value. Strings are quoted scalars; numbers are kInt or kFloat scalars holding the JSON text.
// The text is first checked as JSON (CheckJsonSyntax, common/json_document.h), then read as
// YAML 1.2, of which JSON is a subset (tabs, which JSON allows between tokens and YAML not in
// indentation, are read as spaces). Returns nullptr after adding errors to `sink`: E0701 at the
// offending byte for JSON syntax errors ("not valid JSON: DETAIL") and nesting deeper than 64
// ("JSON nested deeper than 64 levels"), E0004/E0007 from the YAML reader.
std::unique_ptr<spec::YamlDocument> ParseLocatedJson(std::string_view text,
                                                     const std::string& file,
                                                     DiagnosticSink& sink);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_LOCATED_JSON_H_
