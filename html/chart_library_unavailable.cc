// ChartLibrary of a build configured without Apache ECharts (html/CMakeLists.txt).
#include <string>

#include "html/chart_library.h"

namespace accel::html {

absl::StatusOr<std::string_view> ChartLibrary() {
  return absl::FailedPreconditionError(
      std::string("this accel was built without Apache ECharts (") + ACCEL_ECHARTS_JS +
      " was missing when the build was configured), which HTML pages inline: run "
      "scripts/install-deps.sh, then configure and build again");
}

}  // namespace accel::html
