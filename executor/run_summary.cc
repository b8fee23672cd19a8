#include "executor/run_summary.h"

#include <torch/torch.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/durable_file.h"
#include "common/status_macros.h"
#include "executor/memory/memory_report.h"
#include "executor/run_metrics.h"
#include "executor/step_report.h"
#include "ir/enum_names.h"

namespace accel::exec {
namespace {

// Every rank's measured memory, gathered on all ranks (one all-reduce of 3 numbers per rank).
absl::StatusOr<std::vector<RankMemory>> GatherRankMemory(RunState& s, const LoopOutcome& o) {
  const int world = s.env.world_size;
  torch::Tensor values = torch::zeros({world, 3}, torch::TensorOptions().dtype(torch::kDouble));
  values[s.env.rank][0] = static_cast<double>(o.peak_tensor_bytes);
  values[s.env.rank][1] = static_cast<double>(PeakResidentBytes());
  values[s.env.rank][2] = static_cast<double>(o.peak_reserved_bytes);
  torch::Tensor on_device = values.to(s.device);
  ACCEL_RETURN_IF_ERROR(s.world.AllReduce(on_device, ReduceOp::kSum));
  values = on_device.cpu();
  std::vector<RankMemory> out;
  for (int r = 0; r < world; ++r) {
    RankMemory m;
    m.rank = r;
    m.stage = s.plan.ranks(r).stage();
    m.peak_tensor_bytes = static_cast<int64_t>(values[r][0].item<double>());
    m.peak_resident_bytes = static_cast<int64_t>(values[r][1].item<double>());
    m.peak_reserved_bytes = static_cast<int64_t>(values[r][2].item<double>());
    m.cuda = s.measure_cuda;
    out.push_back(m);
  }
  return out;
}

// Pipeline only: per stage, the share of its schedule time its ranks spent blocked in
// receives, gathered on every rank (one all-reduce).
absl::StatusOr<std::vector<double>> GatherPipelineWait(RunState& s, const LoopOutcome& o) {
  const int stages = s.plan.pipeline().stages_size();
  torch::Tensor sums = torch::zeros({stages, 2}, torch::TensorOptions().dtype(torch::kDouble));
  const int stage = s.plan.ranks(s.env.rank).stage();
  sums[stage][0] = o.recv_wait_seconds;
  sums[stage][1] = o.schedule_seconds;
  torch::Tensor on_device = sums.to(s.device);
  ACCEL_RETURN_IF_ERROR(s.world.AllReduce(on_device, ReduceOp::kSum));
  sums = on_device.cpu();
  std::vector<double> out;
  for (int i = 0; i < stages; ++i) {
    const double total = sums[i][1].item<double>();
    out.push_back(total > 0 ? sums[i][0].item<double>() / total : 0);
  }
  return out;
}

// Rank 0's tensor-parallel collectives per timed step next to the plan's count and exposed time
// of its "tp" and "tp_kv" entries (the slowest stage's: with pipelining, maybe not rank 0's).
RunSummary::TensorParallelTime TensorParallelTimeOf(const ir::Plan& plan, const LoopOutcome& o) {
  RunSummary::TensorParallelTime t;
  t.planned_stage = plan.step_time().slowest_stage();
  if (o.timed_steps > 0) {
    t.collectives_per_step = static_cast<double>(o.tp_comm_calls) / static_cast<double>(o.timed_steps);
    t.seconds_per_step = o.tp_comm_seconds / static_cast<double>(o.timed_steps);
  }
  for (const ir::CommunicationTime& c : plan.step_time().communication()) {
    if (c.group() != "tp" && c.group() != "tp_kv") continue;
    t.planned_collectives_per_step += c.calls();
    t.planned_exposed_seconds += c.exposed_seconds();
  }
  return t;
}

// rank 0 writes run_dir/summary.json: steps, loss, throughput and memory measured per rank next
// to the plan's estimate.
absl::Status WriteSummary(const RunState& s, const LoopOutcome& o, double mean_tps,
                          const std::vector<RankMemory>& memory, const std::vector<double>& pipeline_wait) {
  if (s.env.run_dir.empty()) return absl::OkStatus();
  RunSummary summary;
  summary.steps_done = s.trainer.step();
  summary.steps_this_run = s.trainer.step() - o.first_step_of_run + 1;
  summary.final_loss = o.last_loss;
  summary.tokens_per_second = mean_tps;
  summary.world_size = s.env.world_size;
  summary.stopped = o.stopped;
  if (s.measure_tensors || s.measure_cuda) summary.memory_json = MemoryReportJson(s.plan, memory);
  if (!pipeline_wait.empty()) {
    summary.planned_bubble = s.plan.pipeline().bubble_fraction();
    summary.measured_wait_per_stage = pipeline_wait;
  }
  if (s.tp_timer) summary.tensor_parallel = TensorParallelTimeOf(s.plan, o);
  return WriteFileAtomically(s.env.run_dir, "summary.json", RunSummaryJson(summary));
}

void LogPipelineWait(const RunState& s, const std::vector<double>& pipeline_wait) {
  std::vector<std::string> waits;
  for (double w : pipeline_wait) waits.push_back(absl::StrFormat("%.1f%%", 100 * w));
  WorkerLog(absl::StrFormat("pipeline: %s schedule, planned bubble %.1f%%; time blocked in receives per stage %s",
                            std::string(ir::Name(s.plan.pipeline().schedule())),
                            100 * s.plan.pipeline().bubble_fraction(),
                            absl::StrJoin(waits, " ")));
}

void LogTensorParallelTime(const RunState& s, const LoopOutcome& o) {
  const RunSummary::TensorParallelTime t = TensorParallelTimeOf(s.plan, o);
  const std::string stage = t.planned_stage == s.plan.ranks(0).stage()
                                ? std::string()
                                : absl::StrCat(" on stage ", t.planned_stage);
  WorkerLog(absl::StrFormat("tensor parallel: %.0f collectives per step on rank 0 took %.1f ms per step "
                            "(the plan counts %d%s, exposed %.1f ms)",
                            t.collectives_per_step, 1000 * t.seconds_per_step,
                            t.planned_collectives_per_step, stage, 1000 * t.planned_exposed_seconds));
}

}  // namespace

absl::Status ReportRunEnd(RunState& s, const LoopOutcome& o, WorkerClock::time_point started) {
  const bool pipeline = s.plan.pipeline().stages_size() > 1;
  std::vector<RankMemory> memory;
  if (s.measure_tensors || s.measure_cuda) {
    ACCEL_ASSIGN_OR_RETURN(memory, GatherRankMemory(s, o));
  }
  std::vector<double> pipeline_wait;
  if (pipeline) {
    ACCEL_ASSIGN_OR_RETURN(pipeline_wait, GatherPipelineWait(s, o));
  }
  if (s.env.rank != 0) return absl::OkStatus();
  const int64_t tokens_per_step = s.plan.batch().tokens_per_step();
  const double mean_tps =
      o.timed_seconds > 0 ? o.timed_steps * tokens_per_step / o.timed_seconds : 0;
  WorkerLog(absl::StrFormat("%s after step %d of %d in %.1f s", o.stopped ? "stopped" : "done",
                            s.trainer.step(), s.plan.batch().steps(),
                            SecondsOf(WorkerClock::now() - started)));
  if (s.measure_tensors || s.measure_cuda) WorkerLog(MemorySummaryLine(s.plan, memory));
  if (pipeline) LogPipelineWait(s, pipeline_wait);
  if (s.tp_timer) LogTensorParallelTime(s, o);
  // The checkpoint a resume would continue, not just the directory (which may hold none of this
  // run's: checkpoint.at_end false, or other runs' only).
  const std::optional<CheckpointInfo> newest = s.store.NewestOfRun();
  const std::string saved = newest.has_value() ? absl::StrCat("newest checkpoint ", newest->path)
                                               : std::string("no checkpoint of this run");
  WorkerLog(absl::StrFormat(
      "summary: %d steps this run, final loss %.4f, %.0f tokens/s mean (%d ranks), peak RSS "
      "%.1f MiB on rank 0, %s",
      s.trainer.step() - o.first_step_of_run + 1, o.last_loss, mean_tps, s.env.world_size,
      static_cast<double>(PeakResidentBytes()) / (1024.0 * 1024.0), saved));
  return WriteSummary(s, o, mean_tps, memory, pipeline_wait);
}

}  // namespace accel::exec
