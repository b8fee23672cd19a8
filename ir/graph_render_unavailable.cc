// RenderDot in a build without Graphviz (ACCEL_WITH_GRAPHVIZ=OFF, e.g. scripts/build-cuda.sh on
// a machine whose package set lacks Graphviz's Cairo/Pango closure): DOT text still works.
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/graph_export.h"

namespace accel::ir {

absl::StatusOr<std::string> RenderDot(std::string_view dot, std::string_view format) {
  return absl::UnimplementedError(absl::StrCat(
      "this build of accel has no Graphviz, so it cannot render ", std::string(format),
      "; use --format dot and render with Graphviz's `dot -T", std::string(format), "`"));
}

}  // namespace accel::ir
