// `accel export-config`: a planned job written as another tool's training config.
#ifndef ACCEL_EXPORTERS_EXPORTER_H_
#define ACCEL_EXPORTERS_EXPORTER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "exporters/export_report.h"
#include "ir/plan.pb.h"
#include "spec/job_spec.h"

namespace accel::exporters {

enum class TargetFormat {
  kDeepSpeed,   // a DeepSpeed config JSON (ds_config.json)
  kAccelerate,  // a Hugging Face Accelerate config YAML (`accelerate launch --config_file`)
  kTorchtitan,  // torchtitan's Trainer.Config.to_dict() JSON (--debug.save_config_file)
  kMegatron,    // a Megatron-LM launch script: a bash array of arguments and a torchrun line
};

// "deepspeed", "accelerate", "torchtitan", "megatron": the --to spellings, in that order.
const std::vector<std::string>& TargetNames();

// The format a --to spelling names, or nullopt.
std::optional<TargetFormat> ParseTargetName(std::string_view name);

// The exported config and its report.
struct ExportResult {
  // The file's text. For the YAML and bash targets it ends with the report as comment lines;
  // JSON has no comments, so for the JSON targets the report is only in `report` (the command
  // prints it to standard error).
  std::string text;
  ExportReport report;
};

// Writes `plan` (a complete plan of `job`: every auto value resolved) as `target`'s config.
// `job` gives what the plan does not keep (the spec's file name for the header, the
// model.config path). Never fails: what the target cannot hold is reported, not refused.
ExportResult ExportConfig(const spec::JobSpec& job, const ir::Plan& plan, TargetFormat target);

}  // namespace accel::exporters

#endif  // ACCEL_EXPORTERS_EXPORTER_H_
