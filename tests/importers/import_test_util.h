// Helpers shared by the importer tests: run one import in memory and render what it reported.
#ifndef ACCEL_TESTS_IMPORTERS_IMPORT_TEST_UTIL_H_
#define ACCEL_TESTS_IMPORTERS_IMPORT_TEST_UTIL_H_

#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "importers/importer.h"

namespace accel::importers::testing {

// The test model: a small llama (8 heads, 8 kv heads, 8 layers, 128K positions) that every
// corpus layout fits on an 80 GB device with.
inline std::string TinyModel() {
  return std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/import/models/llama-tiny/config.json";
}

// Where the tests pretend to write specs: model and data paths come out relative to it.
// A mixtral config.json of the same size with 64 routed experts (top-2), for imported jobs with
// expert parallelism.
inline std::string TinyMoeModel() {
  return std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/import/models/moe-tiny/config.json";
}

inline std::string SpecPath() { return std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/import/job.yaml"; }

struct Imported {
  std::optional<std::string> yaml;
  DiagnosticSink sink;
  SourceManager sources;
  std::string messages;  // RenderText of every diagnostic
};

// The options Import uses: the tiny model, data `data/train.txt` next to the spec, and the spec's
// directory as the directory the source tool runs from (so torchtitan's relative paths come out
// as the config writes them).
inline ImportOptions TestOptions() {
  ImportOptions options;
  options.model_config = TinyModel();
  options.data_path = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/import/data/train.txt";
  options.output_path = SpecPath();
  options.launch_dir = std::string(ACCEL_SOURCE_ROOT) + "/tests/testdata/import";
  return options;
}

// Imports `text` named `file` with `options`.
inline Imported Import(std::string_view text, const std::string& file,
                       const ImportOptions& options = TestOptions()) {
  Imported out;
  out.yaml = ImportConfigText(text, file, options, out.sink, out.sources).spec_yaml;
  out.messages = RenderText(out.sink.diagnostics(), out.sources);
  return out;
}

}  // namespace accel::importers::testing

#endif  // ACCEL_TESTS_IMPORTERS_IMPORT_TEST_UTIL_H_
