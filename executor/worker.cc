#include "executor/worker.h"

#include <signal.h>
#include <unistd.h>
#include <torch/torch.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "checkpoint/checkpoint_store.h"
#include "common/status_macros.h"
#include "data/plan_tokens.h"
#include "executor/blas_threads.h"
#include "executor/checkpointing.h"
#include "executor/host_malloc.h"
#include "executor/memory/counting_allocator.h"
#include "executor/memory/cuda_memory.h"
#include "executor/models/model_config.h"
#include "executor/plan_trainer.h"
#include "executor/run_metrics.h"
#include "executor/run_summary.h"
#include "executor/sampling.h"
#include "executor/step_report.h"
#include "executor/trainer_options.h"
#include "executor/worker_log.h"
#include "executor/worker_setup.h"
#include "executor/worker_state.h"
#include "launcher/peer_loss_report.h"

namespace accel::exec {

namespace {

// The ACCEL_TEST_CRASH_AT_STEP hook (WorkerOptions::crash_at_step): the chosen rank kills itself
// right after update `done`.
void MaybeCrashForTest(const RunState& s, int64_t done) {
  if (done == s.options.crash_at_step && s.env.rank == s.options.crash_rank) {
    WorkerLog(absl::StrCat("test hook: rank ", s.env.rank, " kills itself after step ", done,
                           " (ACCEL_TEST_CRASH_AT_STEP)"));
    ::kill(::getpid(), SIGKILL);
  }
}

// Every rank stops after the same step: a stop request on any rank is summed over the world.
absl::StatusOr<bool> StopRequested(RunState& s) {
  torch::Tensor flag = torch::full({1}, s.options.stop != nullptr && s.options.stop->load() ? 1.0 : 0.0,
                                   torch::TensorOptions().dtype(torch::kFloat).device(s.device));
  ACCEL_RETURN_IF_ERROR(s.world.AllReduce(flag, ReduceOp::kSum));
  return flag.item<float>() > 0;
}

// Adds a step after this run's first (which pays for lazy initialisation) to the rates of `o`.
void AddTimedStep(const RunState& s, const StepRecord& record, int64_t tp_calls_before,
                  LoopOutcome& o) {
  o.timed_seconds += record.step_seconds;
  ++o.timed_steps;
  o.recv_wait_seconds += s.trainer.last_pipeline_step().recv_wait_seconds;
  o.schedule_seconds += s.trainer.last_pipeline_step().schedule_seconds;
  if (s.tp_timer) {
    o.tp_comm_seconds += *record.tp_comm_seconds;
    o.tp_comm_calls += s.tp_timer->calls() - tp_calls_before;
  }
}

// One optimizer step of grad_accum_steps micro-batches, measured and added to `o`.
absl::StatusOr<StepRecord> RunStep(RunState& s, LoopOutcome& o) {
  const int64_t accumulation = std::max<int64_t>(1, s.plan.batch().grad_accum_steps());
  const auto step_start = WorkerClock::now();
  if (s.measure_tensors) ResetPeakTensorBytes();
  if (s.measure_cuda) ResetCudaPeakMemory(s.device.index());
  std::vector<torch::Tensor> batches = NextMicroBatches(
      s.dataset, s.plan.batch().micro_batch_size(), accumulation, s.device);
  const double tp_seconds_before = s.tp_timer ? s.tp_timer->seconds() : 0;
  const int64_t tp_calls_before = s.tp_timer ? s.tp_timer->calls() : 0;
  ACCEL_ASSIGN_OR_RETURN(StepResult result, s.trainer.Step(batches));
  const double step_seconds = SecondsOf(WorkerClock::now() - step_start);
  StepRecord record = MakeStepRecord(s, result, step_seconds);
  if (s.tp_timer) record.tp_comm_seconds = s.tp_timer->seconds() - tp_seconds_before;
  MaybeCrashForTest(s, record.step);
  if (record.step != o.first_step_of_run) AddTimedStep(s, record, tp_calls_before, o);
  o.last_loss = result.loss;
  o.peak_tensor_bytes = std::max(o.peak_tensor_bytes, record.peak_tensor_bytes.value_or(0));
  o.peak_reserved_bytes = std::max(o.peak_reserved_bytes, record.peak_reserved_bytes.value_or(0));
  return record;
}

// Trains until plan.batch.steps updates are done or a stop is requested; checkpoints every
// checkpoint.every_steps (the final checkpoint is FinishRun's).
absl::StatusOr<LoopOutcome> TrainLoop(RunState& s) {
  const bool leader = s.env.rank == 0;
  MetricsFile metrics;
  if (leader) {
    ACCEL_RETURN_IF_ERROR(metrics.Open(
        s.env.run_dir.empty() ? std::string("metrics.jsonl") : s.env.run_dir + "/metrics.jsonl",
        s.resumed ? s.trainer.step() : -1));
  }
  const int64_t total_steps = s.plan.batch().steps();
  const int64_t every = s.plan.checkpoint().every_steps();
  LoopOutcome o;
  o.first_step_of_run = s.trainer.step() + 1;
  o.last_checkpoint = s.resumed ? s.trainer.step() : -1;
  while (s.trainer.step() < total_steps) {
    ACCEL_ASSIGN_OR_RETURN(const StepRecord record, RunStep(s, o));
    if (leader) {
      metrics.Append(record);
      LogProgress(s, record, o, record.step == o.first_step_of_run);
    }
    if (every > 0 && record.step % every == 0 && record.step != total_steps) {
      ACCEL_RETURN_IF_ERROR(SaveCheckpoint(s));
      o.last_checkpoint = record.step;
    }
    ACCEL_ASSIGN_OR_RETURN(bool stop, StopRequested(s));
    if (stop) {
      o.stopped = true;
      WorkerLog(absl::StrFormat("stop requested: stopping after step %d of %d", record.step,
                                total_steps));
      break;
    }
  }
  return o;
}

// The training.sample_tokens sample at the end of a run that was not stopped; skipped, with a
// line, under pipeline parallelism.
absl::Status SampleAtEnd(RunState& s, const LoopOutcome& o) {
  const bool leader = s.env.rank == 0;
  const int64_t sample_tokens = s.plan.training().sample_tokens();
  const bool pipeline = s.plan.pipeline().stages_size() > 1;
  if (pipeline && sample_tokens > 0 && leader) {
    WorkerLog("sample: skipped (pipeline parallel: no rank holds the whole model)");
  }
  if (o.stopped || sample_tokens <= 0 || pipeline) return absl::OkStatus();
  // Stage 3 holds shards only: every rank gathers, then rank 0 samples without hooks (with
  // tensor parallelism, every rank of each tp group, since the forward communicates).
  ACCEL_RETURN_IF_ERROR(s.trainer.sync().GatherAll());
  s.model->set_unit_hooks(nullptr);
  if (leader || s.model->tensor_parallel().enabled()) {
    // The tokenizer file again (nullptr for bytes): loaded only here, for the sampling ranks.
    ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<tok::Tokenizer> tokenizer, LoadPlanTokenizer(s.plan.data()));
    std::string text = SampleText(*s.model, sample_tokens,
                                  static_cast<uint64_t>(s.plan.training().seed()), s.device,
                                  tokenizer.get());
    if (leader) WorkerLog("sample:\n" + text);
  }
  return absl::OkStatus();
}

// After the loop: the final checkpoint, the sample, the memory report and the summary.
absl::Status FinishRun(RunState& s, const LoopOutcome& o, WorkerClock::time_point started) {
  if (s.trainer.step() > 0 && o.last_checkpoint != s.trainer.step() &&
      !s.plan.checkpoint().skip_final()) {
    ACCEL_RETURN_IF_ERROR(SaveCheckpoint(s));
  }
  ACCEL_RETURN_IF_ERROR(s.world.Barrier());
  ACCEL_RETURN_IF_ERROR(SampleAtEnd(s, o));
  return ReportRunEnd(s, o, started);
}

// Everything after the rendezvous: the model, data and trainer, the resume, the training loop.
absl::StatusOr<WorkerResult> TrainJoined(const ir::Plan& plan, const WorkerEnv& env, const WorkerOptions& options,
                                         const ModelConfig& model_config, const TrainerOptions& trainer_options,
                                         const torch::Device& device, WorkerGroups& g,
                                         WorkerClock::time_point started) {
  const bool cuda = device.is_cuda();
  // Model, identical on every rank (seeded), then data, then the trainer.
  const TimedTensorParallel tp = TimeTensorParallel(plan, g.groups);
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<CausalLm> model,
                         BuildRankModel(plan, env.rank, model_config, tp.tp, device, g.groups.Get("ep")));
  ACCEL_ASSIGN_OR_RETURN(RankData data, LoadRankData(plan, g.groups));
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                         CreateTrainer(plan, model, trainer_options, g.groups, env.rank, tp.tp, tp.tp_kv));
  LogRankSetup(plan, env, *g.world, device, data);

  // The identity every manifest records; env.run_id is `accel run`'s (checkpoint/run_identity.h).
  CheckpointStore store(CheckpointRoot(plan, env),
                        static_cast<int>(std::max<int64_t>(1, plan.checkpoint().keep())),
                        IdentityOfPlan(plan, env.run_id));
  ACCEL_ASSIGN_OR_RETURN(bool resumed,
                         ResumeFromCheckpoint(plan, env.rank, store, *trainer, *data.dataset));
  ACCEL_RETURN_IF_ERROR(StartFromPretrained(plan, env, resumed, *trainer));

  RunState state{plan, env, options, device, *g.world, g.groups, model, *trainer, *data.dataset,
                 store, resumed, CountingCpuAllocatorInstalled() && !cuda,
                 cuda && CudaMemoryStatsAvailable(), tp.timer};
  WorkerLog(absl::StrFormat("setup took %.2f s; training steps %d..%d of %d",
                            SecondsOf(WorkerClock::now() - started), trainer->step() + 1,
                            plan.batch().steps(), plan.batch().steps()));
  ACCEL_ASSIGN_OR_RETURN(LoopOutcome outcome, TrainLoop(state));
  ACCEL_RETURN_IF_ERROR(FinishRun(state, outcome, started));
  WorkerResult out;
  out.steps_done = trainer->step();
  out.stopped = outcome.stopped;
  return out;
}

// A multi-node rank that lost a peer names the ranks that did not survive with it: a roll call
// on the store (Rendezvous::RollCall), worded by launcher/peer_loss_report.h.
absl::Status WithRollCall(const absl::Status& failure, const ir::Plan& plan, const WorkerEnv& env,
                          Rendezvous& rendezvous) {
  constexpr std::chrono::milliseconds kWait(1000);
  RollCall call;
  call.wait_seconds = 1;
  absl::StatusOr<std::vector<int>> silent = rendezvous.RollCall(kWait);
  if (silent.ok()) {
    call.silent_ranks = *std::move(silent);
  } else {
    call.store_answered = false;
    call.wait_seconds = 2;
  }
  std::vector<int> nodes;
  for (const ir::RankPlacement& r : plan.ranks()) nodes.push_back(r.node());
  const std::string store = absl::StrCat(env.master_addr, ":", env.master_port);
  return absl::Status(failure.code(), absl::StrCat(failure.message(), PeerLossReport(nodes, env.rank, store, call)));
}

absl::StatusOr<WorkerResult> RunWorkerImpl(const ir::Plan& plan, const WorkerEnv& env,
                                           const WorkerOptions& options) {
  const auto started = WorkerClock::now();
  at::set_num_threads(std::max(1, env.num_threads));
  SetBlasThreads(env.num_threads);
  RetainFreedHostMemory();  // before the first step allocates (executor/host_malloc.h)

  // Plan and environment must agree before anyone opens a socket.
  ACCEL_RETURN_IF_ERROR(CheckPlanMatchesEnv(plan, env));
  ACCEL_RETURN_IF_ERROR(CheckPlanRunnable(plan));
  ACCEL_ASSIGN_OR_RETURN(ModelConfig model_config, ModelConfigFromPlan(plan.model()));
  ACCEL_ASSIGN_OR_RETURN(TrainerOptions trainer_options, TrainerOptionsFromPlan(plan));
  const bool cuda = plan.topology().device_type() == ir::DEVICE_TYPE_CUDA;
  const torch::Device device = cuda ? torch::Device(torch::kCUDA, env.local_rank)
                                    : torch::Device(torch::kCPU);

  // Rendezvous: rank 0 serves the store; everybody builds the world and the plan's groups.
  ACCEL_ASSIGN_OR_RETURN(WorkerGroups g, JoinGroups(plan, env, options, device));
  absl::StatusOr<WorkerResult> result = TrainJoined(plan, env, options, model_config, trainer_options, device, g, started);
  const bool lost_peer = !result.ok() && (absl::IsUnavailable(result.status()) || absl::IsDeadlineExceeded(result.status()));
  if (!lost_peer || plan.topology().nodes() == 1) return result;
  return WithRollCall(result.status(), plan, env, *g.rendezvous);
}

}  // namespace

absl::Status ReadWorkerTestHooks(const EnvLookup& lookup, WorkerOptions& options) {
  auto read = [&lookup](const char* name) -> absl::StatusOr<std::optional<int64_t>> {
    std::optional<std::string> text = lookup(name);
    if (!text.has_value()) return std::optional<int64_t>();
    std::optional<int64_t> value = ParseInt(*text);
    if (!value.has_value()) {
      return absl::InvalidArgumentError(absl::StrCat(name, "='", *text, "' is not an integer"));
    }
    return value;
  };
  ACCEL_ASSIGN_OR_RETURN(std::optional<int64_t> restart, read("ACCEL_RESTART_COUNT"));
  ACCEL_ASSIGN_OR_RETURN(std::optional<int64_t> step, read("ACCEL_TEST_CRASH_AT_STEP"));
  ACCEL_ASSIGN_OR_RETURN(std::optional<int64_t> in_checkpoint, read("ACCEL_TEST_CRASH_IN_CHECKPOINT"));
  ACCEL_ASSIGN_OR_RETURN(std::optional<int64_t> rank, read("ACCEL_TEST_CRASH_RANK"));
  if (restart.value_or(0) > 0 || (!step.has_value() && !in_checkpoint.has_value())) {
    return absl::OkStatus();
  }
  options.crash_at_step = step.value_or(-1);
  options.crash_in_checkpoint_step = in_checkpoint.value_or(-1);
  options.crash_rank = static_cast<int>(rank.value_or(0));
  return absl::OkStatus();
}

std::chrono::milliseconds CollectiveTimeout(const ir::Plan& plan, const WorkerOptions& options) {
  const int64_t seconds = plan.topology().collective_timeout_seconds();
  return seconds > 0 ? std::chrono::milliseconds(seconds * 1000) : options.collective_timeout;
}

absl::StatusOr<WorkerResult> RunWorker(const ir::Plan& plan, const WorkerEnv& env,
                                       const WorkerOptions& options) {
  // LibTorch and c10d report failures as exceptions; none may cross into the CLI.
  try {
    // Measure tensor bytes on CPU (executor/memory/counting_allocator.h): installed before the
    // model, data and process groups allocate anything.
    if (plan.topology().device_type() != ir::DEVICE_TYPE_CUDA) InstallCountingCpuAllocator();
    return RunWorkerImpl(plan, env, options);
  } catch (const c10::Error& e) {
    return absl::InternalError(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return absl::InternalError(e.what());
  }
}

bool ExecutorHasCuda() {
  try {
    return torch::cuda::is_available();
  } catch (const std::exception&) {
    return false;
  }
}

ExecutorCapabilities ExecutorCapabilitiesOfThisBuild() {
  ExecutorCapabilities c;
  c.cuda = ExecutorHasCuda();
  c.sdpa = SdpaAvailable();
  return c;
}

}  // namespace accel::exec
