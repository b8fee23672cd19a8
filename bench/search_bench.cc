// Layout search speed: `accel plan --search` on Llama-2-70B (examples/specs/
// llama-2-70b_16x8xh100_3d.yaml) scaled to NODES nodes of 8 H100s with --set cluster.nodes.
// Every candidate is planned by the planner in summary mode (planner/layout_search.h), or with
// --full by the full planner (every rank, group, unit and op listed, as before the summary mode
// existed), on one thread per hardware thread. Prints the counts, the search time (the winner's
// full replan included) and candidates/s, and the winner. Issue 10's targets: >= 10,000
// candidates/s, a 70B model on 1,024 GPUs in under 1 s.
//
// --all plans the dominated recompute/offload variants too (SearchOptions.skip_dominated off).
//
// Usage: accel_search_bench [--full] [--all] [NODES...]   (default: 16 128; run from the
// repository root)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "common/diagnostics.h"
#include "planner/layout_search.h"
#include "spec/loader.h"

namespace {

constexpr const char* kSpec = "examples/specs/llama-2-70b_16x8xh100_3d.yaml";

int SearchOnce(int64_t nodes, const accel::planner::SearchOptions& options) {
  accel::DiagnosticSink sink;
  accel::SourceManager sources;
  accel::spec::LoadOptions load;
  load.overrides = {"cluster.nodes=" + std::to_string(nodes)};
  auto job = accel::spec::LoadJobSpec(kSpec, load, sink, sources);
  if (!job) {
    std::fprintf(stderr, "%s", accel::RenderText(sink.diagnostics(), sources).c_str());
    return 1;
  }
  auto result = accel::planner::SearchLayouts(*job, options);
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  const double rate = result->seconds > 0 ? result->enumerated / result->seconds : 0;
  std::printf("llama-2-70b on %lld GPUs%s: %lld candidates, %lld valid, %lld fit, %lld dominated "
              "(not planned); search %.3f s, %.0f candidates/s",
              static_cast<long long>(job->world_size()), options.summary_only ? "" : " (full plans)",
              static_cast<long long>(result->enumerated), static_cast<long long>(result->valid),
              static_cast<long long>(result->fitting), static_cast<long long>(result->dominated),
              result->seconds, rate);
  if (!result->ranked.empty()) {
    const auto& w = result->ranked.front();
    std::printf("; winner %s stage %lld offload %s micro %lld %s, %.3f s/step",
                accel::planner::DegreesText(w.layout).c_str(),
                static_cast<long long>(w.layout.sharding_stage),
                accel::spec::Name(w.layout.offload),
                static_cast<long long>(w.layout.micro_batch_size),
                accel::spec::Name(w.layout.recompute), w.step_time.step_seconds());
  }
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  accel::planner::SearchOptions options;
  std::vector<int64_t> nodes;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--full") {
      options.summary_only = false;
    } else if (std::string(argv[i]) == "--all") {
      options.skip_dominated = false;
    } else {
      nodes.push_back(std::atoll(argv[i]));
    }
  }
  if (nodes.empty()) nodes = {16, 128};
  std::printf("%u planning threads\n", std::max(1u, std::thread::hardware_concurrency()));
  for (int64_t n : nodes) {
    if (SearchOnce(n, options) != 0) return 1;
  }
  return 0;
}
