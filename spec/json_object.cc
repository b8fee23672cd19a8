#include "spec/json_object.h"

#include "spec/text_checks.h"

namespace accel::spec {
namespace {

// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 3, column 5:
// syntax error while parsing ..."; the location is reported separately, so keep the tail.
std::string JsonErrorTail(const std::string& what) {
  size_t at = what.find("parse error");
  size_t colon = what.find(": ", at == std::string::npos ? 0 : at);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

}  // namespace

std::optional<nlohmann::json> ParseJsonObject(std::string_view text, std::string_view what,
                                              JsonObjectProblem& problem) {
  if (text.size() > kMaxSpecFileBytes) {
    problem = {"is larger than 1 MiB; it is not a " + std::string(what), {}};
    return std::nullopt;
  }
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann quotes the bytes it last read ("last read: '{\x82'") as they are; a byte that is
    // not UTF-8 there made the message unprintable as JSON (`--format json` threw).
    const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    problem = {"is not valid JSON: " + SanitizeForDisplay(JsonErrorTail(e.what())),
               LocationOfOffset(text, offset)};
    return std::nullopt;
  } catch (const nlohmann::json::exception& e) {
    problem = {"is not valid JSON: " + SanitizeForDisplay(e.what()), {}};
    return std::nullopt;
  }
  if (!json.is_object()) {
    problem = {"must hold a JSON object, got " + std::string(json.type_name()), {1, 1}};
    return std::nullopt;
  }
  return json;
}

}  // namespace accel::spec
