#ifndef ACCEL_CLI_SEARCHED_SPEC_H_
#define ACCEL_CLI_SEARCHED_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "planner/layout_search.h"

// `accel plan --search --emit-spec FILE`: the input spec with the winning layout written in.
namespace accel::cli {

// The YAML of the spec text `spec_text` (the job file as read) with the `--set` `overrides`
// applied, then the values planner::ApplyLayout sets for `layout` and `global_batch`
// (sequences): parallel degrees and schedule, pipeline_microbatches auto, sequence_parallel
// where tensor > 1, parallel.context, sharding.stage, sharding.offload, sharding.hybrid,
// data.micro_batch_size, data.global_batch_size,
// data.grad_accum_steps auto, training.recompute. Relative model.config, data.train.path and
// device-profile file paths are rewritten to resolve from `output_path`'s directory (those
// from the file were relative to the spec's directory, those from --set to the working
// directory). A header comment names the source spec and says which values `accel plan
// --search` chose. Comments of the input file are not kept (yaml-cpp).
// Errors: InvalidArgument when the text or an override value is not YAML, or an override's
// path runs through a scalar.
absl::StatusOr<std::string> SearchedSpecYaml(const std::string& spec_path,
                                             const std::string& spec_text,
                                             const std::vector<std::string>& overrides,
                                             const planner::Layout& layout, int64_t global_batch,
                                             const std::string& output_path);

}  // namespace accel::cli

#endif  // ACCEL_CLI_SEARCHED_SPEC_H_
