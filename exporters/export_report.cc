#include "exporters/export_report.h"

namespace accel::exporters {

bool ExportReport::Names(std::string_view aspect) const {
  for (const ExportNote& note : notes_) {
    if (note.aspect == aspect && note.fidelity != Fidelity::kExact) return true;
  }
  return false;
}

std::string ExportReport::Render(std::string_view prefix) const {
  std::string out;
  const std::pair<Fidelity, const char*> kGroups[] = {{Fidelity::kExact, "exact:"},
                                                      {Fidelity::kApproximate, "approximated:"},
                                                      {Fidelity::kMissing, "not expressible:"}};
  for (const auto& [fidelity, title] : kGroups) {
    bool any = false;
    for (const ExportNote& note : notes_) {
      if (note.fidelity != fidelity) continue;
      if (!any) out += std::string(prefix) + title + "\n";
      any = true;
      out += std::string(prefix) + "  " + note.aspect + ": " + note.detail + "\n";
    }
  }
  return out;
}

}  // namespace accel::exporters
