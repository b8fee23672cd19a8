// The charting library the HTML pages inline: Apache ECharts (docs/plan.md says why).
#ifndef ACCEL_HTML_CHART_LIBRARY_H_
#define ACCEL_HTML_CHART_LIBRARY_H_

#include <string_view>

#include "absl/status/statusor.h"

namespace accel::html {

// The library's minified JavaScript (about 1 MB), embedded at build time. Errors:
// FailedPrecondition when this binary was configured without it; the message names the file
// looked for and scripts/install-deps.sh, which installs it.
absl::StatusOr<std::string_view> ChartLibrary();

}  // namespace accel::html

#endif  // ACCEL_HTML_CHART_LIBRARY_H_
