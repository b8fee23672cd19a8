// Character references for text placed in HTML: the one escape of the HTML pages (html/) and of
// the Graphviz HTML-like labels of the plan graph (ir/graph_export.cc).
#ifndef ACCEL_COMMON_HTML_ESCAPE_H_
#define ACCEL_COMMON_HTML_ESCAPE_H_

#include <string>
#include <string_view>

namespace accel {

// `text` with &, <, >, " and ' as character references (&amp; &lt; &gt; &quot; &#39;), for HTML
// text and attribute values. Other bytes, UTF-8 included, are copied.
std::string EscapeHtml(std::string_view text);

}  // namespace accel

#endif  // ACCEL_COMMON_HTML_ESCAPE_H_
