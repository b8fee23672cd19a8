// Reading a small JSON file that must hold one object (a model config.json, a device profile):
// the spec's size limit and messages over the common JSON reader (common/json_document.h), whose
// syntax errors are located at the offending byte.
#ifndef ACCEL_SPEC_JSON_OBJECT_H_
#define ACCEL_SPEC_JSON_OBJECT_H_

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "common/source_location.h"

namespace accel::spec {

// Why a text is not a JSON object. `message` is a predicate without a subject ("is not valid
// JSON: ..."), so callers prefix the file; `location` is set for syntax errors (and is 1:1 for a
// value that is not an object).
struct JsonObjectProblem {
  std::string message;
  SourceLocation location;
};

// Parses `text` as a JSON object of at most kMaxSpecFileBytes (1 MiB). On failure returns
// nullopt and fills `problem`: "is larger than 1 MiB; it is not a WHAT" (what: e.g. "model
// config"), "is not valid JSON: DETAIL" (JsonSyntaxError's detail and location; bytes of the text
// DETAIL quotes that are not UTF-8 show as '?'), or "must hold a JSON object, got TYPE" (at 1:1).
// Messages are valid UTF-8.
std::optional<nlohmann::json> ParseJsonObject(std::string_view text, std::string_view what,
                                              JsonObjectProblem& problem);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_JSON_OBJECT_H_
