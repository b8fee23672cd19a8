// libFuzzer target: a Hugging Face config.json (`model.config` in a job, or
// `accel estimate-memory --model config.json`), read by spec::ParseModelConfig.
//
// Invariants: a config comes back exactly when no issue was reported; every issue has a code and
// a message, and a known location lies inside the text; a config's dimensions are positive
// integers within the limits of the spec fields they set (the planner relies on that).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "fuzz/fuzz_util.h"
#include "spec/field_registry.h"
#include "spec/model_config.h"

namespace {

void CheckDimension(const accel::spec::ModelConfigFile& file, const char* path, int64_t value) {
  bool set = false;
  for (const std::string& f : file.fields) set = set || f == path;
  if (!set) return;
  ACCEL_FUZZ_CHECK(value >= 1, std::string(path) + " = " + std::to_string(value) + " is not positive");
  const accel::spec::FieldInfo* field = accel::spec::FindField(path);
  ACCEL_FUZZ_CHECK(field != nullptr, std::string("no field ") + path);
  ACCEL_FUZZ_CHECK(!field->maximum || static_cast<double>(value) <= *field->maximum,
                   std::string(path) + " = " + std::to_string(value) + " is above its limit");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  spec::ModelConfigResult result = spec::ParseModelConfig(text);
  ACCEL_FUZZ_CHECK(result.config.has_value() == result.issues.empty(),
                   "config and issues disagree");
  int lines = 1;
  for (char c : text) lines += c == '\n';
  DiagnosticSink sink;
  SourceManager sources;
  sources.Add("config.json", result.text);
  for (const spec::ModelConfigIssue& issue : result.issues) {
    ACCEL_FUZZ_CHECK(!issue.code.empty() && !issue.message.empty(), "issue without code or message");
    ACCEL_FUZZ_CHECK(!issue.location.known() || (issue.location.line >= 1 && issue.location.line <= lines &&
                                                 issue.location.column >= 1),
                     "issue located outside the text: line " + std::to_string(issue.location.line));
    sink.Error(issue.code, "config.json", issue.location, "", "model config " + issue.message);
  }
  (void)RenderText(sink.diagnostics(), sources);
  if (result.config) {
    const spec::ModelConfigFile& file = *result.config;
    const spec::ModelSpec& m = file.model;
    CheckDimension(file, "model.hidden_size", m.hidden_size);
    CheckDimension(file, "model.num_layers", m.num_layers);
    CheckDimension(file, "model.num_heads", m.num_heads);
    CheckDimension(file, "model.num_kv_heads", m.num_kv_heads);
    CheckDimension(file, "model.ffn_hidden_size", m.ffn_hidden_size);
    CheckDimension(file, "model.vocab_size", m.vocab_size);
    CheckDimension(file, "model.max_seq_len", m.max_seq_len);
  }
  return 0;
}
