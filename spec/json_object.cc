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
    // Other lexer errors carry no position (out_of_range.406 "number overflow parsing '1e400'"):
    // locate the first occurrence of the text they quote, else the start of the file.
    const std::string what = e.what();
    const size_t open = what.find('\''), close = what.rfind('\'');
    size_t at = std::string_view::npos;
    if (open != std::string::npos && close > open + 1) at = text.find(what.substr(open + 1, close - open - 1));
    const size_t tail = what.find("] ");
    problem = {"is not valid JSON: " + SanitizeForDisplay(tail == std::string::npos ? what : what.substr(tail + 2)),
               LocationOfOffset(text, at == std::string_view::npos ? 0 : at)};
    return std::nullopt;
  }
  if (!json.is_object()) {
    problem = {"must hold a JSON object, got " + std::string(json.type_name()), {1, 1}};
    return std::nullopt;
  }
  return json;
}

}  // namespace accel::spec
