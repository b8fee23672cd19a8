#include "exporters/exporter.h"

#include "exporters/writers.h"

namespace accel::exporters {

const std::vector<std::string>& TargetNames() {
  static const std::vector<std::string> kNames = {"deepspeed", "accelerate", "torchtitan", "megatron"};
  return kNames;
}

std::optional<TargetFormat> ParseTargetName(std::string_view name) {
  const TargetFormat kFormats[] = {TargetFormat::kDeepSpeed, TargetFormat::kAccelerate,
                                   TargetFormat::kTorchtitan, TargetFormat::kMegatron};
  for (size_t i = 0; i < TargetNames().size(); ++i) {
    if (TargetNames()[i] == name) return kFormats[i];
  }
  return std::nullopt;
}

ExportResult ExportConfig(const spec::JobSpec& job, const ir::Plan& plan, TargetFormat target) {
  ExportResult out;
  switch (target) {
    case TargetFormat::kDeepSpeed: out.text = WriteDeepSpeed(job, plan, out.report); break;
    case TargetFormat::kTorchtitan: out.text = WriteTorchtitan(job, plan, out.report); break;
    case TargetFormat::kAccelerate:
      out.text = WriteAccelerate(job, plan, out.report);
      out.text += "\n# Export report (accel export-config):\n" + out.report.Render("# ");
      break;
    case TargetFormat::kMegatron:
      out.text = WriteMegatron(job, plan, out.report);
      out.text += "\n# Export report (accel export-config):\n" + out.report.Render("# ");
      break;
  }
  return out;
}

}  // namespace accel::exporters
