#include "html/chart_library.h"

#include "html/embedded_assets.h"

namespace accel::html {

absl::StatusOr<std::string_view> ChartLibrary() { return EChartsScript(); }

}  // namespace accel::html
