// Every example spec exported to each target and imported back with accel's importer for that
// format: the re-imported plan has the original's mesh, batch, sharding, precision and pipeline
// schedule, or the export report names the aspect that differs (approximated or not
// expressible). What a target never carries is supplied as a user would: the model as a
// config.json (--model) and, for torchtitan, whose dump has no world size, the cluster.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <unistd.h>

#include "checkpoint/hf_config.h"
#include "common/durable_file.h"
#include "exporters/exporter.h"
#include "exporters/plan_layout.h"
#include "importers/importer.h"
#include "spec/loader.h"
#include "tests/common/files.h"
#include "tests/exporters/export_test_util.h"

namespace fs = std::filesystem;

namespace accel::exporters {
namespace {

std::vector<fs::path> ExampleSpecs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(ACCEL_SOURCE_ROOT) / "examples/specs")) {
    if (e.path().extension() == ".yaml") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

importers::SourceFormat SourceOf(TargetFormat t) {
  switch (t) {
    case TargetFormat::kDeepSpeed: return importers::SourceFormat::kDeepSpeed;
    case TargetFormat::kAccelerate: return importers::SourceFormat::kAccelerate;
    case TargetFormat::kTorchtitan: return importers::SourceFormat::kTorchtitan;
    case TargetFormat::kMegatron: return importers::SourceFormat::kMegatron;
  }
  return importers::SourceFormat::kDeepSpeed;
}

// A scratch directory for one test case, removed at the end.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("accel_export_rt_" + std::to_string(getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { accel::testing::RemoveDir(path); }
};

// The re-imported job's plan as far as the pipeline schedule (the aspects compared are all
// decided by then; the memory estimate of an importer's assumed device is not compared).
ir::Plan ReimportedPlan(const std::string& text, TargetFormat target, const ir::Plan& original,
                        const fs::path& dir) {
  const fs::path model = dir / "config.json";
  REQUIRE(WriteFileAtomically(model.string(), exec::HuggingFaceConfigJson(original.model(), ir::DTYPE_FP32)).ok());
  importers::ImportOptions options;
  options.format = SourceOf(target);
  options.model_config = model.string();
  options.data_path = (dir / "train.txt").string();
  options.output_path = (dir / "job.yaml").string();
  options.launch_dir = dir.string();
  DiagnosticSink sink;
  SourceManager sources;
  const std::string file = "exported." + std::string(target == TargetFormat::kMegatron ? "sh" :
                                                     target == TargetFormat::kAccelerate ? "yaml" : "json");
  importers::ImportResult imported = importers::ImportConfigText(text, file, options, sink, sources);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(imported.spec_yaml);
  spec::LoadOptions load;
  if (target == TargetFormat::kTorchtitan) {
    load.overrides = {"cluster.nodes=" + std::to_string(original.topology().nodes()),
                      "cluster.devices_per_node=" + std::to_string(original.topology().devices_per_node())};
  }
  std::optional<spec::JobSpec> job =
      spec::LoadJobSpecFromString(*imported.spec_yaml, options.output_path, load, sink, sources);
  INFO(*imported.spec_yaml);
  INFO(RenderText(sink.diagnostics(), sources));
  REQUIRE(job);
  planner::PlanOptions plan_options;
  plan_options.dump_after = "schedule-pipeline";
  planner::PlanResult planned = planner::BuildPlan(*job, plan_options, sink);
  REQUIRE(planned.ok);
  return planned.plan;
}

// One compared aspect: equal, or named by the report.
void Same(const ExportReport& report, std::string_view aspect, int64_t original, int64_t reimported) {
  INFO(aspect << ": original " << original << ", re-imported " << reimported);
  if (original != reimported) CHECK(report.Names(aspect));
}

void Compare(const ir::Plan& a, const ir::Plan& b, const ExportReport& r) {
  const PlanLayout la = ReadLayout(a), lb = ReadLayout(b);
  Same(r, aspect::kDataReplicate, la.dp_replicate, lb.dp_replicate);
  Same(r, aspect::kDataShard, la.dp_shard, lb.dp_shard);
  Same(r, aspect::kContext, la.cp, lb.cp);
  Same(r, aspect::kTensor, la.tp, lb.tp);
  Same(r, aspect::kPipeline, la.pp, lb.pp);
  Same(r, aspect::kExpert, la.ep, lb.ep);
  Same(r, aspect::kGlobalBatch, a.batch().global_batch_size(), b.batch().global_batch_size());
  Same(r, aspect::kMicroBatch, a.batch().micro_batch_size(), b.batch().micro_batch_size());
  Same(r, aspect::kGradAccum, a.batch().grad_accum_steps(), b.batch().grad_accum_steps());
  Same(r, aspect::kStage, a.sharding().stage(), b.sharding().stage());
  Same(r, aspect::kHybrid, a.sharding().hybrid(), b.sharding().hybrid());
  Same(r, aspect::kOffload, a.sharding().offload(), b.sharding().offload());
  Same(r, aspect::kParamDtype, a.precision().param_dtype(), b.precision().param_dtype());
  Same(r, aspect::kComputeDtype, a.precision().compute_dtype(), b.precision().compute_dtype());
  Same(r, aspect::kReduceDtype, a.precision().reduce_dtype(), b.precision().reduce_dtype());
  if (la.pp > 1) {
    Same(r, aspect::kSchedule, a.pipeline().schedule(), b.pipeline().schedule());
    Same(r, aspect::kVirtualStages, a.pipeline().virtual_stages(), b.pipeline().virtual_stages());
  }
}

// Exports `job` to `target`, imports it back and compares.
void RoundTripOne(const cli::CompiledJob& job, TargetFormat target, const fs::path& dir) {
  ExportResult exported = ExportConfig(*job.job, job.planned.plan, target);
  INFO(exported.text);
  INFO(exported.report.Render(""));
  Compare(job.planned.plan, ReimportedPlan(exported.text, target, job.planned.plan, dir), exported.report);
}

void RoundTrip(TargetFormat target) {
  ScratchDir dir;
  const std::vector<fs::path> specs = ExampleSpecs();
  CHECK(specs.size() >= 18);
  for (const fs::path& spec : specs) {
    INFO("example " << spec.filename().string() << " --to " << TargetNames()[static_cast<int>(target)]);
    RoundTripOne(testing::Compile(spec.string()), target, dir.path);
  }
}

// What the examples do not show: interleaved and zero-bubble schedules, GPipe, offload, fp16
// with dynamic loss scaling, ZeRO-1 and -2, as --set overrides of two examples.
TEST_CASE("round trip: schedules, offload, fp16 and ZeRO stages the examples lack", "[exporters][round-trip]") {
  const std::vector<std::pair<const char*, std::vector<std::string>>> kVariants = {
      {"gpt2-mini_cpu8_3d.yaml", {"parallel.pipeline_schedule=interleaved_1f1b"}},
      {"gpt2-mini_cpu8_3d.yaml", {"parallel.pipeline_schedule=zb_h1"}},
      {"gpt2-mini_cpu8_3d.yaml", {"parallel.pipeline_schedule=gpipe"}},
      {"gpt2-mini_cpu4_zero3.yaml", {"sharding.offload=optimizer"}},
      {"gpt2-mini_cpu4_zero3.yaml", {"sharding.offload=all"}},
      {"gpt2-mini_cpu4_zero3.yaml", {"precision.compute=fp16", "precision.loss_scaling=dynamic"}},
      {"gpt2-mini_cpu4_zero3.yaml", {"sharding.stage=2"}},
      {"gpt2-mini_cpu4_zero3.yaml", {"sharding.stage=1"}},
  };
  ScratchDir dir;
  for (const auto& [example, overrides] : kVariants) {
    DiagnosticSink sink;
    SourceManager sources;
    cli::CompiledJob job = cli::CompileJob(testing::Example(example), overrides, planner::PlanOptions{}, sink, sources);
    REQUIRE(job.ok());
    for (TargetFormat target : {TargetFormat::kDeepSpeed, TargetFormat::kAccelerate, TargetFormat::kTorchtitan,
                                TargetFormat::kMegatron}) {
      INFO(example << " --set " << overrides[0] << " --to " << TargetNames()[static_cast<int>(target)]);
      RoundTripOne(job, target, dir.path);
    }
  }
}

TEST_CASE("round trip: every example through DeepSpeed JSON", "[exporters][round-trip]") {
  RoundTrip(TargetFormat::kDeepSpeed);
}

TEST_CASE("round trip: every example through Accelerate YAML", "[exporters][round-trip]") {
  RoundTrip(TargetFormat::kAccelerate);
}

TEST_CASE("round trip: every example through torchtitan JSON", "[exporters][round-trip]") {
  RoundTrip(TargetFormat::kTorchtitan);
}

TEST_CASE("round trip: every example through Megatron-LM arguments", "[exporters][round-trip]") {
  RoundTrip(TargetFormat::kMegatron);
}

}  // namespace
}  // namespace accel::exporters
