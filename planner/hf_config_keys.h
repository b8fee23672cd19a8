// Reading the keys of a Hugging Face config.json for counting (planner/hf_architectures.h):
// values with transformers' defaults where its config classes have them, and every key that is
// missing, mistyped or changes the architecture in a way accel does not model recorded as an
// issue located at the key's value in the file text.
#ifndef ACCEL_PLANNER_HF_CONFIG_KEYS_H_
#define ACCEL_PLANNER_HF_CONFIG_KEYS_H_

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_document.h"
#include "common/source_location.h"

namespace accel::planner {

// One problem with a config.json: a code (E0202 missing or mistyped, E0203 a value accel cannot
// count), a message without a subject ("has no 'hidden_size' (the hidden size)"), and where the
// value is in the text (the enclosing object for a missing key).
struct HfConfigIssue {
  std::string code;
  std::string message;
  SourceLocation location;
};

// The keys of one JSON object of a config.json (the top level, or a nested one such as CLIP's
// text_config), read one at a time. Every problem is appended to `issues`, so one pass reports
// all of them; a value that could not be read comes back as the fallback (or 0).
class HfConfigKeys {
 public:
  HfConfigKeys(const nlohmann::json& object, std::string_view text, FieldPath path,
               std::vector<HfConfigIssue>& issues);

  // A positive integer; missing is an issue naming `what` ("the hidden size").
  int64_t Required(const char* key, const char* what);
  // A positive integer, `fallback` when missing or null (transformers' default).
  int64_t Optional(const char* key, int64_t fallback);
  // A number, `fallback` when missing or null.
  double Number(const char* key, double fallback);
  // true/false, `fallback` when missing or null.
  bool Flag(const char* key, bool fallback);
  // A string, `fallback` when missing or null.
  std::string Text(const char* key, const std::string& fallback);
  // Records that `key`'s value is one accel cannot count: "has 'KEY' = VALUE; REASON" (E0203).
  void Refuse(const char* key, const std::string& reason);
  // The nested object under `key`; an issue when it is missing or not an object (the returned
  // reader then reads an empty object, so its keys read as missing without further issues).
  HfConfigKeys Object(const char* key);
  // The value under `key` when present and not null.
  const nlohmann::json* Find(const char* key) const;
  // The dotted name of `key` in messages: "text_config.hidden_size".
  std::string Name(const char* key) const;

 private:
  void Issue(const char* code, const char* key, std::string message);

  const nlohmann::json* object_;
  std::string_view text_;
  FieldPath path_;
  std::vector<HfConfigIssue>* issues_;
  bool quiet_ = false;  // a missing nested object: its keys add no issues of their own
};

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_HF_CONFIG_KEYS_H_
