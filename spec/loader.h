#ifndef ACCEL_SPEC_LOADER_H_
#define ACCEL_SPEC_LOADER_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostics.h"
#include "spec/job_spec.h"

namespace accel::spec {

// Options shared by every command that reads a spec.
struct LoadOptions {
  // `--set section.key=value` arguments, applied in order after the file (and after a model
  // config.json), typed and validated like the file. Dotted paths; list items as `key[0]`.
  std::vector<std::string> overrides;
  // Skip the JSON Schema pass (tests of the loader alone use this).
  bool skip_schema = false;
};

// Reads the job file at `path`, checks it, and returns the typed spec, or nullopt when any error
// was reported. Every problem found is added to `sink` (all of them, not just the first), and
// the text of every file read is registered in `sources` for rendering.
// Errors: unreadable/too large/binary files, YAML syntax, duplicate and unknown keys, wrong
// types, enum values, ranges, `auto` where not allowed, missing required fields, bad overrides,
// unreadable or malformed model config.json — each located (file:line:col) and coded
// (common/diag_codes.h).
std::optional<JobSpec> LoadJobSpec(const std::string& path, const LoadOptions& options,
                                   DiagnosticSink& sink, SourceManager& sources);

// The same for text already in memory; `file` names it in diagnostics and is the base for
// relative paths (model.config, data.train.path).
std::optional<JobSpec> LoadJobSpecFromString(std::string_view text, const std::string& file,
                                             const LoadOptions& options, DiagnosticSink& sink,
                                             SourceManager& sources);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_LOADER_H_
