// The planner's summary mode (PlanOptions.summary_only, what the layout search plans with)
// against full plans: for every layout the search enumerates for the example specs, the same
// validity and diagnostics, and a plan equal to the full plan without the per-rank,
// per-parameter and per-op tables and the formula texts. A rule the summary mode skipped would
// show up here as a candidate valid in one mode and not in the other.
#include <google/protobuf/util/message_differencer.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <sstream>

#include "common/diag_codes.h"
#include "planner/layout_search.h"
#include "planner/planner.h"
#include "planner_test_util.h"
#include "spec/loader.h"

namespace accel::planner {
namespace {

namespace fs = std::filesystem;

// One plan with everything reported while making it.
struct Built {
  PlanResult result;
  std::string diagnostics;  // every field of every diagnostic, notes included
  std::set<std::string> error_codes;
};

std::string Describe(const std::vector<Diagnostic>& diagnostics) {
  std::ostringstream out;
  for (const Diagnostic& d : diagnostics) {
    out << SeverityName(d.severity) << " " << d.code << " " << d.file << ":" << d.location.line
        << ":" << d.location.column << " " << d.field << " [" << d.origin << "] " << d.message
        << "\n";
    for (const DiagnosticNote& n : d.notes) {
      out << "  note " << n.file << ":" << n.location.line << " " << n.message << "\n";
    }
  }
  return out.str();
}

Built Plan(const spec::JobSpec& job, bool summary, bool allow_not_fitting,
           ModelParamsCache* cache = nullptr) {
  DiagnosticSink sink;
  PlanOptions options;
  options.summary_only = summary;
  options.allow_not_fitting = allow_not_fitting;
  options.model_params_cache = cache;
  Built out;
  out.result = BuildPlan(job, options, sink);
  out.diagnostics = Describe(sink.diagnostics());
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.severity == Severity::kError) out.error_codes.insert(d.code);
  }
  return out;
}

// Formula, source and description texts: the summary mode leaves them out (numbers are
// compared), and the step time's copy of the device profile.
void ClearExplanations(ir::Plan& plan) {
  for (ir::MemoryEstimate& m : *plan.mutable_memory()) {
    for (auto* terms : {m.mutable_device(), m.mutable_host()}) {
      for (ir::MemoryTerm& t : *terms) {
        t.clear_formula();
        t.clear_source();
      }
    }
  }
  if (!plan.has_step_time()) return;
  plan.mutable_step_time()->clear_profile();
  for (ir::CommunicationTime& t : *plan.mutable_step_time()->mutable_communication()) {
    t.clear_formula();
    t.clear_what();
  }
}

// The full plan without what the summary mode does not write.
ir::Plan Summarized(const ir::Plan& full) {
  ir::Plan plan = full;
  plan.clear_ranks();
  plan.clear_process_groups();
  // Only messages the full plan has: a plan that failed early has no sharding or pipeline.
  if (plan.has_sharding()) {
    plan.mutable_sharding()->clear_units();
    plan.mutable_sharding()->clear_buckets();
  }
  if (plan.has_training()) plan.mutable_training()->clear_recompute_modules();
  plan.clear_resolved();  // the resolved values, which only a shown plan lists
  if (plan.has_pipeline()) {
    for (ir::PipelineStage& stage : *plan.mutable_pipeline()->mutable_stages()) stage.clear_ops();
  }
  ClearExplanations(plan);
  return plan;
}

// Plans `job` both ways and checks they agree; returns the full plan's error codes.
std::set<std::string> CheckBothModes(const spec::JobSpec& job, bool allow_not_fitting,
                                     ModelParamsCache& cache) {
  const Built full = Plan(job, false, allow_not_fitting);
  const Built summary = Plan(job, true, allow_not_fitting, &cache);
  CHECK(summary.result.ok == full.result.ok);
  CHECK(summary.result.last_pass == full.result.last_pass);
  CHECK(summary.diagnostics == full.diagnostics);
  ir::Plan got = summary.result.plan;
  ClearExplanations(got);
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  const bool equal = differencer.Compare(Summarized(full.result.plan), got);
  INFO(diff);
  CHECK(equal);
  CHECK(summary.result.plan.ranks_size() == 0);
  CHECK(summary.result.plan.process_groups_size() == 0);
  CHECK(summary.result.plan.sharding().units_size() == 0);
  return full.error_codes;
}

struct InRepoRoot {
  InRepoRoot() { REQUIRE(chdir(ACCEL_SOURCE_ROOT) == 0); }
};

spec::JobSpec LoadExample(const fs::path& path, const std::vector<std::string>& overrides) {
  DiagnosticSink sink;
  SourceManager sources;
  spec::LoadOptions load;
  load.overrides = overrides;
  std::optional<spec::JobSpec> job = spec::LoadJobSpec(path.string(), load, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job.has_value());
  return *job;
}

// The spec's global batch, or when it is auto the one the planner resolves (as the search does).
int64_t GlobalBatch(const spec::JobSpec& job) {
  if (!job.data.global_batch_size.is_auto) return job.data.global_batch_size.value;
  DiagnosticSink sink;
  PlanOptions options;
  options.allow_not_fitting = true;
  return BuildPlan(job, options, sink).plan.batch().global_batch_size();
}

TEST_CASE("summary mode: every searched layout of every example plans as in full") {
  InRepoRoot root;
  std::set<std::string> codes;
  int64_t candidates = 0, valid = 0;
  for (const auto& entry : fs::directory_iterator(fs::path("examples") / "specs")) {
    if (entry.path().extension() != ".yaml") continue;
    // At most 16 ranks: the large examples on two nodes.
    spec::JobSpec job = LoadExample(entry.path(), {});
    if (job.world_size() > 16) job = LoadExample(entry.path(), {"cluster.nodes=2"});
    const int64_t global = GlobalBatch(job);
    INFO(entry.path().string());
    REQUIRE(global > 0);
    // The search's candidates and those its rules leave out (cp that does not divide seq_len,
    // offload below its stage, hybrid where it is not allowed), so the summary mode meets the
    // new dimensions' rules too.
    const std::vector<Layout> layouts = EnumerateLayouts(job, global, /*apply_rules=*/false);
    // Every layout of the small jobs; an even sample of at most 400 of the others.
    const size_t step = std::max<size_t>(1, layouts.size() / 400);
    ModelParamsCache cache;
    for (size_t i = 0; i < layouts.size(); i += step) {
      INFO(entry.path().string() << " layout " << DegreesText(layouts[i]) << " stage "
                                 << layouts[i].sharding_stage << " micro "
                                 << layouts[i].micro_batch_size << " "
                                 << spec::Name(layouts[i].recompute) << " "
                                 << spec::Name(layouts[i].schedule) << " offload "
                                 << spec::Name(layouts[i].offload) << " hybrid "
                                 << layouts[i].hybrid);
      const std::set<std::string> seen =
          CheckBothModes(ApplyLayout(job, layouts[i], global), false, cache);
      codes.insert(seen.begin(), seen.end());
      ++candidates;
      valid += seen.empty();
    }
  }
  std::string seen;
  for (const std::string& code : codes) seen += code + " ";
  INFO(candidates << " candidates, " << valid << " valid; errors " << seen);
  CHECK(candidates > 2000);
  CHECK(valid > 500);
  // The candidates break rules of validate-spec, resolve-auto and estimate-memory (the passes
  // that reject layouts), so a rule the summary mode skipped would have been caught above.
  // (E0404 cannot arise here: the examples' key/value heads and tensor degrees are powers of two,
  // so every degree divides the heads or is a multiple of them; the next test covers it.)
  for (const char* code :
       {codes::kHeadsNotDivisible, codes::kTooFewLayers,
        codes::kTooFewMicrobatches, codes::kHybridNeedsReplicate, codes::kHybridNeedsStage3,
        codes::kOffloadNeedsSharding, codes::kParamOffloadNeedsStage3, codes::kDoesNotFit}) {
    INFO("error code " << code);
    CHECK(codes.count(code) == 1);
  }
}

TEST_CASE("summary mode: a layout the full planner rejects is rejected, with the same errors") {
  const std::vector<std::pair<const char*, std::vector<std::string>>> cases = {
      {codes::kHeadsNotDivisible, {"parallel.tensor=16"}},
      {codes::kTooFewLayers, {"parallel.tensor=1", "parallel.pipeline=16"}},
      {codes::kTooFewMicrobatches,
       {"parallel.tensor=1", "parallel.pipeline=2", "data.global_batch_size=16"}},
      {codes::kWorldSizeMismatch, {"parallel.tensor=3"}},
      {codes::kKvHeadsNotDivisible,
       {"model.hidden_size=768", "model.num_heads=12", "parallel.tensor=6", "parallel.data_replicate=1",
        "cluster.nodes=1", "cluster.devices_per_node=6"}},
      {codes::kSequenceParallelNeedsTp, {"parallel.tensor=1", "parallel.sequence_parallel=true"}},
      {codes::kDoesNotFit, {"cluster.device_memory=100MiB"}},
  };
  ModelParamsCache cache;
  for (const auto& [code, overrides] : cases) {
    DiagnosticSink sink;
    SourceManager sources;
    spec::LoadOptions load;
    load.overrides = overrides;
    std::optional<spec::JobSpec> job =
        spec::LoadJobSpecFromString(testing::kBaseSpec, "job.yaml", load, sink, sources);
    REQUIRE(job.has_value());
    INFO("expected " << code);
    const Built summary = Plan(*job, true, false, &cache);
    CHECK_FALSE(summary.result.ok);
    CHECK(summary.error_codes.count(code) == 1);
    CHECK(CheckBothModes(*job, false, cache) == summary.error_codes);
  }
}

TEST_CASE("summary mode: the does-not-fit diagnostic is the full planner's, byte for byte") {
  InRepoRoot root;
  const std::string path = "tests/planner/specs/llama-2-7b_8xa100-40gb_dp.yaml";
  std::string rendered[2];
  for (bool summary : {false, true}) {
    DiagnosticSink sink;
    SourceManager sources;
    std::optional<spec::JobSpec> job = spec::LoadJobSpec(path, {}, sink, sources);
    REQUIRE(job.has_value());
    PlanOptions options;
    options.summary_only = summary;
    CHECK_FALSE(BuildPlan(*job, options, sink).ok);
    rendered[summary] = RenderText(sink.diagnostics(), sources);
  }
  CHECK(rendered[0].find("error[E0501]") != std::string::npos);
  CHECK(rendered[1] == rendered[0]);
}

}  // namespace
}  // namespace accel::planner
