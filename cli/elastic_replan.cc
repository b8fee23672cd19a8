#include "cli/elastic_replan.h"

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/compile_job.h"
#include "cli/pre_launch_checks.h"
#include "common/diagnostics.h"
#include "ir/plan_writer.h"

namespace accel::cli {
namespace {

int64_t AxisSize(const ir::Plan& plan, const std::string& name) {
  for (const ir::MeshAxis& axis : plan.mesh().axes()) {
    if (axis.name() == name) return axis.size();
  }
  return 1;
}

// The note the re-planned plan carries (plan.txt, `accel plan`'s notes).
ir::PlanNote ShrinkNote(const ir::Plan& before, const ir::Plan& after, int restart) {
  ir::PlanNote note;
  note.set_severity(ir::SEVERITY_NOTE);
  const std::string when =
      restart > 0 ? absl::StrCat("elastic restart ", restart, ": the job goes on with ")
                  : "if nodes are lost (--min-nodes), the job goes on with ";
  note.set_message(absl::StrFormat(
      "%s%d of %d nodes: data parallel %d -> %d; the global batch of %d sequences is kept by "
      "gradient accumulation %d -> %d (micro batch %d)",
      when, after.topology().nodes(), before.topology().nodes(), before.batch().data_parallel_size(),
      after.batch().data_parallel_size(), after.batch().global_batch_size(), before.batch().grad_accum_steps(),
      after.batch().grad_accum_steps(), after.batch().micro_batch_size()));
  return note;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ShrinkOverrides(const ir::Plan& launch_plan, int nodes) {
  const ir::Batch& batch = launch_plan.batch();
  const int64_t replicate = AxisSize(launch_plan, "dp_replicate");
  const int64_t shard = AxisSize(launch_plan, "dp_shard");
  const int64_t replica_ranks = launch_plan.topology().world_size() / (replicate * shard);
  const int64_t ranks = nodes * launch_plan.topology().devices_per_node();
  if (ranks % replica_ranks != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d %s %d ranks, not a multiple of the %d ranks of one data-parallel replica "
        "(tensor x pipeline x context)",
        nodes, nodes == 1 ? "node holds" : "nodes hold", ranks, replica_ranks));
  }
  const int64_t dp = ranks / replica_ranks;
  int64_t new_replicate = dp;
  int64_t new_shard = 1;
  if (shard > 1 && replicate == 1) {
    new_replicate = 1;
    new_shard = dp;
  } else if (shard > 1) {
    if (dp % shard != 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%d nodes give a data-parallel degree of %d, not a multiple of the shard degree %d that "
          "hybrid sharding keeps",
          nodes, dp, shard));
    }
    new_replicate = dp / shard;
    new_shard = shard;
  }
  std::vector<std::string> overrides = {
      absl::StrCat("cluster.nodes=", nodes),
      absl::StrCat("parallel.data_replicate=", new_replicate),
      absl::StrCat("parallel.data_shard=", new_shard),
      absl::StrCat("data.micro_batch_size=", batch.micro_batch_size()),
      absl::StrCat("data.global_batch_size=", batch.global_batch_size()),
      "data.grad_accum_steps=auto"};
  if (AxisSize(launch_plan, "pp") > 1) overrides.push_back("parallel.pipeline_microbatches=auto");
  return overrides;
}

absl::StatusOr<exec::ReplannedJob> ReplanForNodes(const std::string& spec_file,
                                                  const std::vector<std::string>& overrides,
                                                  const ir::Plan& launch_plan, int nodes, int restart,
                                                  const exec::ExecutorCapabilities& capabilities) {
  absl::StatusOr<std::vector<std::string>> shrink = ShrinkOverrides(launch_plan, nodes);
  if (!shrink.ok()) return shrink.status();
  std::vector<std::string> all = overrides;
  all.insert(all.end(), shrink->begin(), shrink->end());
  SourceManager sources;
  DiagnosticSink sink;
  CompiledJob compiled = CompileJob(spec_file, all, {}, sink, sources);
  if (compiled.ok()) CheckBeforeLaunch(compiled.planned.plan, *compiled.job, capabilities, sink);
  if (!compiled.ok() || sink.HasErrors()) {
    std::vector<std::string> errors;
    for (const Diagnostic& d : sink.diagnostics()) {
      if (d.severity == Severity::kError) errors.push_back(absl::StrCat(d.message, " (", d.code, ")"));
    }
    return absl::InvalidArgumentError(absl::StrJoin(errors, "; "));
  }
  exec::ReplannedJob job;
  job.plan = std::move(compiled.planned.plan);
  *job.plan.add_notes() = ShrinkNote(launch_plan, job.plan, restart);
  job.summary = ir::PlanSummary(job.plan);
  return job;
}

}  // namespace accel::cli
