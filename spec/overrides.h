#ifndef ACCEL_SPEC_OVERRIDES_H_
#define ACCEL_SPEC_OVERRIDES_H_

#include <optional>
#include <string>
#include <string_view>

// `--set section.key=value` command-line overrides.
namespace accel::spec {

// One parsed override: `training.optimizer.betas[1]=0.99` gives path
// "training.optimizer.betas", index 1, value "0.99".
struct Override {
  std::string path;   // dotted key path, without the index
  int index = -1;     // list item, -1 when the argument names the whole key
  // The bracketed integer when it cannot be an index (negative, or more than 4 digits:
  // "-1", "99999999999"); then index is -1. The loader reports it against the key.
  std::string bad_index;
  std::string value;  // the text after '=', trimmed; read later as a YAML value
};

// Splits `argument` at its first '='. The key is one or more names of letters, digits and '_'
// joined by '.', optionally ending in `[N]`: N a decimal index of at most 4 digits, or any other
// integer (a sign, more digits), which is kept in bad_index. Returns nullopt when there is no
// '=' or the key does not have that form; the value may be empty.
std::optional<Override> ParseOverride(std::string_view argument);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_OVERRIDES_H_
