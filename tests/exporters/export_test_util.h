// Helpers shared by the exporter tests: an example job compiled as `accel plan` compiles it.
#ifndef ACCEL_TESTS_EXPORTERS_EXPORT_TEST_UTIL_H_
#define ACCEL_TESTS_EXPORTERS_EXPORT_TEST_UTIL_H_

#include <catch2/catch.hpp>

#include <string>

#include "cli/compile_job.h"
#include "common/diagnostics.h"

namespace accel::exporters::testing {

inline std::string Example(const std::string& name) {
  return std::string(ACCEL_SOURCE_ROOT) + "/examples/specs/" + name;
}

// Loads and plans `path`; fails the test (with the diagnostics) when it does not plan.
inline cli::CompiledJob Compile(const std::string& path) {
  DiagnosticSink sink;
  SourceManager sources;
  cli::CompiledJob job = cli::CompileJob(path, {}, planner::PlanOptions{}, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job.ok());
  return job;
}

}  // namespace accel::exporters::testing

#endif  // ACCEL_TESTS_EXPORTERS_EXPORT_TEST_UTIL_H_
