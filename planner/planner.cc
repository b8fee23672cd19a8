#include "planner/planner.h"

#include <google/protobuf/arena.h>

#include <memory>

#include "ir/plan_verifier.h"
#include "planner/pass.h"

namespace accel::planner {

std::vector<std::unique_ptr<Pass>> DefaultPasses() {
  std::vector<std::unique_ptr<Pass>> passes;
  passes.push_back(MakeValidateSpecPass());
  passes.push_back(MakeResolveAutoPass());
  passes.push_back(MakeBuildMeshPass());
  passes.push_back(MakeAssignStagesPass());
  passes.push_back(MakeBuildShardGroupsPass());
  passes.push_back(MakeSchedulePipelinePass());
  passes.push_back(MakeEstimateMemoryPass());
  passes.push_back(MakeEstimateStepTimePass());
  return passes;
}

std::vector<std::string> PassNames() {
  std::vector<std::string> names;
  for (const auto& pass : DefaultPasses()) names.emplace_back(pass->name());
  return names;
}

bool IsPassName(const std::string& name) {
  for (const std::string& n : PassNames()) {
    if (n == name) return true;
  }
  return false;
}

namespace {

// Runs the passes on `context`; fills everything of `result` but the plan.
void RunPasses(PlanContext& context, const PlanOptions& options, DiagnosticSink& sink,
               PlanResult& result) {
  context.set_allow_not_fitting(options.allow_not_fitting);
  context.set_summary_only(options.summary_only);
  context.set_step_time_only_if_fits(options.step_time_only_if_fits);
  if (options.model_params_cache != nullptr) {
    context.set_shard_totals_cache(options.shard_totals_cache);
  }
  context.set_model_params_cache(options.model_params_cache);
  context.plan().set_ir_version(ir::IR_VERSION_CURRENT);
  const int errors_before = sink.error_count();
  for (const auto& pass : DefaultPasses()) {
    context.set_current_pass(pass->name());
    pass->Run(context);
    result.last_pass = std::string(pass->name());
    if (sink.error_count() > errors_before) break;
    if (options.verify_each_pass && !options.summary_only) {
      for (std::string& violation : ir::VerifyPlan(context.plan())) {
        result.verifier_violations.push_back(result.last_pass + ": " + violation);
      }
    }
    if (!options.dump_after.empty() && pass->name() == options.dump_after) break;
  }
  result.ok = sink.error_count() == errors_before && result.verifier_violations.empty();
}

}  // namespace

PlanResult BuildPlan(const spec::JobSpec& spec, const PlanOptions& options, DiagnosticSink& sink) {
  PlanContext context(spec, sink);
  PlanResult result;
  RunPasses(context, options, sink, result);
  result.plan = std::move(context.plan());
  return result;
}

namespace {

// The arena of one inspected plan. The layout search builds tens of thousands of plans a second
// on each thread; starting each in a block this thread reuses, large enough for a whole plan of
// a large model (about 100 KiB), spares the allocator the arena's growth from 256 B blocks,
// which took a tenth of the search's time (perf, 2026-11-28).
google::protobuf::ArenaOptions ReusedBlockOptions() {
  constexpr size_t kBlockBytes = 256 << 10;
  thread_local std::unique_ptr<char[]> block(new char[kBlockBytes]);
  google::protobuf::ArenaOptions options;
  options.initial_block = block.get();
  options.initial_block_size = kBlockBytes;
  options.start_block_size = 64 << 10;
  return options;
}

}  // namespace

bool BuildPlanAndInspect(const spec::JobSpec& spec, const PlanOptions& options,
                         DiagnosticSink& sink, const std::function<void(const ir::Plan&)>& inspect) {
  // One plan at a time per thread: the arena is destroyed (and the block free again) on return.
  google::protobuf::Arena arena(ReusedBlockOptions());
  PlanContext context(spec, sink, google::protobuf::Arena::CreateMessage<ir::Plan>(&arena));
  PlanResult result;
  RunPasses(context, options, sink, result);
  inspect(context.plan());
  return result.ok;
}

void CheckSpec(const spec::JobSpec& spec, DiagnosticSink& sink) {
  BuildPlan(spec, PlanOptions{}, sink);
}

}  // namespace accel::planner
