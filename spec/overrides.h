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
  std::string value;  // the text after '=', trimmed; read later as a YAML value
};

// Splits `argument` at its first '='. The key is one or more names of letters, digits and '_'
// joined by '.', optionally ending in `[N]` (N a small decimal index). Returns nullopt when
// there is no '=' or the key does not have that form; the value may be empty.
std::optional<Override> ParseOverride(std::string_view argument);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_OVERRIDES_H_
