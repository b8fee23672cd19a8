#include "html/html_page.h"

#include "html/chart_library.h"
#include "html/embedded_assets.h"

namespace accel::html {

std::string EscapeJsonForScript(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

absl::StatusOr<std::string> HtmlPage(std::string_view title, std::string_view body_html,
                                     const std::vector<PageData>& data,
                                     std::string_view page_script) {
  absl::StatusOr<std::string_view> library = ChartLibrary();
  if (!library.ok()) return library.status();
  // absl::StrCat does not take std::string_view where absl::string_view is its own type.
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  page += EscapeHtml(title);
  page += "</title>\n<style>\n";
  page += PageStyle();
  // First, so that errors of every later script are recorded (page_common.js shows them).
  page += "</style>\n<script>window.accelErrors=[];window.addEventListener('error',function(e){"
          "window.accelErrors.push(String(e.message||e));});</script>\n</head>\n<body>\n";
  page += body_html;
  page += "\n";
  for (const PageData& d : data) {
    page += "<script type=\"application/json\" id=\"" + d.id + "\">" +
            EscapeJsonForScript(d.json) + "</script>\n";
  }
  // The libraries are ours (embedded at build time) and contain no "</script" (checked here).
  for (std::string_view script : {*library, PageCommonScript(), page_script}) {
    if (script.find("</script") != std::string_view::npos) {
      return absl::InternalError("an embedded script contains </script");
    }
    page += "<script>\n";
    page += script;
    page += "\n</script>\n";
  }
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace accel::html
