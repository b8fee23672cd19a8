// The body shared by the `accel import` fuzz targets (accelerate_import_fuzzer,
// deepspeed_import_fuzzer, torchtitan_import_fuzzer): one importer on arbitrary bytes.
//
// Invariants (a violation aborts, i.e. is a finding): a spec comes back exactly when no error was
// reported; every diagnostic has a code and a message, and a known location lies inside the text;
// a spec that comes back loads with the repository's loader (YAML, types, ranges, JSON Schema)
// without errors: the importer writes only specs accel reads.
#ifndef ACCEL_FUZZ_IMPORT_FUZZ_H_
#define ACCEL_FUZZ_IMPORT_FUZZ_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "fuzz/fuzz_util.h"
#include "importers/importer.h"
#include "spec/loader.h"

namespace accel::fuzz {

inline int FuzzImport(const uint8_t* data, size_t size, importers::SourceFormat format,
                      const std::string& file) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string root = ACCEL_SOURCE_ROOT;
  importers::ImportOptions options;
  options.model_config = root + "/tests/testdata/import/models/llama-tiny/config.json";
  options.data_path = root + "/tests/testdata/import/data/train.txt";
  options.output_path = root + "/tests/testdata/import/job.yaml";
  options.format = format;
  DiagnosticSink sink;
  SourceManager sources;
  importers::ImportResult result = importers::ImportConfigText(text, file, options, sink, sources);
  ACCEL_FUZZ_CHECK(result.spec_yaml.has_value() == !sink.HasErrors(), "spec and errors disagree");
  int lines = 1;
  for (char c : text) lines += c == '\n';
  for (const Diagnostic& d : sink.diagnostics()) {
    ACCEL_FUZZ_CHECK(!d.code.empty() && !d.message.empty(), "diagnostic without code or message");
    ACCEL_FUZZ_CHECK(!d.location.known() || (d.location.line <= lines && d.location.column >= 1),
                     d.code + " located outside the text: line " + std::to_string(d.location.line));
  }
  (void)RenderText(sink.diagnostics(), sources);
  if (!result.spec_yaml) return 0;
  DiagnosticSink load;
  SourceManager load_sources;
  std::optional<spec::JobSpec> job = spec::LoadJobSpecFromString(
      *result.spec_yaml, options.output_path, spec::LoadOptions{}, load, load_sources);
  ACCEL_FUZZ_CHECK(job.has_value() && !load.HasErrors(),
                   "imported spec does not load:\n" + RenderText(load.diagnostics(), load_sources) +
                       "\n" + *result.spec_yaml);
  return 0;
}

}  // namespace accel::fuzz

#endif  // ACCEL_FUZZ_IMPORT_FUZZ_H_
