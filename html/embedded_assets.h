// The files html/CMakeLists.txt embeds into the binary at build time (html/embed_file.cmake):
// each function returns the file's bytes, unchanged.
#ifndef ACCEL_HTML_EMBEDDED_ASSETS_H_
#define ACCEL_HTML_EMBEDDED_ASSETS_H_

#include <string_view>

namespace accel::html {

std::string_view PageStyle();          // html/page.css: the style sheet of every page
std::string_view PageCommonScript();   // html/page_common.js: formatting, tables, error capture
std::string_view PlanPageScript();     // html/plan_page.js: the plan page's charts
std::string_view ReportPageScript();   // html/report_page.js: the run report's charts
// Apache ECharts' dist/echarts.min.js; defined only when the build found it (ACCEL_HAVE_ECHARTS):
// call ChartLibrary() (html/chart_library.h), which says what to do when it is missing.
std::string_view EChartsScript();

}  // namespace accel::html

#endif  // ACCEL_HTML_EMBEDDED_ASSETS_H_
