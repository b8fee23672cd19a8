#include "executor/worker.h"

#include <signal.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/diagnostics.h"
#include "common/status_macros.h"
#include "executor/blas_threads.h"
#include "executor/checkpoint/checkpoint_store.h"
#include "executor/checkpoint/hf_config.h"
#include "executor/checkpoint/sharded_tensors.h"
#include "executor/checkpoint/tp_layout.h"
#include "executor/comm_timer.h"
#include "executor/communicator.h"
#include "executor/data/byte_tokenizer.h"
#include "executor/data/plan_tokens.h"
#include "executor/data/sample_text.h"
#include "executor/data/window_dataset.h"
#include "executor/checkpoint/durable_file.h"
#include "executor/host_malloc.h"
#include "executor/launcher/plan_support.h"
#include "executor/memory/counting_allocator.h"
#include "executor/memory/cuda_memory.h"
#include "executor/memory/memory_report.h"
#include "executor/models/causal_lm.h"
#include "executor/models/model_config.h"
#include "executor/train/trainer.h"
#include "executor/plan_agreement.h"
#include "executor/plan_dtype.h"
#include "executor/process_groups.h"
#include "executor/run_metrics.h"
#include "ir/enum_names.h"
#include "ir/plan_access.h"
#include "ir/plan_verifier.h"

namespace accel::exec {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

int64_t UnixNanos() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// One line on stdout (the rank's log file), flushed so the launcher's echo of rank 0 and a crash
// report show it at once.
void Log(const std::string& line) { std::cout << line << std::endl; }

// JSON number, or null for NaN/inf (which JSON cannot spell).


absl::StatusOr<TrainerOptions> TrainerOptionsFromPlan(const ir::Plan& plan) {
  const ir::Training& t = plan.training();
  TrainerOptions options;
  if (t.optimizer().kind() == ir::OPTIMIZER_KIND_ADAMW) {
    options.optimizer = OptimizerKind::kAdamW;
  } else if (t.optimizer().kind() == ir::OPTIMIZER_KIND_SGD) {
    options.optimizer = OptimizerKind::kSgd;
    options.momentum = t.optimizer().momentum();
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("training.optimizer.kind is ", std::string(ir::Name(t.optimizer().kind())),
                     ": expected adamw or sgd"));
  }
  const ir::LrSchedule& lr = t.lr_schedule();
  options.schedule.peak_lr = t.optimizer().lr();
  options.schedule.warmup_steps = lr.warmup_steps();
  options.schedule.total_steps = std::max<int64_t>(1, lr.total_steps());
  options.schedule.min_lr_ratio = lr.min_lr_ratio();
  options.schedule.cosine = lr.kind() == ir::LR_SCHEDULE_KIND_COSINE;
  options.schedule.linear = lr.kind() == ir::LR_SCHEDULE_KIND_LINEAR;
  if (!options.schedule.cosine && !options.schedule.linear &&
      lr.kind() != ir::LR_SCHEDULE_KIND_CONSTANT) {
    return absl::InvalidArgumentError(
        absl::StrCat("training.lr_schedule.kind is ", std::string(ir::Name(lr.kind())),
                     ": expected constant, linear or cosine"));
  }
  options.beta1 = t.optimizer().beta1();
  options.beta2 = t.optimizer().beta2();
  options.adam_eps = t.optimizer().eps();
  options.weight_decay = t.optimizer().weight_decay();
  options.grad_clip_norm = t.grad_clip_norm();
  const ir::Dtype compute = plan.precision().compute_dtype();
  if (compute == ir::DTYPE_BF16) {
    options.precision = ComputePrecision::kBf16;
  } else if (compute == ir::DTYPE_FP16) {
    options.precision = ComputePrecision::kFp16;
  } else if (compute == ir::DTYPE_UNSPECIFIED || compute == ir::DTYPE_FP32) {
    options.precision = ComputePrecision::kFp32;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "precision.compute is ", std::string(ir::Name(compute)), ": expected fp32, bf16 or fp16"));
  }
  const ir::Precision& precision = plan.precision();
  const ir::LossScaling scaling = precision.loss_scaling();
  if (scaling == ir::LOSS_SCALING_DYNAMIC || scaling == ir::LOSS_SCALING_STATIC) {
    options.loss_scaling.kind =
        scaling == ir::LOSS_SCALING_DYNAMIC ? LossScaling::kDynamic : LossScaling::kStatic;
    options.loss_scaling.initial_scale = precision.initial_loss_scale();
    options.loss_scaling.growth_interval = precision.loss_scale_growth_interval();
  } else if (scaling != ir::LOSS_SCALING_UNSPECIFIED && scaling != ir::LOSS_SCALING_NONE) {
    return absl::InvalidArgumentError(absl::StrCat("precision.loss_scaling is ",
                                                   std::string(ir::Name(scaling)),
                                                   ": expected none, dynamic or static"));
  }
  return options;
}

// Peak resident set size of this process in bytes (getrusage reports KiB on Linux). On CPU
// this is the memory the rank really used; on CUDA it is the host side only.
int64_t PeakResidentBytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

// "1h02m", "3m05s", "42s".
std::string FormatDuration(double seconds) {
  const int64_t s = std::max<int64_t>(0, static_cast<int64_t>(std::llround(seconds)));
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
  if (s >= 60) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

std::string CheckpointRoot(const ir::Plan& plan, const WorkerEnv& env) {
  if (!plan.checkpoint().dir().empty()) return plan.checkpoint().dir();
  return env.run_dir.empty() ? std::string("checkpoints") : env.run_dir + "/checkpoints";
}

// Ids sampled from the model with temperature 0.8, for a look at what it learned, shown as text
// (data/sample_text.h: decoded with the plan's tokenizer file, or as bytes, starting after BOS
// or a newline). Under tensor parallelism every rank of the tp group must call it (the forward
// communicates); the gathered logits and the seed are the same on each, so they draw the same
// ids. Sequence parallelism is off while sampling: contexts of every length are fed, not only
// multiples of tp.
std::string SampleText(CausalLm& model, int64_t count, uint64_t seed, const torch::Device& device,
                       const tok::Tokenizer* tokenizer) {
  torch::NoGradGuard no_grad;
  model.eval();
  SequenceParallelPause pause(model);
  torch::manual_seed(seed);
  std::vector<int64_t> context = SampleContext(tokenizer);
  std::vector<int64_t> sampled;
  const int64_t window = model.config().max_seq_len;
  for (int64_t i = 0; i < count; ++i) {
    int64_t begin = std::max<int64_t>(0, static_cast<int64_t>(context.size()) - window);
    std::vector<int64_t> slice(context.begin() + begin, context.end());
    torch::Tensor input =
        torch::tensor(slice, torch::kLong).unsqueeze(0).to(device);
    torch::Tensor logits = GatherVocabParallel(model.Forward(input), model.tensor_parallel())
                               .select(0, 0).select(0, -1).to(torch::kFloat);
    torch::Tensor probs = torch::softmax(logits / 0.8, -1).cpu();
    int64_t next = torch::multinomial(probs, 1).item<int64_t>();
    context.push_back(next);
    sampled.push_back(next);
  }
  model.train();
  return SampleTextOf(sampled, tokenizer);
}

// A worker started by hand must not silently run something else: the plan must verify and be
// within what this executor runs (the launcher refused the same with located diagnostics).
absl::Status CheckPlanRunnable(const ir::Plan& plan) {
  std::vector<std::string> problems = ir::VerifyPlan(plan);
  if (!problems.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the plan does not verify: ", absl::StrJoin(problems, "; ")));
  }
  std::vector<std::string> messages;
  for (const SupportIssue& issue : ExecutorSupportIssues(plan, ExecutorCapabilitiesOfThisBuild())) {
    messages.push_back(issue.message);
  }
  if (!messages.empty()) return absl::InvalidArgumentError(absl::StrJoin(messages, "; "));
  return absl::OkStatus();
}

// The model's tensor-parallel layers must split every parameter as the plan says
// (ir::Parameter.tp_dim, tp_parts): the plan is the contract the checkpoints and estimates use.
absl::Status CheckTensorParallelSplits(const CausalLm& model, const ShardLayout& layout) {
  for (const ParamSlot& slot : layout.params) {
    const TpSplit split = model.TensorParallelSplit(slot.name);
    const int parts = split.dim < 0 ? 1 : split.parts;
    const int replicas = split.dim < 0 ? 1 : split.replicas;
    if (split.dim != slot.tp_dim || (slot.tp_dim >= 0 && (parts != slot.tp_parts || replicas != slot.tp_replicas))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter ", slot.name, ": the plan splits dim ", slot.tp_dim, " in ", slot.tp_parts,
          " part(s) held by ", slot.tp_replicas, " tensor-parallel rank(s) each, but the executor's ",
          ModelArchName(model.config().arch), " model splits dim ", split.dim, " in ", parts, " held by ",
          replicas));
    }
  }
  return absl::OkStatus();
}

// The Trainer over the plan's sharding of this rank's pipeline stage. tp: the model's (timed) tp
// group; tp_kv: the plan's "tp_kv" group (timed), null without replicated key/value heads.
absl::StatusOr<std::unique_ptr<Trainer>> CreateTrainer(const ir::Plan& plan,
                                                       const std::shared_ptr<CausalLm>& model,
                                                       const TrainerOptions& options,
                                                       const ProcessGroups& groups, int rank,
                                                       const TensorParallel& tp,
                                                       std::shared_ptr<Communicator> tp_kv) {
  const auto& recompute = plan.training().recompute_modules();
  ACCEL_RETURN_IF_ERROR(model->SetRecomputeModules({recompute.begin(), recompute.end()}));
  std::vector<std::pair<std::string, int64_t>> names;
  for (const auto& item : model->named_parameters()) names.emplace_back(item.key(), item.value().numel());
  ACCEL_ASSIGN_OR_RETURN(ShardLayout layout,
                         ShardLayout::FromPlan(plan.sharding(), plan.ranks(rank).stage(), names,
                                               groups.RankIn("dp_shard")));
  ACCEL_RETURN_IF_ERROR(CheckTensorParallelSplits(*model, layout));
  DataParallelGroups dp;
  dp.dp = groups.Get("dp");
  dp.dp_shard = groups.Get("dp_shard");
  dp.dp_replicate = groups.Get("dp_replicate");
  dp.tp = tp.group;
  dp.replicated.sequence = tp.sequence_sharded() ? tp.group : nullptr;
  dp.replicated.kv = std::move(tp_kv);
  GradSyncOptions sync;
  sync.reduce_dtype = ScalarTypeOf(plan.precision().reduce_dtype(), torch::kFloat);
  // With pp > 1 the head reads its own copy of a tied embedding, not the embeddings unit.
  const bool pipeline = plan.pipeline().stages_size() > 1;
  sync.tied_embeddings = plan.model().tie_word_embeddings() && !pipeline;
  const ir::Offload offload = plan.sharding().offload();
  sync.offload_optimizer = offload != ir::OFFLOAD_UNSPECIFIED && offload != ir::OFFLOAD_NONE;
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                         Trainer::Create(model, CausalLmLoss(), options, std::move(layout), std::move(dp), sync));
  if (pipeline) {
    ACCEL_ASSIGN_OR_RETURN(PipelineContext context,
                           PipelineContextFromPlan(plan, rank, groups.Get("pp"), groups.Get("embedding")));
    ACCEL_RETURN_IF_ERROR(trainer->SetPipeline(std::move(context)));
  }
  return trainer;
}

// model.init_from: the trainer's owned ranges from the Hugging Face weights, unless a checkpoint
// was resumed (it holds the fine-tuned weights; the pretrained ones would be overwritten).
absl::Status StartFromPretrained(const ir::Plan& plan, const WorkerEnv& env, bool resumed, Trainer& trainer) {
  const std::string& path = plan.model().init_from();
  if (path.empty()) return absl::OkStatus();
  if (resumed) {
    Log(absl::StrFormat("rank %d: init_from %s not read: resumed from a checkpoint", env.rank, path));
    return absl::OkStatus();
  }
  PretrainedReadStats read;
  ACCEL_RETURN_IF_ERROR(trainer.LoadPretrained(path, &read));
  // This rank's part only: its pipeline stage's tensors, its tensor-parallel slices, its shards.
  Log(absl::StrFormat("rank %d: init_from %s: copied %d bytes of %d tensors (%d bytes whole) "
                      "out of the mapped files, %d pages",
                      env.rank, path, read.bytes_copied, read.tensors, read.tensor_bytes, read.pages_touched));
  return absl::OkStatus();
}

// config.json for Hugging Face loaders, describing the tensors as stored: the dimensions the
// workers built the model with (ModelConfigFromPlan: padded vocabulary, defaults applied).
absl::StatusOr<std::string> ConfigJsonFor(const ir::Plan& plan) {
  ACCEL_ASSIGN_OR_RETURN(ModelConfig c, ModelConfigFromPlan(plan.model()));
  HfModelDims dims;
  dims.arch = c.arch == ModelArch::kLlama ? HfArch::kLlama : HfArch::kGpt2;
  dims.hidden_size = c.hidden_size;
  dims.num_layers = c.num_layers;
  dims.num_heads = c.num_heads;
  dims.num_kv_heads = c.num_kv_heads;
  dims.ffn_hidden_size = c.ffn_size;
  dims.vocab_size = c.vocab_size;
  dims.max_seq_len = c.max_seq_len;
  dims.tie_word_embeddings = c.tie_embeddings;
  dims.norm_eps = c.norm_eps;
  dims.rope_theta = c.rope_theta;
  dims.qkv_bias = c.qkv_bias;
  const ir::Dtype dtype = plan.precision().param_dtype();
  dims.torch_dtype = dtype == ir::DTYPE_BF16   ? "bfloat16"
                     : dtype == ir::DTYPE_FP16 ? "float16"
                                               : "float32";
  return HuggingFaceConfigJson(dims);
}

// tensor_parallel.json: how the plan splits every tp-split parameter, so `accel export` can merge
// the tp-major tensors without the plan. Only written when tp > 1.
std::string TpLayoutJsonFor(const ir::Plan& plan) {
  TpLayoutRecord record;
  record.degree = ir::AxisSize(plan, ir::Axis::kTp);
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) {
      if (p.tp_dim() >= 0) {
        record.parameters[p.name()] = {p.tp_dim(), std::max(1, p.tp_parts()), std::max(1, p.tp_replicas())};
      }
    }
  }
  return TpLayoutJson(record);
}

// Writes a checkpoint of the current step. Single-file state (stage 0, fp32): rank 0 writes it.
// Sharded state: every rank of the first replica writes its shard file into the step's temporary
// directory, all ranks meet, then rank 0 publishes it with the shared files.
absl::Status SaveCheckpoint(const ir::Plan& plan, const WorkerEnv& env, const Trainer& trainer,
                            const WindowDataset& dataset, const ProcessGroups& groups,
                            Communicator& world, CheckpointStore& store, bool crash_for_test) {
  const bool leader = env.rank == 0;
  std::vector<CheckpointFile> shared;
  if (leader) {
    ACCEL_ASSIGN_OR_RETURN(shared, trainer.SaveState(dataset.GlobalPosition()));
    ACCEL_ASSIGN_OR_RETURN(std::string config_json, ConfigJsonFor(plan));
    shared.push_back({"config.json", std::move(config_json)});
    if (ir::AxisSize(plan, ir::Axis::kTp) > 1) shared.push_back({kTensorParallelFile, TpLayoutJsonFor(plan)});
  }
  std::string dir;
  if (!trainer.ShardedCheckpoint()) {
    if (!leader) return absl::OkStatus();
    ACCEL_ASSIGN_OR_RETURN(dir, store.Write(trainer.step(), shared));
  } else {
    ACCEL_ASSIGN_OR_RETURN(std::string tmp, store.BeginStep(trainer.step()));
    std::vector<CheckpointFile> mine;
    if (groups.RankIn("dp_replicate") == 0) {
      ACCEL_ASSIGN_OR_RETURN(std::string shard, trainer.SaveShard());
      mine.push_back({ShardFileName(env.rank, env.world_size), std::move(shard)});
    }
    ACCEL_RETURN_IF_ERROR(CheckpointStore::WriteRankFiles(tmp, env.rank, mine));
    if (crash_for_test) {
      Log(absl::StrCat("test hook: rank ", env.rank, " kills itself while writing checkpoint ",
                       trainer.step(), " (ACCEL_TEST_CRASH_IN_CHECKPOINT)"));
      ::kill(::getpid(), SIGKILL);
    }
    ACCEL_RETURN_IF_ERROR(world.Barrier());
    if (leader) {
      ACCEL_ASSIGN_OR_RETURN(dir, store.Publish(trainer.step(), env.world_size, shared));
    }
    // Nobody may look for this checkpoint (a resume, the next save) before it is published.
    ACCEL_RETURN_IF_ERROR(world.Barrier());
  }
  if (leader) Log(absl::StrCat("checkpoint: ", dir));
  return absl::OkStatus();
}

// Everything the training loop needs, built by the setup phase of RunWorkerImpl.
struct RunState {
  const ir::Plan& plan;
  const WorkerEnv& env;
  const WorkerOptions& options;
  torch::Device device;
  Communicator& world;
  ProcessGroups& groups;
  std::shared_ptr<CausalLm> model;
  Trainer& trainer;
  WindowDataset& dataset;
  CheckpointStore& store;
  bool resumed;
  bool measure_tensors;  // the counting CPU allocator is installed and the device is the CPU
  bool measure_cuda;     // the device is CUDA and this build reads its caching allocator
  // Times the model's tensor-parallel collectives; null without tensor parallelism.
  std::shared_ptr<const CollectiveTimer> tp_timer;
};

// What the loop hands to FinishRun.
struct LoopOutcome {
  bool stopped = false;
  int64_t first_step_of_run = 0;
  // Steps and seconds of this run with the first step (which pays for lazy initialisation)
  // excluded from the rate.
  double timed_seconds = 0;
  int64_t timed_steps = 0;
  double last_loss = 0;
  int64_t peak_tensor_bytes = 0;  // largest per-step peak of this rank
  int64_t peak_reserved_bytes = 0;  // CUDA: largest per-step peak reserve of this rank
  int64_t last_checkpoint = -1;   // step of the newest checkpoint on disk from this run or resume
  // Pipeline: seconds this rank waited in receives and ran its schedule, timed steps only.
  double recv_wait_seconds = 0;
  double schedule_seconds = 0;
  // Tensor parallelism: seconds and calls of this rank's tp collectives, timed steps only.
  double tp_comm_seconds = 0;
  int64_t tp_comm_calls = 0;
};

absl::Status SaveCheckpointOf(RunState& s) {
  const bool crash = s.options.crash_in_checkpoint_step == s.trainer.step() &&
                     s.env.rank == s.options.crash_rank;
  return SaveCheckpoint(s.plan, s.env, s.trainer, s.dataset, s.groups, s.world, s.store, crash);
}

void MaybeCrashForTest(const RunState& s, int64_t done) {
  if (done == s.options.crash_at_step && s.env.rank == s.options.crash_rank) {
    Log(absl::StrCat("test hook: rank ", s.env.rank, " kills itself after step ", done,
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

StepRecord MakeStepRecord(const RunState& s, const StepResult& result, double step_seconds) {
  const int64_t tokens_per_step = s.plan.batch().tokens_per_step();
  StepRecord r;
  r.step = s.trainer.step();
  r.loss = result.loss;
  r.lr = result.lr;
  r.grad_norm = result.grad_norm;
  r.tokens = r.step * tokens_per_step;
  r.step_seconds = step_seconds;
  r.tokens_per_second = step_seconds > 0 ? tokens_per_step / step_seconds : 0;
  r.since_launch_seconds =
      s.env.launch_unix_ns > 0 ? static_cast<double>(UnixNanos() - s.env.launch_unix_ns) / 1e9 : 0;
  r.peak_resident_bytes = PeakResidentBytes();
  if (s.measure_tensors) {
    r.peak_tensor_bytes = PeakTensorBytes();
    r.live_tensor_bytes = LiveTensorBytes();
  }
  if (s.measure_cuda) {
    const CudaMemoryStats cuda = ReadCudaMemoryStats(s.device.index());
    r.peak_tensor_bytes = cuda.peak_allocated;
    r.live_tensor_bytes = cuda.allocated;
    r.peak_reserved_bytes = cuda.peak_reserved;
  }
  r.buckets = result.sync.buckets;
  r.buckets_launched_in_backward = result.sync.launched_during_backward;
  r.backward_seconds = result.sync.backward_seconds;
  r.comm_wait_seconds = result.sync.wait_seconds;
  r.loss_scale = result.loss_scale;
  r.skipped = result.skipped;
  r.unix_time = static_cast<double>(UnixNanos()) / 1e9;
  return r;
}

void LogProgress(const RunState& s, const StepRecord& r, const LoopOutcome& o, bool first_step) {
  const int64_t total_steps = s.plan.batch().steps();
  const int64_t log_every = std::max<int64_t>(1, s.plan.training().log_every_steps());
  if (first_step && s.env.launch_unix_ns > 0) {
    Log(absl::StrFormat("first step done %.2f s after launch", r.since_launch_seconds));
  }
  if (r.step % log_every != 0 && r.step != total_steps && !first_step) return;
  const double mean_step = o.timed_steps > 0 ? o.timed_seconds / o.timed_steps : r.step_seconds;
  Log(absl::StrFormat("step %d/%d | loss %.4f | lr %.3e | grad_norm %.3f | %.0f tok/s | "
                      "%.0f ms/step | ETA %s",
                      r.step, total_steps, r.loss, r.lr, r.grad_norm, r.tokens_per_second,
                      r.step_seconds * 1000,
                      FormatDuration(mean_step * static_cast<double>(total_steps - r.step))));
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
  const int64_t accumulation = std::max<int64_t>(1, s.plan.batch().grad_accum_steps());
  const int64_t every = s.plan.checkpoint().every_steps();
  LoopOutcome o;
  o.first_step_of_run = s.trainer.step() + 1;
  o.last_checkpoint = s.resumed ? s.trainer.step() : -1;
  while (s.trainer.step() < total_steps) {
    const auto step_start = Clock::now();
    if (s.measure_tensors) ResetPeakTensorBytes();
    if (s.measure_cuda) ResetCudaPeakMemory(s.device.index());
    std::vector<torch::Tensor> batches = NextMicroBatches(
        s.dataset, s.plan.batch().micro_batch_size(), accumulation, s.device);
    const double tp_seconds_before = s.tp_timer ? s.tp_timer->seconds() : 0;
    const int64_t tp_calls_before = s.tp_timer ? s.tp_timer->calls() : 0;
    ACCEL_ASSIGN_OR_RETURN(StepResult result, s.trainer.Step(batches));
    const double step_seconds = Seconds(Clock::now() - step_start);
    StepRecord record = MakeStepRecord(s, result, step_seconds);
    if (s.tp_timer) record.tp_comm_seconds = s.tp_timer->seconds() - tp_seconds_before;
    MaybeCrashForTest(s, record.step);
    if (record.step != o.first_step_of_run) {
      o.timed_seconds += step_seconds;
      ++o.timed_steps;
      o.recv_wait_seconds += s.trainer.last_pipeline_step().recv_wait_seconds;
      o.schedule_seconds += s.trainer.last_pipeline_step().schedule_seconds;
      if (s.tp_timer) {
        o.tp_comm_seconds += *record.tp_comm_seconds;
        o.tp_comm_calls += s.tp_timer->calls() - tp_calls_before;
      }
    }
    o.last_loss = result.loss;
    o.peak_tensor_bytes = std::max(o.peak_tensor_bytes, record.peak_tensor_bytes.value_or(0));
    o.peak_reserved_bytes = std::max(o.peak_reserved_bytes, record.peak_reserved_bytes.value_or(0));
    if (leader) {
      metrics.Append(record);
      LogProgress(s, record, o, record.step == o.first_step_of_run);
    }
    if (every > 0 && record.step % every == 0 && record.step != total_steps) {
      ACCEL_RETURN_IF_ERROR(SaveCheckpointOf(s));
      o.last_checkpoint = record.step;
    }
    ACCEL_ASSIGN_OR_RETURN(bool stop, StopRequested(s));
    if (stop) {
      o.stopped = true;
      Log(absl::StrFormat("stop requested: stopping after step %d of %d", record.step,
                          total_steps));
      break;
    }
  }
  return o;
}

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

// After the loop: the final checkpoint, the sample, the memory report and the summary.
absl::Status FinishRun(RunState& s, const LoopOutcome& o, Clock::time_point started) {
  const bool leader = s.env.rank == 0;
  const int64_t total_steps = s.plan.batch().steps();
  if (s.trainer.step() > 0 && o.last_checkpoint != s.trainer.step() &&
      !s.plan.checkpoint().skip_final()) {
    ACCEL_RETURN_IF_ERROR(SaveCheckpointOf(s));
  }
  ACCEL_RETURN_IF_ERROR(s.world.Barrier());
  const int64_t sample_tokens = s.plan.training().sample_tokens();
  const bool pipeline = s.plan.pipeline().stages_size() > 1;
  if (pipeline && sample_tokens > 0 && leader) {
    Log("sample: skipped (pipeline parallel: no rank holds the whole model)");
  }
  if (!o.stopped && sample_tokens > 0 && !pipeline) {
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
      if (leader) Log("sample:\n" + text);
    }
  }
  std::vector<RankMemory> memory;
  if (s.measure_tensors || s.measure_cuda) {
    ACCEL_ASSIGN_OR_RETURN(memory, GatherRankMemory(s, o));
  }
  std::vector<double> pipeline_wait;
  if (pipeline) {
    ACCEL_ASSIGN_OR_RETURN(pipeline_wait, GatherPipelineWait(s, o));
  }
  if (!leader) return absl::OkStatus();
  const int64_t tokens_per_step = s.plan.batch().tokens_per_step();
  const double mean_tps =
      o.timed_seconds > 0 ? o.timed_steps * tokens_per_step / o.timed_seconds : 0;
  Log(absl::StrFormat("%s after step %d of %d in %.1f s", o.stopped ? "stopped" : "done",
                      s.trainer.step(), total_steps, Seconds(Clock::now() - started)));
  if (s.measure_tensors || s.measure_cuda) Log(MemorySummaryLine(s.plan, memory));
  if (pipeline) {
    std::vector<std::string> waits;
    for (double w : pipeline_wait) waits.push_back(absl::StrFormat("%.1f%%", 100 * w));
    Log(absl::StrFormat("pipeline: %s schedule, planned bubble %.1f%%; time blocked in receives per stage %s",
                        std::string(ir::Name(s.plan.pipeline().schedule())),
                        100 * s.plan.pipeline().bubble_fraction(),
                        absl::StrJoin(waits, " ")));
  }
  if (s.tp_timer) {
    const RunSummary::TensorParallelTime t = TensorParallelTimeOf(s.plan, o);
    const std::string stage = t.planned_stage == s.plan.ranks(0).stage()
                                  ? std::string()
                                  : absl::StrCat(" on stage ", t.planned_stage);
    Log(absl::StrFormat("tensor parallel: %.0f collectives per step on rank 0 took %.1f ms per step "
                        "(the plan counts %d%s, exposed %.1f ms)",
                        t.collectives_per_step, 1000 * t.seconds_per_step,
                        t.planned_collectives_per_step, stage, 1000 * t.planned_exposed_seconds));
  }
  Log(absl::StrFormat(
      "summary: %d steps this run, final loss %.4f, %.0f tokens/s mean (%d ranks), peak RSS "
      "%.1f MiB on rank 0, checkpoints in %s",
      s.trainer.step() - o.first_step_of_run + 1, o.last_loss, mean_tps, s.env.world_size,
      static_cast<double>(PeakResidentBytes()) / (1024.0 * 1024.0), s.plan.checkpoint().dir()));
  return WriteSummary(s, o, mean_tps, memory, pipeline_wait);
}

absl::StatusOr<WorkerResult> RunWorkerImpl(const ir::Plan& plan, const WorkerEnv& env,
                                           const WorkerOptions& options) {
  const auto started = Clock::now();
  const bool leader = env.rank == 0;
  at::set_num_threads(std::max(1, env.num_threads));
  SetBlasThreads(env.num_threads);
  RetainFreedHostMemory();  // before the first step allocates (executor/host_malloc.h)

  // Plan and environment must agree before anyone opens a socket.
  if (plan.ir_version() != ir::IR_VERSION_CURRENT) {
    return absl::InvalidArgumentError(absl::StrCat("plan has ir_version ", plan.ir_version(),
                                                   "; this executor reads ",
                                                   ir::IR_VERSION_CURRENT));
  }
  if (plan.topology().world_size() != env.world_size ||
      plan.ranks_size() != env.world_size) {
    return absl::InvalidArgumentError(absl::StrCat("the plan has world size ",
                                                   plan.topology().world_size(),
                                                   " but WORLD_SIZE=", env.world_size));
  }
  const ir::RankPlacement& placement = plan.ranks(env.rank);
  if (placement.rank() != env.rank || placement.node() != env.node_rank ||
      placement.local_rank() != env.local_rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the plan places rank ", env.rank, " on node ", placement.node(), " local rank ",
        placement.local_rank(), ", but NODE_RANK=", env.node_rank, " LOCAL_RANK=",
        env.local_rank));
  }
  ACCEL_RETURN_IF_ERROR(CheckPlanRunnable(plan));
  ACCEL_ASSIGN_OR_RETURN(ModelConfig model_config, ModelConfigFromPlan(plan.model()));
  ACCEL_ASSIGN_OR_RETURN(TrainerOptions trainer_options, TrainerOptionsFromPlan(plan));

  const bool cuda = plan.topology().device_type() == ir::DEVICE_TYPE_CUDA;
  const torch::Device device = cuda ? torch::Device(torch::kCUDA, env.local_rank)
                                    : torch::Device(torch::kCPU);
  const CommBackend backend = plan.job().backend() == ir::BACKEND_NCCL ? CommBackend::kNccl
                                                            : CommBackend::kGloo;

  // Rendezvous: rank 0 serves the store; everybody builds the world and the plan's groups.
  RendezvousOptions rendezvous_options;
  rendezvous_options.master_addr = env.master_addr;
  rendezvous_options.master_port = env.master_port;
  rendezvous_options.world_size = env.world_size;
  rendezvous_options.rank = env.rank;
  rendezvous_options.timeout = CollectiveTimeout(plan, options);
  rendezvous_options.job_token = env.job_token;
  rendezvous_options.agent_store = env.agent_store;
  rendezvous_options.attempt = env.restart_count;
  rendezvous_options.store_file = env.store_file;
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<Rendezvous> rendezvous,
                         Rendezvous::Connect(rendezvous_options));
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> world, rendezvous->CreateWorld(backend));
  ACCEL_RETURN_IF_ERROR(CheckSamePlanOnEveryRank(plan, *world, device));
  ACCEL_ASSIGN_OR_RETURN(ProcessGroups groups,
                         ProcessGroups::Create(plan, env.rank, *rendezvous, world, backend));
  const int dp_size = groups.SizeOf("dp");
  const int dp_rank = groups.RankIn("dp");
  if (dp_size != plan.batch().data_parallel_size()) {
    return absl::InvalidArgumentError(absl::StrCat("the plan's dp groups have ", dp_size,
                                                   " ranks but batch.data_parallel_size is ",
                                                   plan.batch().data_parallel_size()));
  }

  // Model, identical on every rank (seeded), then data.
  const uint64_t seed = static_cast<uint64_t>(plan.training().seed());
  TensorParallel tp{groups.Get("tp"), plan.mesh().sequence_parallel()};
  // Null without replicated key/value heads.
  std::shared_ptr<Communicator> tp_kv = groups.Get("tp_kv");
  // Every tp collective (the model's, the trainer's replicated gradients and gradient norm) is
  // timed for metrics.jsonl and the summary.
  std::shared_ptr<CollectiveTimer> tp_timer;
  if (tp.enabled()) {
    tp_timer = std::make_shared<CollectiveTimer>();
    tp.group = WithTimer(tp.group, tp_timer);
    if (tp_kv != nullptr) tp_kv = WithTimer(tp_kv, tp_timer);
  }
  // Hugging Face weights (model.init_from) are read after the trainer exists, which knows the
  // ranges this rank owns.
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<CausalLm> model,
                         BuildCausalLm(model_config, seed, tp, {}, StageSpanFromPlan(plan, env.rank)));
  model->to(device, ScalarTypeOf(plan.precision().param_dtype(), torch::kFloat));
  // Text with a real tokenizer is encoded here, on this rank's intra-op threads
  // (executor/data/plan_tokens.h says why in memory and why that is deterministic).
  ACCEL_ASSIGN_OR_RETURN(std::vector<uint32_t> tokens,
                         LoadPlanTokens(plan.data(), plan.model().vocab_size(), at::get_num_threads()));
  const size_t token_count = tokens.size();
  WindowDatasetOptions data_options;
  data_options.seq_len = plan.batch().seq_len();
  data_options.seed = seed;
  data_options.shuffle = plan.data().shuffle();
  data_options.dp_rank = dp_rank;
  data_options.dp_size = dp_size;
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<WindowDataset> dataset,
                         WindowDataset::Create(std::move(tokens), data_options, plan.data().path()));
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer,
                         CreateTrainer(plan, model, trainer_options, groups, env.rank, tp, tp_kv));

  Log(absl::StrFormat(
      "rank %d/%d (node %d, local rank %d): %s on %s, intra-op threads %d; model %s with %d "
      "parameters; data %s: %d tokens, %d windows of %d, %d per rank per epoch",
      env.rank, env.world_size, env.node_rank, env.local_rank, world->BackendName(),
      device.str(), at::get_num_threads(), std::string(ir::Name(plan.model().arch())),
      ModelParameterCount(model_config),
      plan.data().path(), token_count, dataset->NumWindows(), data_options.seq_len,
      dataset->WindowsPerRank()));

  // Resume.
  const std::string checkpoint_root = CheckpointRoot(plan, env);
  CheckpointStore store(checkpoint_root, static_cast<int>(std::max<int64_t>(1, plan.checkpoint().keep())));
  // Leftovers of a crashed attempt must not mix into this run's checkpoints.
  if (leader) ACCEL_RETURN_IF_ERROR(store.RemoveStaleTemporaries());
  bool resumed = false;
  if (plan.checkpoint().resume() == ir::RESUME_POLICY_AUTO) {
    std::vector<std::string> skipped;
    absl::StatusOr<CheckpointInfo> latest = store.LatestGood(&skipped);
    for (const std::string& s : skipped) Log("warning: skipping invalid checkpoint: " + s);
    if (latest.ok()) {
      ACCEL_ASSIGN_OR_RETURN(GlobalDataPosition position, trainer->LoadState(latest->path));
      ACCEL_RETURN_IF_ERROR(dataset->SeekGlobal(position));
      resumed = true;
      Log(absl::StrFormat("resumed from %s (step %d, data epoch %d after %d windows)",
                          latest->path, trainer->step(), position.epoch, position.samples));
    } else if (!absl::IsNotFound(latest.status())) {
      return latest.status();
    }
  }

  ACCEL_RETURN_IF_ERROR(StartFromPretrained(plan, env, resumed, *trainer));

  RunState state{plan, env, options, device, *world, groups, model, *trainer, *dataset, store,
                 resumed, CountingCpuAllocatorInstalled() && !cuda,
                 cuda && CudaMemoryStatsAvailable(), tp_timer};
  Log(absl::StrFormat("setup took %.2f s; training steps %d..%d of %d",
                      Seconds(Clock::now() - started), trainer->step() + 1, plan.batch().steps(),
                      plan.batch().steps()));
  ACCEL_ASSIGN_OR_RETURN(LoopOutcome outcome, TrainLoop(state));
  ACCEL_RETURN_IF_ERROR(FinishRun(state, outcome, started));
  WorkerResult out;
  out.steps_done = trainer->step();
  out.stopped = outcome.stopped;
  return out;
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
