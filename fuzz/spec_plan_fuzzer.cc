// libFuzzer target: a job file as `accel validate` and `accel plan` read it. The bytes are loaded
// as YAML with the JSON Schema check; a spec that loads is planned, the plan must verify
// (ir::VerifyPlan) and survive the plan writers and a binary round trip, as `accel plan` would
// print it. Diagnostics are rendered in every format the CLI offers.
//
// Invariants (a violation aborts, i.e. is a finding): the loader returns a spec exactly when it
// reported no error; a plan the planner calls ok has no error diagnostics and verifies; the binary
// plan parses back to the same message.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "fuzz/fuzz_util.h"
#include "ir/graph_export.h"
#include "ir/plan_verifier.h"
#include "ir/plan_writer.h"
#include "planner/planner.h"
#include "spec/loader.h"

namespace {

// The spec's name in diagnostics and the base of relative paths (model.config): the examples'
// directory, so `config: ../models/<name>/config.json` reads the repository's configs.
const std::string& SpecFile() {
  static const std::string file = std::string(ACCEL_SOURCE_ROOT) + "/examples/specs/fuzz.yaml";
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace accel;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DiagnosticSink sink;
  SourceManager sources;
  std::optional<spec::JobSpec> job =
      spec::LoadJobSpecFromString(text, SpecFile(), spec::LoadOptions{}, sink, sources);
  ACCEL_FUZZ_CHECK(job.has_value() == !sink.HasErrors(),
                   "loader returned " + std::string(job ? "a spec" : "no spec") + " with " +
                       std::to_string(sink.error_count()) + " errors");
  if (job) {
    planner::PlanResult result = planner::BuildPlan(*job, planner::PlanOptions{}, sink);
    if (result.ok) {
      ACCEL_FUZZ_CHECK(!sink.HasErrors(), "plan is ok but errors were reported");
      std::vector<std::string> violations = ir::VerifyPlan(result.plan);
      ACCEL_FUZZ_CHECK(violations.empty(), "planned job does not verify: " + violations.front());
      const std::string binary = ir::PlanToBinary(result.plan);
      ir::Plan reread;
      ACCEL_FUZZ_CHECK(reread.ParseFromString(binary), "binary plan does not parse back");
      ACCEL_FUZZ_CHECK(ir::PlanToBinary(reread) == binary, "binary plan round trip differs");
      (void)ir::PlanSummary(result.plan);
      (void)ir::PlanToJson(result.plan);
      (void)ir::PlanToTextproto(result.plan);
      (void)ir::PlanToDot(result.plan);
    }
  }
  (void)RenderText(sink.diagnostics(), sources);
  (void)RenderJson(sink.diagnostics());
  (void)RenderGithub(sink.diagnostics());
  return 0;
}
