// One self-contained HTML page: the style sheet, the charting library, the page's script and its
// data inlined, so it opens from a file with no network (`accel plan --format html`,
// `accel report`).
#ifndef ACCEL_HTML_HTML_PAGE_H_
#define ACCEL_HTML_HTML_PAGE_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "common/html_escape.h"

namespace accel::html {

// A JSON document the page script reads with JSON.parse from
// <script type="application/json" id="ID">.
struct PageData {
  std::string id;    // the element id, [a-z0-9-]+
  std::string json;  // one JSON value (not checked here)
};

// `json` made safe inside a <script> element: every '<' becomes the JSON escape \u003c, so no
// "</script>" or "<!--" can end or change the element, and JSON.parse gives the same value ('<'
// can only occur inside JSON strings).
std::string EscapeJsonForScript(std::string_view json);

// The escape for HTML text and attribute values (common/html_escape.h), named here for the pages.
using ::accel::EscapeHtml;

// The page: <title>`title`</title>, the style sheet, `body_html` (trusted markup: the page's
// fixed skeleton), each `data` block, then the charting library, page_common.js and
// `page_script`. Errors: FailedPrecondition when the binary has no charting library
// (ChartLibrary's message); Internal when an embedded script contains "</script" (it would end
// its element early; a library update would have to be escaped first).
absl::StatusOr<std::string> HtmlPage(std::string_view title, std::string_view body_html,
                                     const std::vector<PageData>& data,
                                     std::string_view page_script);

}  // namespace accel::html

#endif  // ACCEL_HTML_HTML_PAGE_H_
