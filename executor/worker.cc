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
#include "executor/checkpoint/checkpoint_store.h"
#include "executor/checkpoint/hf_config.h"
#include "executor/checkpoint/sharded_tensors.h"
#include "executor/communicator.h"
#include "executor/data/byte_tokenizer.h"
#include "executor/data/text_source.h"
#include "executor/data/token_file.h"
#include "executor/data/window_dataset.h"
#include "executor/launcher/plan_support.h"
#include "executor/models/causal_lm.h"
#include "executor/models/model_config.h"
#include "executor/train/trainer.h"
#include "executor/process_groups.h"
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
std::string JsonNumber(double v) { return std::isfinite(v) ? absl::StrFormat("%.9g", v) : "null"; }

absl::StatusOr<ModelConfig> ModelConfigFromPlan(const ir::Model& m) {
  ModelConfig config;
  if (m.arch() == "gpt2") {
    config.arch = ModelArch::kGpt2;
  } else if (m.arch() == "llama") {
    config.arch = ModelArch::kLlama;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("model.arch '", m.arch(), "' is unknown"));
  }
  config.hidden_size = m.hidden_size();
  config.num_layers = m.num_layers();
  config.num_heads = m.num_heads();
  config.num_kv_heads = m.num_kv_heads() > 0 ? m.num_kv_heads() : m.num_heads();
  config.ffn_size = m.ffn_hidden_size() > 0 ? m.ffn_hidden_size() : 4 * m.hidden_size();
  // The embedding and head have the plan's padded rows (Megatron's make-vocab-size-divisible-by);
  // tokens stay below vocab_size.
  config.vocab_size = m.padded_vocab_size() > 0 ? m.padded_vocab_size() : m.vocab_size();
  config.max_seq_len = m.max_seq_len();
  config.tie_embeddings = m.tie_word_embeddings();
  config.qkv_bias = m.qkv_bias();
  config.norm_eps = m.norm_eps();
  config.rope_theta = m.rope_theta();
  ACCEL_RETURN_IF_ERROR(ValidateModelConfig(config));
  return config;
}

absl::StatusOr<TrainerOptions> TrainerOptionsFromPlan(const ir::Plan& plan) {
  const ir::Training& t = plan.training();
  TrainerOptions options;
  if (t.optimizer().name() == "adamw") {
    options.optimizer = OptimizerKind::kAdamW;
  } else if (t.optimizer().name() == "sgd") {
    options.optimizer = OptimizerKind::kSgd;
    options.momentum = t.optimizer().momentum();
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("training.optimizer.name '", t.optimizer().name(), "' is unknown"));
  }
  const ir::LrSchedule& lr = t.lr_schedule();
  options.schedule.peak_lr = t.optimizer().lr();
  options.schedule.warmup_steps = lr.warmup_steps();
  options.schedule.total_steps = std::max<int64_t>(1, lr.total_steps());
  options.schedule.min_lr_ratio = lr.min_lr_ratio();
  options.schedule.cosine = lr.name() == "cosine";
  options.schedule.linear = lr.name() == "linear";
  if (lr.name() != "cosine" && lr.name() != "linear" && lr.name() != "constant") {
    return absl::InvalidArgumentError(
        absl::StrCat("training.lr_schedule.name '", lr.name(), "' is unknown"));
  }
  options.beta1 = t.optimizer().beta1();
  options.beta2 = t.optimizer().beta2();
  options.adam_eps = t.optimizer().eps();
  options.weight_decay = t.optimizer().weight_decay();
  options.grad_clip_norm = t.grad_clip_norm();
  const std::string& compute = plan.precision().compute_dtype();
  if (compute == "bf16") {
    options.precision = ComputePrecision::kBf16;
  } else if (compute.empty() || compute == "fp32") {
    options.precision = ComputePrecision::kFp32;
  } else {
    return absl::InvalidArgumentError(absl::StrCat(
        "precision.compute ", compute, " is not supported by the executor yet (supported: fp32, "
        "bf16)"));
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

absl::StatusOr<std::vector<uint32_t>> LoadTokens(const ir::Data& data, int64_t vocab_size) {
  std::vector<uint32_t> tokens;
  if (data.format() == "tokens") {
    TokenWidth width = data.token_dtype() == "uint32" ? TokenWidth::kUint32 : TokenWidth::kUint16;
    ACCEL_ASSIGN_OR_RETURN(tokens, ReadTokenFile(data.path(), width));
  } else {
    ACCEL_ASSIGN_OR_RETURN(std::string text, ReadTextCorpus(data.path()));
    tokens = ByteTokenizer::Encode(text);
  }
  auto too_big = std::find_if(tokens.begin(), tokens.end(),
                              [vocab_size](uint32_t t) { return t >= vocab_size; });
  if (too_big != tokens.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(data.path(), ": token ", *too_big, " at position ", too_big - tokens.begin(),
                     " is outside the model's vocabulary of ", vocab_size));
  }
  return tokens;
}

std::string CheckpointRoot(const ir::Plan& plan, const WorkerEnv& env) {
  if (!plan.checkpoint().dir().empty()) return plan.checkpoint().dir();
  return env.run_dir.empty() ? std::string("checkpoints") : env.run_dir + "/checkpoints";
}

// Bytes sampled from the model after a newline, with temperature 0.8, for a look at what it
// learned. Printable ASCII and newlines are kept; other bytes are shown as '?'.
std::string SampleText(CausalLm& model, int64_t count, uint64_t seed,
                       const torch::Device& device) {
  torch::NoGradGuard no_grad;
  model.eval();
  torch::manual_seed(seed);
  std::vector<int64_t> context = {'\n'};
  std::string out;
  const int64_t window = model.config().max_seq_len;
  for (int64_t i = 0; i < count; ++i) {
    int64_t begin = std::max<int64_t>(0, static_cast<int64_t>(context.size()) - window);
    std::vector<int64_t> slice(context.begin() + begin, context.end());
    torch::Tensor input =
        torch::tensor(slice, torch::kLong).unsqueeze(0).to(device);
    torch::Tensor logits = model.Forward(input).select(0, 0).select(0, -1).to(torch::kFloat);
    torch::Tensor probs = torch::softmax(logits / 0.8, -1).cpu();
    int64_t next = torch::multinomial(probs, 1).item<int64_t>();
    context.push_back(next);
    char c = static_cast<char>(next);
    out.push_back((next == '\n' || (next >= 32 && next < 127)) ? c : '?');
  }
  model.train();
  return out;
}

// dtype names of the plan ("fp32", "bf16", "fp16"); `fallback` for "" (a hand-built plan).
torch::ScalarType ScalarTypeOf(const std::string& name, torch::ScalarType fallback) {
  if (name == "bf16") return torch::kBFloat16;
  if (name == "fp16") return torch::kHalf;
  if (name == "fp32") return torch::kFloat;
  return fallback;
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
  for (const SupportIssue& issue : ExecutorSupportIssues(plan, ExecutorCapabilities{ExecutorHasCuda()})) {
    messages.push_back(issue.message);
  }
  if (!messages.empty()) return absl::InvalidArgumentError(absl::StrJoin(messages, "; "));
  return absl::OkStatus();
}

// The Trainer over the plan's sharding of this rank's pipeline stage.
absl::StatusOr<std::unique_ptr<Trainer>> CreateTrainer(const ir::Plan& plan,
                                                       const std::shared_ptr<CausalLm>& model,
                                                       const TrainerOptions& options,
                                                       const ProcessGroups& groups, int rank) {
  std::vector<std::pair<std::string, int64_t>> names;
  for (const auto& item : model->named_parameters()) names.emplace_back(item.key(), item.value().numel());
  ACCEL_ASSIGN_OR_RETURN(ShardLayout layout,
                         ShardLayout::FromPlan(plan.sharding(), plan.ranks(rank).stage(), names,
                                               groups.RankIn("dp_shard")));
  DataParallelGroups dp;
  dp.dp = groups.Get("dp");
  dp.dp_shard = groups.Get("dp_shard");
  dp.dp_replicate = groups.Get("dp_replicate");
  GradSyncOptions sync;
  sync.reduce_dtype = ScalarTypeOf(plan.precision().reduce_dtype(), torch::kFloat);
  sync.tied_embeddings = plan.model().tie_word_embeddings();
  return Trainer::Create(model, CausalLmLoss(), options, std::move(layout), std::move(dp), sync);
}

// config.json for Hugging Face loaders, describing the tensors as stored (padded vocabulary).
std::string ConfigJsonFor(const ir::Plan& plan) {
  const ir::Model& m = plan.model();
  HfModelDims dims;
  dims.arch = m.arch() == "llama" ? HfArch::kLlama : HfArch::kGpt2;
  dims.hidden_size = m.hidden_size();
  dims.num_layers = m.num_layers();
  dims.num_heads = m.num_heads();
  dims.num_kv_heads = m.num_kv_heads() > 0 ? m.num_kv_heads() : m.num_heads();
  dims.ffn_hidden_size = m.ffn_hidden_size();
  dims.vocab_size = m.padded_vocab_size() > 0 ? m.padded_vocab_size() : m.vocab_size();
  dims.max_seq_len = m.max_seq_len();
  dims.tie_word_embeddings = m.tie_word_embeddings();
  dims.norm_eps = m.norm_eps();
  dims.rope_theta = m.rope_theta();
  dims.qkv_bias = m.qkv_bias();
  const std::string& dtype = plan.precision().param_dtype();
  dims.torch_dtype = dtype == "bf16" ? "bfloat16" : dtype == "fp16" ? "float16" : "float32";
  return HuggingFaceConfigJson(dims);
}

// Writes a checkpoint of the current step. Single-file state (stage 0, fp32): rank 0 writes it.
// Sharded state: every rank of the first replica writes its shard file into the step's temporary
// directory, all ranks meet, then rank 0 publishes it with the shared files.
absl::Status SaveCheckpoint(const ir::Plan& plan, const WorkerEnv& env, const Trainer& trainer,
                            const WindowDataset& dataset, const ProcessGroups& groups,
                            Communicator& world, CheckpointStore& store) {
  const bool leader = env.rank == 0;
  std::vector<CheckpointFile> shared;
  if (leader) {
    ACCEL_ASSIGN_OR_RETURN(shared, trainer.SaveState(dataset.Position()));
    shared.push_back({"config.json", ConfigJsonFor(plan)});
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

absl::StatusOr<WorkerResult> RunWorkerImpl(const ir::Plan& plan, const WorkerEnv& env,
                                           const WorkerOptions& options) {
  const auto started = Clock::now();
  const bool leader = env.rank == 0;
  at::set_num_threads(std::max(1, env.num_threads));

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

  const bool cuda = plan.topology().device_type() == "cuda";
  const torch::Device device = cuda ? torch::Device(torch::kCUDA, env.local_rank)
                                    : torch::Device(torch::kCPU);
  const CommBackend backend = plan.job().backend() == "nccl" ? CommBackend::kNccl
                                                            : CommBackend::kGloo;

  // Rendezvous: rank 0 serves the store; everybody builds the world and the plan's groups.
  RendezvousOptions rendezvous_options;
  rendezvous_options.master_addr = env.master_addr;
  rendezvous_options.master_port = env.master_port;
  rendezvous_options.world_size = env.world_size;
  rendezvous_options.rank = env.rank;
  rendezvous_options.timeout = options.collective_timeout;
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<Rendezvous> rendezvous,
                         Rendezvous::Connect(rendezvous_options));
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> world, rendezvous->CreateWorld(backend));
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
  ACCEL_ASSIGN_OR_RETURN(std::shared_ptr<CausalLm> model, BuildCausalLm(model_config, seed));
  model->to(device, ScalarTypeOf(plan.precision().param_dtype(), torch::kFloat));
  ACCEL_ASSIGN_OR_RETURN(std::vector<uint32_t> tokens,
                         LoadTokens(plan.data(), plan.model().vocab_size()));
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
                         CreateTrainer(plan, model, trainer_options, groups, env.rank));

  Log(absl::StrFormat(
      "rank %d/%d (node %d, local rank %d): %s on %s, intra-op threads %d; model %s with %d "
      "parameters; data %s: %d tokens, %d windows of %d, %d per rank per epoch",
      env.rank, env.world_size, env.node_rank, env.local_rank, world->BackendName(),
      device.str(), at::get_num_threads(), plan.model().arch(), ModelParameterCount(model_config),
      plan.data().path(), token_count, dataset->NumWindows(), data_options.seq_len,
      dataset->WindowsPerRank()));

  // Resume.
  const std::string checkpoint_root = CheckpointRoot(plan, env);
  CheckpointStore store(checkpoint_root, static_cast<int>(std::max<int64_t>(1, plan.checkpoint().keep())));
  // Leftovers of a crashed attempt must not mix into this run's checkpoints.
  if (leader) ACCEL_RETURN_IF_ERROR(store.RemoveStaleTemporaries());
  bool resumed = false;
  if (plan.checkpoint().resume() == "auto") {
    std::vector<std::string> skipped;
    absl::StatusOr<CheckpointInfo> latest = store.LatestGood(&skipped);
    for (const std::string& s : skipped) Log("warning: skipping invalid checkpoint: " + s);
    if (latest.ok()) {
      ACCEL_ASSIGN_OR_RETURN(DataPosition position, trainer->LoadState(latest->path));
      ACCEL_RETURN_IF_ERROR(dataset->Seek(position));
      resumed = true;
      Log(absl::StrFormat("resumed from %s (step %d, data epoch %d index %d)", latest->path,
                          trainer->step(), position.epoch, position.index));
    } else if (!absl::IsNotFound(latest.status())) {
      return latest.status();
    }
  }

  std::ofstream metrics;
  if (leader) {
    const std::string path =
        env.run_dir.empty() ? std::string("metrics.jsonl") : env.run_dir + "/metrics.jsonl";
    metrics.open(path, resumed ? std::ios::app : std::ios::trunc);
    if (!metrics) return absl::InternalError(absl::StrCat("cannot write ", path));
  }

  auto save_checkpoint = [&]() -> absl::Status {
    return SaveCheckpoint(plan, env, *trainer, *dataset, groups, *world, store);
  };

  const int64_t total_steps = plan.batch().steps();
  const int64_t accumulation = std::max<int64_t>(1, plan.batch().grad_accum_steps());
  const int64_t micro_batch = plan.batch().micro_batch_size();
  const int64_t tokens_per_step = plan.batch().tokens_per_step();
  const int64_t log_every = std::max<int64_t>(1, plan.training().log_every_steps());
  const int64_t every = plan.checkpoint().every_steps();
  int64_t last_checkpoint = resumed ? trainer->step() : -1;
  bool stopped = false;
  bool first_step = true;
  Log(absl::StrFormat("setup took %.2f s; training steps %d..%d of %d", Seconds(Clock::now() - started),
                      trainer->step() + 1, total_steps, total_steps));

  torch::Tensor stop_flag = torch::zeros({1}, torch::TensorOptions().dtype(torch::kFloat).device(device));
  // For the ETA and the final summary: steps and seconds of this run, the first step (which
  // pays for lazy initialisation) excluded from the rate.
  const int64_t first_step_of_run = trainer->step() + 1;
  double timed_seconds = 0;
  int64_t timed_steps = 0;
  double last_loss = 0;
  while (trainer->step() < total_steps) {
    const auto step_start = Clock::now();
    std::vector<torch::Tensor> batches =
        NextMicroBatches(*dataset, micro_batch, accumulation, device);
    ACCEL_ASSIGN_OR_RETURN(StepResult result, trainer->Step(batches));
    const double step_seconds = Seconds(Clock::now() - step_start);
    const int64_t done = trainer->step();
    if (done == options.crash_at_step && env.rank == options.crash_rank) {
      Log(absl::StrCat("test hook: rank ", env.rank, " kills itself after step ", done,
                       " (ACCEL_TEST_CRASH_AT_STEP)"));
      ::kill(::getpid(), SIGKILL);
    }
    const double since_launch =
        env.launch_unix_ns > 0 ? static_cast<double>(UnixNanos() - env.launch_unix_ns) / 1e9 : 0;
    if (done != first_step_of_run) {
      timed_seconds += step_seconds;
      ++timed_steps;
    }
    last_loss = result.loss;
    if (leader) {
      const double tps = step_seconds > 0 ? tokens_per_step / step_seconds : 0;
      const double mean_step = timed_steps > 0 ? timed_seconds / timed_steps : step_seconds;
      const double eta_seconds = mean_step * static_cast<double>(total_steps - done);
      metrics << "{\"step\":" << done << ",\"loss\":" << JsonNumber(result.loss)
              << ",\"lr\":" << JsonNumber(result.lr) << ",\"grad_norm\":"
              << JsonNumber(result.grad_norm) << ",\"tokens\":" << done * tokens_per_step
              << ",\"step_seconds\":" << JsonNumber(step_seconds)
              << ",\"tokens_per_second\":" << JsonNumber(tps)
              << ",\"since_launch_seconds\":" << JsonNumber(since_launch)
              << ",\"peak_memory_bytes\":" << PeakResidentBytes()
              << ",\"buckets\":" << result.sync.buckets
              << ",\"buckets_launched_in_backward\":" << result.sync.launched_during_backward
              << ",\"backward_seconds\":" << JsonNumber(result.sync.backward_seconds)
              << ",\"comm_wait_seconds\":" << JsonNumber(result.sync.wait_seconds)
              << ",\"unix_time\":" << absl::StrFormat("%.3f", static_cast<double>(UnixNanos()) / 1e9)
              << "}\n";
      metrics.flush();
      if (first_step && env.launch_unix_ns > 0) {
        Log(absl::StrFormat("first step done %.2f s after launch", since_launch));
      }
      if (done % log_every == 0 || done == total_steps || first_step) {
        Log(absl::StrFormat("step %d/%d | loss %.4f | lr %.3e | grad_norm %.3f | %.0f tok/s | "
                            "%.0f ms/step | ETA %s",
                            done, total_steps, result.loss, result.lr, result.grad_norm, tps,
                            step_seconds * 1000, FormatDuration(eta_seconds)));
      }
    }
    first_step = false;
    if (every > 0 && done % every == 0 && done != total_steps) {
      ACCEL_RETURN_IF_ERROR(save_checkpoint());
      last_checkpoint = done;
    }
    // Every rank stops after the same step: a stop request on any rank is summed over the world.
    stop_flag.fill_(options.stop != nullptr && options.stop->load() ? 1.0 : 0.0);
    ACCEL_RETURN_IF_ERROR(world->AllReduce(stop_flag, ReduceOp::kSum));
    if (stop_flag.item<float>() > 0) {
      stopped = true;
      Log(absl::StrFormat("stop requested: stopping after step %d of %d", done, total_steps));
      break;
    }
  }
  if (trainer->step() > 0 && last_checkpoint != trainer->step()) {
    ACCEL_RETURN_IF_ERROR(save_checkpoint());
  }
  if (leader) metrics.close();
  ACCEL_RETURN_IF_ERROR(world->Barrier());
  if (!stopped && plan.training().sample_tokens() > 0) {
    // Stage 3 holds shards only: every rank gathers, then rank 0 samples without hooks.
    ACCEL_RETURN_IF_ERROR(trainer->sync().GatherAll());
    model->set_unit_hooks(nullptr);
  }
  if (leader && !stopped && plan.training().sample_tokens() > 0) {
    Log("sample:\n" + SampleText(*model, plan.training().sample_tokens(), seed, device));
  }
  if (leader) {
    Log(absl::StrFormat("%s after step %d of %d in %.1f s", stopped ? "stopped" : "done",
                        trainer->step(), total_steps, Seconds(Clock::now() - started)));
    const double mean_tps = timed_seconds > 0 ? timed_steps * tokens_per_step / timed_seconds : 0;
    Log(absl::StrFormat(
        "summary: %d steps this run, final loss %.4f, %.0f tokens/s mean (%d ranks), peak RSS "
        "%.1f MiB on rank 0, checkpoints in %s",
        trainer->step() - first_step_of_run + 1, last_loss, mean_tps, env.world_size,
        static_cast<double>(PeakResidentBytes()) / (1024.0 * 1024.0), plan.checkpoint().dir()));
  }
  WorkerResult out;
  out.steps_done = trainer->step();
  out.stopped = stopped;
  return out;
}

}  // namespace

absl::Status ReadWorkerTestHooks(const EnvLookup& lookup, WorkerOptions& options) {
  std::optional<std::string> step = lookup("ACCEL_TEST_CRASH_AT_STEP");
  if (!step.has_value()) return absl::OkStatus();
  std::optional<int64_t> step_value = ParseInt(*step);
  if (!step_value.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ACCEL_TEST_CRASH_AT_STEP='", *step, "' is not an integer"));
  }
  options.crash_at_step = *step_value;
  options.crash_rank = 0;
  if (std::optional<std::string> rank = lookup("ACCEL_TEST_CRASH_RANK")) {
    std::optional<int64_t> rank_value = ParseInt(*rank);
    if (!rank_value.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ACCEL_TEST_CRASH_RANK='", *rank, "' is not an integer"));
    }
    options.crash_rank = static_cast<int>(*rank_value);
  }
  return absl::OkStatus();
}

absl::StatusOr<WorkerResult> RunWorker(const ir::Plan& plan, const WorkerEnv& env,
                                       const WorkerOptions& options) {
  // LibTorch and c10d report failures as exceptions; none may cross into the CLI.
  try {
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

}  // namespace accel::exec
