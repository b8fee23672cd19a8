#include "executor/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_tensors.h"
#include "executor/models/tensor_parallel.h"
#include "executor/checkpoint/torch_tensors.h"
#include "executor/train/fused_adamw.h"

namespace accel::exec {
namespace {

constexpr char kModelFile[] = "model.safetensors";
constexpr char kOptimizerFile[] = "optimizer.pt";
constexpr char kRngFile[] = "rng.safetensors";
constexpr char kStateFile[] = "trainer_state.json";

absl::Status FromException(const std::string& what, const std::exception& e) {
  return absl::InternalError(absl::StrCat(what, ": ", e.what()));
}

// The devices whose default generators a checkpoint holds: the CPU, and the parameters' CUDA
// device when there is one.
std::vector<at::Device> GeneratorDevices(const std::vector<torch::Tensor>& params) {
  std::vector<at::Device> out = {at::Device(at::kCPU)};
  if (!params.empty() && params.front().is_cuda()) out.push_back(params.front().device());
  return out;
}

}  // namespace

LossFn CausalLmLoss() {
  return [](torch::nn::Module& module, const torch::Tensor& batch) {
    auto& model = dynamic_cast<CausalLm&>(module);
    const int64_t seq = batch.size(1) - 1;
    return model.ForwardLoss(batch.narrow(1, 0, seq), 0, batch.narrow(1, 1, seq));
  };
}

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(std::shared_ptr<torch::nn::Module> module, LossFn loss,
                                                         const TrainerOptions& options, ShardLayout layout,
                                                         DataParallelGroups groups, GradSyncOptions sync_options) {
  if (module == nullptr || !loss) return absl::InvalidArgumentError("trainer needs a module and a loss");
  if (absl::Status s = ValidateLrSchedule(options.schedule); !s.ok()) return s;
  if (!(options.grad_clip_norm >= 0)) return absl::InvalidArgumentError("grad_clip_norm must be >= 0");
  if (options.weight_decay < 0) return absl::InvalidArgumentError("weight_decay must be >= 0");
  if (absl::Status s = LossScaler::Validate(options.loss_scaling); !s.ok()) return s;
  std::unique_ptr<Trainer> t(new Trainer(std::move(module), std::move(loss), options, groups.dp));
  t->tp_ = groups.tp;
  t->replicated_ = groups.replicated;
  if (absl::Status s = CheckReplicatedGradGroups(layout, groups.replicated); !s.ok()) return s;
  t->scaler_ = LossScaler(options.loss_scaling);
  for (const torch::Tensor& p : t->module_->parameters()) {
    if (!p.requires_grad()) return absl::InvalidArgumentError("every parameter must require grad");
    t->params_.push_back(p);
    // Decided now: stage 3 frees the parameters, and the flat shards the optimizer sees have rank 1.
    t->decays_.push_back(p.dim() >= 2);
    t->shapes_.emplace_back(p.sizes().begin(), p.sizes().end());
    t->param_dtypes_.push_back(p.scalar_type());
  }
  if (t->params_.empty()) return absl::InvalidArgumentError("module has no trainable parameters");
  absl::StatusOr<std::unique_ptr<GradSync>> sync =
      MakeGradSync(t->params_, std::move(layout), std::move(groups), sync_options);
  if (!sync.ok()) return sync.status();
  t->sync_ = *std::move(sync);
  if (auto lm = std::dynamic_pointer_cast<CausalLm>(t->module_)) {
    lm->set_unit_hooks(t->sync_->unit_hooks());
    t->local_experts_ = lm->LocalExperts();
    t->num_experts_ = lm->config().moe.num_experts;
  }
  if (absl::Status s = t->CreateOptimizer(); !s.ok()) return s;
  return t;
}

absl::StatusOr<std::unique_ptr<Trainer>> Trainer::Create(std::shared_ptr<torch::nn::Module> module, LossFn loss,
                                                         const TrainerOptions& options,
                                                         std::shared_ptr<Communicator> dp) {
  if (module == nullptr) return absl::InvalidArgumentError("trainer needs a module and a loss");
  if (options.bucket_bytes < 1) {
    return absl::InvalidArgumentError(absl::StrCat("bucket size must be >= 1 byte, got ", options.bucket_bytes));
  }
  std::vector<std::pair<std::string, int64_t>> names;
  for (const auto& item : module->named_parameters()) names.emplace_back(item.key(), item.value().numel());
  DataParallelGroups groups;
  groups.dp = std::move(dp);
  return Create(std::move(module), std::move(loss), options,
                ShardLayout::Replicated(names, std::max<int64_t>(1, options.bucket_bytes / 4)), std::move(groups));
}

// The optimizer updates the GradSync's tensors (whole parameters, master copies or owned ranges);
// weight decay follows the module parameter's rank, not the (flat) tensor's.
absl::Status Trainer::CreateOptimizer() {
  const std::vector<torch::Tensor>& targets = sync_->OptimizerParams();
  try {
    const double lr = LearningRateAt(options_.schedule, 0);
    if (options_.optimizer == OptimizerKind::kSgd) {
      optimizer_ = std::make_unique<torch::optim::SGD>(targets, torch::optim::SGDOptions(lr).momentum(options_.momentum));
      return absl::OkStatus();
    }
    std::vector<torch::Tensor> decay;
    std::vector<torch::Tensor> no_decay;
    for (size_t i = 0; i < targets.size(); ++i) (decays_[i] ? decay : no_decay).push_back(targets[i]);
    auto make = [&](double wd) {
      return std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(lr)
                                                              .betas({options_.beta1, options_.beta2})
                                                              .eps(options_.adam_eps)
                                                              .weight_decay(wd));
    };
    std::vector<torch::optim::OptimizerParamGroup> groups;
    if (!decay.empty()) groups.emplace_back(decay, make(options_.weight_decay));
    if (!no_decay.empty()) groups.emplace_back(no_decay, make(0.0));
    // On CUDA one fused kernel per group (the CPU keeps torch::optim::AdamW, bitwise as tested).
    const bool fused = !targets.empty() && targets.front().is_cuda() && FusedAdamWAvailable();
    if (fused) {
      optimizer_ = std::make_unique<FusedAdamW>(std::move(groups), *make(options_.weight_decay));
    } else {
      optimizer_ = std::make_unique<torch::optim::AdamW>(std::move(groups), *make(options_.weight_decay));
    }
  } catch (const std::exception& e) {
    return FromException("creating the optimizer failed", e);
  }
  return absl::OkStatus();
}

Trainer::Trainer(std::shared_ptr<torch::nn::Module> module, LossFn loss, const TrainerOptions& options,
                 std::shared_ptr<Communicator> dp)
    : module_(std::move(module)), loss_(std::move(loss)), options_(options), dp_(std::move(dp)) {}

Trainer::~Trainer() {
  if (auto lm = std::dynamic_pointer_cast<CausalLm>(module_)) lm->set_unit_hooks(nullptr);
}

absl::StatusOr<StepResult> Trainer::Step(const std::vector<torch::Tensor>& micro_batches) {
  if (micro_batches.empty()) return absl::InvalidArgumentError("a step needs at least one micro-batch");
  try {
    return StepImpl(micro_batches);
  } catch (const std::exception& e) {
    return FromException(absl::StrCat("training step ", step_, " failed"), e);
  }
}

absl::Status Trainer::SetPipeline(PipelineContext context) {
  auto lm = std::dynamic_pointer_cast<CausalLm>(module_);
  if (lm == nullptr) return absl::InvalidArgumentError("a pipeline stage's module must be a CausalLm");
  tied_index_ = -1;
  if (!context.tied_parameter.empty()) {
    int i = 0;
    for (const auto& item : module_->named_parameters()) {
      if (item.key() == context.tied_parameter) tied_index_ = i;
      ++i;
    }
    if (tied_index_ < 0 || context.embedding == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("pipeline stage ", context.stage.index(),
                                                     ": the tied parameter ", context.tied_parameter,
                                                     " is not in the module or has no embedding group"));
    }
  }
  pipeline_ = std::move(context);
  return absl::OkStatus();
}

absl::StatusOr<double> Trainer::RunMicroSteps(const std::vector<torch::Tensor>& micro_batches) {
  if (pipeline_.has_value()) return RunPipelineMicroSteps(micro_batches);
  const torch::Device device = micro_batches.front().device();
  const auto accumulation = static_cast<int64_t>(micro_batches.size());
  double loss_sum = 0;
  for (int64_t i = 0; i < accumulation; ++i) {
    sync_->BeginMicroStep(/*last=*/i + 1 == accumulation);
    torch::Tensor loss;
    {
      AutocastScope autocast(device.type(), options_.precision);
      loss = loss_(*module_, micro_batches[i].to(device));
    }
    (loss * (scaler_.scale() / static_cast<double>(accumulation))).backward();
    loss_sum += loss.item<double>();
    if (absl::Status s = sync_->EndMicroStep(); !s.ok()) return s;
  }
  if (absl::Status s = SumReplicatedGradients(); !s.ok()) return s;
  return loss_sum;
}

absl::StatusOr<double> Trainer::RunPipelineMicroSteps(const std::vector<torch::Tensor>& micro_batches) {
  auto& model = dynamic_cast<CausalLm&>(*module_);
  const torch::Device device = micro_batches.front().device();
  StageCompute compute;
  compute.forward = [&](const torch::Tensor& input, int chunk) {
    AutocastScope autocast(device.type(), options_.precision);
    return model.ForwardStage(input, chunk);
  };
  compute.loss = [&](const torch::Tensor& input, int chunk, const torch::Tensor& targets) {
    AutocastScope autocast(device.type(), options_.precision);
    return model.ForwardLoss(input, chunk, targets);
  };
  std::vector<torch::Tensor> on_device;
  for (const torch::Tensor& b : micro_batches) on_device.push_back(b.to(device));
  last_pipeline_step_ = PipelineStepRecord{};
  const double factor = scaler_.scale() / static_cast<double>(micro_batches.size());
  absl::StatusOr<double> loss_sum =
      RunPipelineStage(*pipeline_, on_device, factor, *sync_, compute, &last_pipeline_step_);
  if (!loss_sum.ok()) return loss_sum.status();
  if (absl::Status s = SumTiedGradients(); !s.ok()) return s;
  if (absl::Status s = SumReplicatedGradients(); !s.ok()) return s;
  // Only the last stage has the loss: every stage reports it.
  torch::Tensor l = torch::full({1}, *loss_sum, torch::TensorOptions().dtype(torch::kDouble).device(device));
  if (absl::Status s = pipeline_->pp->AllReduce(l, ReduceOp::kSum); !s.ok()) return s;
  return l.item<double>();
}

absl::Status Trainer::SumTiedGradients() {
  if (tied_index_ < 0) return absl::OkStatus();
  torch::Tensor target = sync_->OptimizerParams()[tied_index_];
  if (!target.grad().defined()) target.mutable_grad() = torch::zeros_like(target);
  torch::Tensor grad = target.grad();
  torch::Tensor on_device = grad.to(params_.front().device());
  if (absl::Status s = pipeline_->embedding->AllReduce(on_device, ReduceOp::kSum); !s.ok()) return s;
  if (!on_device.is_same(grad)) grad.copy_(on_device);
  return absl::OkStatus();
}

absl::Status Trainer::SumReplicatedGradients() {
  return exec::SumReplicatedGradients(sync_->layout(), sync_->OptimizerParams(), replicated_,
                                      params_.front().device());
}

MoeStepState* Trainer::MoeState() const {
  auto* lm = dynamic_cast<CausalLm*>(module_.get());
  return lm == nullptr ? nullptr : lm->moe_state().get();
}

absl::StatusOr<MoeStepStats> Trainer::TakeMoeStats(const torch::Device& device) {
  MoeStepState* state = MoeState();
  if (state == nullptr) return MoeStepStats{};
  MoeStepStats stats = state->Take();
  const auto experts = static_cast<int64_t>(dynamic_cast<CausalLm&>(*module_).config().moe.num_experts);
  stats.expert_counts.resize(static_cast<size_t>(experts), 0);  // a stage without MoE blocks has none
  // fp64 holds the counts exactly (far below 2^53).
  std::vector<double> sums(stats.expert_counts.begin(), stats.expert_counts.end());
  sums.push_back(stats.aux_loss_sum);
  sums.push_back(static_cast<double>(stats.aux_losses));
  torch::Tensor t = torch::tensor(sums, torch::kDouble).to(device);
  for (Communicator* group : {dp_.get(), pipeline_.has_value() ? pipeline_->pp.get() : nullptr}) {
    if (group != nullptr && group->Size() > 1) ACCEL_RETURN_IF_ERROR(group->AllReduce(t, ReduceOp::kSum));
  }
  t = t.cpu().contiguous();
  const double* summed = t.data_ptr<double>();
  for (int64_t e = 0; e < experts; ++e) stats.expert_counts[e] = static_cast<int64_t>(summed[e]);
  stats.aux_loss_sum = summed[experts];
  stats.aux_losses = static_cast<int64_t>(summed[experts + 1]);
  return stats;
}

absl::StatusOr<StepResult> Trainer::StepImpl(const std::vector<torch::Tensor>& micro_batches) {
  module_->train();
  const torch::Device device = micro_batches.front().device();
  const auto accumulation = static_cast<int64_t>(micro_batches.size());
  // The load-balancing losses are terms of the objective backward scales so.
  if (MoeStepState* moe = MoeState()) moe->set_objective_scale(scaler_.scale() / static_cast<double>(accumulation));
  absl::StatusOr<double> loss_sum = RunMicroSteps(micro_batches);
  if (!loss_sum.ok()) return loss_sum.status();
  StepResult result;
  result.step = step_;
  result.sync = sync_->stats();
  result.loss = *loss_sum / static_cast<double>(accumulation);
  if (dp_ != nullptr && dp_->Size() > 1) {
    torch::Tensor l = torch::full({1}, result.loss, torch::TensorOptions().dtype(torch::kDouble).device(device));
    if (absl::Status s = dp_->AllReduce(l, ReduceOp::kAvg); !s.ok()) return s;
    result.loss = l.item<double>();
  }
  // Each cp rank's loss is the mean over its own chunks of the same sequences.
  if (Communicator* cp = replicated_.context.get(); cp != nullptr && cp->Size() > 1) {
    torch::Tensor l = torch::full({1}, result.loss, torch::TensorOptions().dtype(torch::kDouble).device(device));
    ACCEL_RETURN_IF_ERROR(cp->AllReduce(l, ReduceOp::kAvg));
    result.loss = l.item<double>();
  }
  result.loss_scale = scaler_.scale();
  ACCEL_ASSIGN_OR_RETURN(result.moe, TakeMoeStats(device));
  absl::StatusOr<double> norm = UnscaleAndClipGradients();
  if (!norm.ok()) return norm.status();
  result.grad_norm = *norm;
  result.lr = LearningRateAt(options_.schedule, step_);
  // The norm is the same on every rank (GradNormSquared), so every rank skips alike.
  result.skipped = !scaler_.Update(/*found_inf=*/!std::isfinite(*norm));
  if (!result.skipped) {
    for (torch::optim::OptimizerParamGroup& group : optimizer_->param_groups()) group.options().set_lr(result.lr);
    optimizer_->step();
  }
  // Also after a skipped step: it ends the step's synchronization (the parameters it publishes
  // are unchanged).
  if (absl::Status s = sync_->AfterOptimizerStep(); !s.ok()) return s;
  ++step_;
  return result;
}

// Global L2 norm of the averaged gradient (fp64 sums, so the clipping decision does not depend on
// summation order), then the same coefficient as torch.nn.utils.clip_grad_norm_. With loss
// scaling the gradients are first divided by the scale (exact for a power of two) and the norm is
// that of the unscaled gradient; a non-finite norm (overflow) leaves the gradients as they are.
absl::StatusOr<double> Trainer::UnscaleAndClipGradients() {
  torch::NoGradGuard no_grad;
  absl::StatusOr<double> squared = sync_->GradNormSquared();
  if (!squared.ok()) return squared.status();
  if (pipeline_.has_value()) {
    // Each stage summed its own parameters (a tied copy not counted): add the stages.
    torch::Tensor sq = torch::full({1}, *squared, torch::TensorOptions().dtype(torch::kDouble).device(params_.front().device()));
    if (absl::Status s = pipeline_->pp->AllReduce(sq, ReduceOp::kSum); !s.ok()) return s;
    squared = sq.item<double>();
  }
  const double scale = scaler_.scale();
  const double norm = std::sqrt(*squared) / scale;
  if (!std::isfinite(norm)) return norm;
  if (scale != 1.0) {
    for (const torch::Tensor& t : sync_->OptimizerParams()) {
      if (t.grad().defined()) t.grad().mul_(1.0 / scale);
    }
  }
  if (options_.grad_clip_norm > 0) {
    const double coef = options_.grad_clip_norm / (norm + 1e-6);
    if (coef < 1.0) {
      for (const torch::Tensor& t : sync_->OptimizerParams()) {
        if (t.grad().defined()) t.grad().mul_(coef);
      }
    }
  }
  return norm;
}

absl::StatusOr<std::vector<CheckpointFile>> Trainer::SaveState(const GlobalDataPosition& data_position) const {
  std::vector<CheckpointFile> files;
  const bool sharded = ShardedCheckpoint();
  try {
    if (!sharded) {
    SafetensorsFile model;
    model.metadata["format"] = "pt";
    for (const auto& item : module_->named_parameters()) {
      absl::StatusOr<SafetensorsTensor> record = TensorToSafetensors(item.key(), item.value());
      if (!record.ok()) return record.status();
      model.tensors.push_back(*std::move(record));
    }
    absl::StatusOr<std::string> model_bytes = SerializeSafetensors(model);
    if (!model_bytes.ok()) return model_bytes.status();
    files.push_back({kModelFile, *std::move(model_bytes)});

    torch::serialize::OutputArchive archive;
    optimizer_->save(archive);
    std::ostringstream optimizer_bytes;
    archive.save_to(optimizer_bytes);
    files.push_back({kOptimizerFile, optimizer_bytes.str()});
    }

    // The CPU generator always; on CUDA also the device's generator ("cuda"), so a CUDA run
    // resumes its random stream exactly; a checkpoint moves between CPU and CUDA runs, each
    // restoring the states it has.
    SafetensorsFile rng;
    for (const at::Device& device : GeneratorDevices(params_)) {
      at::Generator gen = at::globalContext().defaultGenerator(device);
      at::Tensor state;
      {
        std::lock_guard<std::mutex> lock(gen.mutex());
        state = gen.get_state();
      }
      absl::StatusOr<SafetensorsTensor> record = TensorToSafetensors(device.is_cuda() ? "cuda" : "cpu", state);
      if (!record.ok()) return record.status();
      rng.tensors.push_back(*std::move(record));
    }
    absl::StatusOr<std::string> rng_bytes = SerializeSafetensors(rng);
    if (!rng_bytes.ok()) return rng_bytes.status();
    files.push_back({kRngFile, *std::move(rng_bytes)});
  } catch (const std::exception& e) {
    return FromException("saving training state failed", e);
  }
  nlohmann::json json = {{"step", step_},
                         {"data_epoch", data_position.epoch},
                         {"data_samples", data_position.samples},
                         {"loss_scale", scaler_.scale()},
                         {"loss_scale_growth_tracker", scaler_.growth_tracker()}};
  files.push_back({kStateFile, json.dump(2) + "\n"});
  return files;
}

absl::StatusOr<GlobalDataPosition> Trainer::LoadState(const std::string& dir) {
  absl::StatusOr<std::string> state_bytes = CheckpointStore::ReadFile(dir, kStateFile);
  if (!state_bytes.ok()) return state_bytes.status();
  nlohmann::json state = nlohmann::json::parse(*state_bytes, nullptr, /*allow_exceptions=*/false);
  if (state.is_discarded() || !state.is_object() || !state.contains("step") || !state["step"].is_number_integer() ||
      !state.contains("data_epoch") || !state["data_epoch"].is_number_integer() || !state.contains("data_samples") ||
      !state["data_samples"].is_number_integer()) {
    return absl::DataLossError(absl::StrCat(dir, ": ", kStateFile, " is malformed"));
  }

  // The checkpoint's format decides how to read it, not this run's layout: sharded ranges can be
  // read by any layout, stage 0 included (resharding resume).
  absl::StatusOr<std::vector<std::string>> listed = CheckpointStore::ManifestFiles(dir);
  if (!listed.ok()) return listed.status();
  const bool sharded = std::find(listed->begin(), listed->end(), kModelFile) == listed->end();
  if (!sharded && ShardedCheckpoint()) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, " is an unsharded checkpoint (", kModelFile, ", ", kOptimizerFile,
        "): it resumes only at sharding.stage 0 with fp32 parameters and no tensor or pipeline "
        "parallelism; "
        "`accel export` turns its weights into model.safetensors"));
  }
  absl::StatusOr<std::string> optimizer_bytes;
  if (sharded) {
    absl::StatusOr<ShardedTensorReader> reader = ShardedTensorReader::Open(dir);
    if (!reader.ok()) return reader.status();
    if (absl::Status s = LoadShard(*reader, state["step"].get<int64_t>()); !s.ok()) return s;
  } else {
    absl::StatusOr<std::string> model_bytes = CheckpointStore::ReadFile(dir, kModelFile);
    if (!model_bytes.ok()) return model_bytes.status();
    const std::string model_source = absl::StrCat(dir, "/", kModelFile);
    absl::StatusOr<SafetensorsFile> model = ParseSafetensors(*model_bytes, model_source);
    if (!model.ok()) return model.status();
    std::vector<std::pair<std::string, at::Tensor>> targets;
    for (const auto& item : module_->named_parameters()) targets.emplace_back(item.key(), item.value());
    if (absl::Status s = LoadInto(*model, targets, model_source); !s.ok()) return s;
    optimizer_bytes = CheckpointStore::ReadFile(dir, kOptimizerFile);
    if (!optimizer_bytes.ok()) return optimizer_bytes.status();
  }
  absl::StatusOr<std::string> rng_bytes = CheckpointStore::ReadFile(dir, kRngFile);
  if (!rng_bytes.ok()) return rng_bytes.status();
  absl::StatusOr<SafetensorsFile> rng = ParseSafetensors(*rng_bytes, absl::StrCat(dir, "/", kRngFile));
  if (!rng.ok()) return rng.status();
  if (rng->tensors.empty() || rng->tensors[0].name != "cpu") {
    return absl::DataLossError(absl::StrCat(dir, ": ", kRngFile, " lacks the cpu generator state"));
  }
  try {
    if (!sharded) {
      std::istringstream in(*optimizer_bytes);
      torch::serialize::InputArchive archive;
      archive.load_from(in, params_.front().device());
      optimizer_->load(archive);
    }
    for (const at::Device& device : GeneratorDevices(params_)) {
      const std::string name = device.is_cuda() ? "cuda" : "cpu";
      auto it = std::find_if(rng->tensors.begin(), rng->tensors.end(),
                             [&name](const SafetensorsTensor& t) { return t.name == name; });
      if (it == rng->tensors.end()) continue;  // a CPU run's checkpoint resumed on CUDA
      absl::StatusOr<at::Tensor> rng_state = SafetensorsToTensor(*it);
      if (!rng_state.ok()) return rng_state.status();
      at::Generator gen = at::globalContext().defaultGenerator(device);
      std::lock_guard<std::mutex> lock(gen.mutex());
      gen.set_state(*rng_state);
    }
  } catch (const std::exception& e) {
    return FromException(absl::StrCat("restoring optimizer/RNG state from ", dir, " failed"), e);
  }
  if (scaler_.enabled() && state.contains("loss_scale") && state["loss_scale"].is_number() &&
      state.contains("loss_scale_growth_tracker") && state["loss_scale_growth_tracker"].is_number_integer()) {
    absl::Status s = scaler_.Restore(state["loss_scale"].get<double>(),
                                     state["loss_scale_growth_tracker"].get<int64_t>());
    if (!s.ok()) return absl::DataLossError(absl::StrCat(dir, ": ", kStateFile, ": ", s.message()));
  }
  step_ = state["step"].get<int64_t>();
  return GlobalDataPosition{state["data_epoch"].get<int64_t>(), state["data_samples"].get<int64_t>()};
}

std::vector<torch::Tensor> NextMicroBatches(WindowDataset& dataset, int64_t micro_batch_size, int64_t accumulation,
                                            const torch::Device& device) {
  const int64_t width = dataset.options().seq_len + 1;
  std::vector<torch::Tensor> out;
  for (int64_t i = 0; i < accumulation; ++i) {
    std::vector<int64_t> ids;
    dataset.NextBatch(micro_batch_size, ids);
    out.push_back(torch::tensor(ids, torch::kLong).view({micro_batch_size, width}).to(device));
  }
  return out;
}

}  // namespace accel::exec
