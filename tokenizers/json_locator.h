// Finding where a value sits in JSON text, so errors about a field of a large file (a 10 MB
// tokenizer.json) can name its line and column. nlohmann::json keeps no positions.
#ifndef ACCEL_TOKENIZERS_JSON_LOCATOR_H_
#define ACCEL_TOKENIZERS_JSON_LOCATOR_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/source_location.h"

namespace accel::tok {

// The 1-based line:column of byte `offset` in `text` (columns count bytes).
SourceLocation LocationOfByte(std::string_view text, size_t offset);

// Where the value at `path` starts in `text`, which must be valid JSON. Path elements are object
// keys or, inside arrays, bracketed decimal indices ({"model", "merges", "[3]"}). When an element is missing,
// the location of the deepest container that exists is returned (so "has no 'merges'" points at
// the "model" object); an empty path is the top-level value.
SourceLocation LocateJsonPath(std::string_view text, const std::vector<std::string>& path);

}  // namespace accel::tok

#endif  // ACCEL_TOKENIZERS_JSON_LOCATOR_H_
