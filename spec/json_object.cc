#include "spec/json_object.h"

#include "common/json_document.h"
#include "spec/text_checks.h"

namespace accel::spec {

std::optional<nlohmann::json> ParseJsonObject(std::string_view text, std::string_view what,
                                              JsonObjectProblem& problem) {
  if (text.size() > kMaxSpecFileBytes) {
    problem = {"is larger than 1 MiB; it is not a " + std::string(what), {}};
    return std::nullopt;
  }
  JsonSyntaxError error;
  std::optional<nlohmann::json> json = ParseJson(text, error);
  if (!json) {
    // nlohmann quotes the bytes it last read ("last read: '{\x82'") as they are; a byte that is
    // not UTF-8 there made the message unprintable as JSON (`--format json` threw).
    problem = {"is not valid JSON: " + SanitizeForDisplay(error.detail), error.location};
    return std::nullopt;
  }
  if (!json->is_object()) {
    problem = {"must hold a JSON object, got " + std::string(json->type_name()), {1, 1}};
    return std::nullopt;
  }
  return json;
}

}  // namespace accel::spec
