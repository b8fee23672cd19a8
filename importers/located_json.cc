#include "importers/located_json.h"

#include "common/diag_codes.h"
#include "common/json_document.h"

namespace accel::importers {

std::unique_ptr<spec::YamlDocument> ParseLocatedJson(std::string_view text,
                                                     const std::string& file,
                                                     DiagnosticSink& sink) {
  // The YAML reader's nesting limit, checked on the JSON first so deep input costs little.
  JsonSyntaxError error;
  if (!CheckJsonSyntax(text, error, spec::YamlLimits().max_depth)) {
    sink.Error(codes::kImportSyntax, file, error.location, "",
               error.too_deep ? "JSON " + error.detail : "not valid JSON: " + error.detail);
    return nullptr;
  }
  // JSON is read again as YAML to get the located tree: nlohmann::json keeps no positions and
  // merges duplicate keys, which the importers must see.
  std::string yaml(text);
  for (char& c : yaml) {
    if (c == '\t') c = ' ';
  }
  return spec::ParseYaml(yaml, file, sink);
}

}  // namespace accel::importers
