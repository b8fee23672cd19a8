// The training step: forward, loss, backward with bucketed data-parallel gradient averaging,
// gradient accumulation, global-norm clipping, optimizer update with the learning-rate schedule,
// and exact save/restore of all training state.
#ifndef ACCEL_EXECUTOR_TRAIN_TRAINER_H_
#define ACCEL_EXECUTOR_TRAIN_TRAINER_H_

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/pretrained.h"
#include "executor/communicator.h"
#include "data/window_dataset.h"
#include "executor/models/causal_lm.h"
#include "executor/train/autocast.h"
#include "executor/models/moe/moe_step_state.h"
#include "executor/train/grad_sync.h"
#include "executor/train/shard_layout.h"
#include "executor/train/loss_scaler.h"
#include "executor/train/lr_schedule.h"
#include "executor/train/pipeline_schedule.h"

namespace accel::exec {

class ShardedTensorReader;

// Mean loss of one micro-batch as a scalar tensor (autograd-connected to the module's parameters).
using LossFn = std::function<torch::Tensor(torch::nn::Module& module, const torch::Tensor& batch)>;

// Next-token cross-entropy of a CausalLm (Shannon; the standard LM objective, as in Hugging Face's
// causal-LM loss): batch is [b, seq+1] token ids; inputs batch[:, :-1], targets batch[:, 1:],
// mean over b*seq positions, the softmax in fp32; the head and the loss run in chunks of tokens
// (CausalLm::ForwardLoss), vocabulary-parallel under tensor parallelism, the same value on every
// tp rank.
LossFn CausalLmLoss();

// Optimizer family. kAdamW: decoupled weight decay (Loshchilov & Hutter 2019), torch::optim::AdamW;
// weight decay applies to parameters with >= 2 dims (matrices and embeddings), not to biases and
// norm weights (nanoGPT's grouping). kSgd: torch::optim::SGD with TrainerOptions::momentum (0: plain SGD).
enum class OptimizerKind { kAdamW, kSgd };

// Hyperparameters of a Trainer.
struct TrainerOptions {
  OptimizerKind optimizer = OptimizerKind::kAdamW;
  // Peak rate, warmup and decay; see LrSchedule.
  LrSchedule schedule;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double adam_eps = 1e-8;
  double weight_decay = 0.0;
  // SGD momentum (PyTorch's formulation: buf = momentum * buf + grad; p -= lr * buf).
  double momentum = 0.0;
  // Clip gradients to this global L2 norm (Pascanu et al. 2013); 0 disables clipping.
  double grad_clip_norm = 0.0;
  // Bucket capacity in bytes for Create without a layout (PyTorch DDP's default is 25 MiB); a
  // plan's layout brings its own buckets.
  int64_t bucket_bytes = 25 * 1024 * 1024;
  // Forward compute precision (parameters stay fp32).
  ComputePrecision precision = ComputePrecision::kFp32;
  // Loss scaling (fp16): the loss is scaled before backward, the gradients unscaled before
  // clipping and the optimizer step, and a step with non-finite gradients is skipped.
  LossScalerOptions loss_scaling;
};

// Result of one optimizer update.
struct StepResult {
  // The update's index (0-based; Trainer::step() is one more afterwards).
  int64_t step = 0;
  // Mean of the micro-batch losses, averaged over data-parallel ranks.
  double loss = 0;
  // Global L2 norm of the averaged gradient before clipping.
  double grad_norm = 0;
  // Learning rate used for this update.
  double lr = 0;
  // Gradient synchronization statistics (zeros without data parallelism).
  GradSyncStats sync;
  // The loss scale this step's backward used (1 without loss scaling).
  double loss_scale = 1.0;
  // True when the gradients overflowed and the optimizer did not step (loss scaling only); the
  // step still counts and consumed its data, as PyTorch's GradScaler and DeepSpeed count it.
  bool skipped = false;
  // Mixture of experts: the step's routing summed over the data-parallel ranks, the pipeline
  // stages' MoE blocks and the micro-batches (once per tp group); empty counts in a dense model.
  MoeStepStats moe;
};

// Trains one model replica. Every data-parallel rank owns a Trainer over an identically initialized
// module and calls Step with its own micro-batches in lockstep.
class Trainer {
 public:
  // module: parameters on their final device and dtype; loss: see LossFn; layout: the plan's
  // sharding for this rank (ShardLayout::FromPlan) over module->named_parameters(); groups: the
  // data-parallel communicators (GradSync). A CausalLm gets the stage's unit hooks.
  // Errors: InvalidArgument for bad options or a layout that does not match the module.
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(std::shared_ptr<torch::nn::Module> module, LossFn loss,
                                                         const TrainerOptions& options, ShardLayout layout,
                                                         DataParallelGroups groups,
                                                         GradSyncOptions sync_options = {});

  // Plain data parallelism without a plan (tests, tools): stage 0, buckets of
  // options.bucket_bytes filled in reverse parameter order; dp may be nullptr (one replica).
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(std::shared_ptr<torch::nn::Module> module, LossFn loss,
                                                         const TrainerOptions& options,
                                                         std::shared_ptr<Communicator> dp);
  ~Trainer();

  // Makes this trainer one stage of a pipeline (context.num_stages > 1; the module must be a
  // CausalLm holding that stage): Step then runs the plan's op list for the stage
  // (RunPipelineStage), sums the tied embedding's gradients over context.embedding, reports the
  // last stage's loss on every stage and takes the gradient norm over all stages.
  // Errors: InvalidArgument when the module is no CausalLm or lacks context.tied_parameter.
  absl::Status SetPipeline(PipelineContext context);

  // What the last Step did on this pipeline stage (empty without a pipeline).
  const PipelineStepRecord& last_pipeline_step() const { return last_pipeline_step_; }

  // One update from micro_batches.size() accumulation micro-steps. Each micro-step's loss is scaled
  // by 1/accumulation so the gradient equals that of the mean loss over all micro-batches;
  // gradients are averaged over data-parallel ranks only on the last micro-step.
  // Errors: InvalidArgument for an empty list; Internal for LibTorch failures; communicator errors.
  absl::StatusOr<StepResult> Step(const std::vector<torch::Tensor>& micro_batches);

  // Updates done so far (the index of the next update).
  int64_t step() const { return step_; }

  // The gradient synchronization this trainer runs (its layout, stats and, for stage 3, the
  // gathering of parameters before sampling).
  GradSync& sync() { return *sync_; }

  // All state needed to continue training exactly, as checkpoint files:
  //   model.safetensors      parameters under their named_parameters() names (metadata format=pt);
  //   optimizer.pt           the optimizer's own serialization (moments and per-parameter step);
  //   rng.safetensors        the default CPU generator state (and CUDA's, when used);
  //   trainer_state.json     {"step", "data_epoch", "data_samples", "loss_scale",
  //                          "loss_scale_growth_tracker"}: the global data position
  //                          (WindowDataset::GlobalPosition), valid for any data-parallel degree,
  //                          and the loss scaler's state.
  // Errors: Internal when serialization fails.
  absl::StatusOr<std::vector<CheckpointFile>> SaveState(const GlobalDataPosition& data_position) const;

  // True when the model and optimizer state are saved as sharded ranges (SaveShard) rather than
  // in SaveState's model.safetensors/optimizer.pt: sharding stages 1–3, tensor parallelism, and
  // 16-bit parameters (whose fp32 master weights the single-file format lacks).
  bool ShardedCheckpoint() const {
    return sync_->layout().stage >= 1 || TpSize() > 1 || pipeline_.has_value() || ExpertParallel() ||
           std::any_of(param_dtypes_.begin(), param_dtypes_.end(), [](auto t) { return t != torch::kFloat; });
  }

  // This rank's shard file (checkpoint/sharded_tensors.h) for a sharded checkpoint:
  // for each parameter the owned flat range of its value (parameter dtype), of its fp32 master
  // weights ("optimizer.master.NAME", 16-bit parameters), and of its optimizer state
  // ("optimizer.exp_avg.NAME", "optimizer.exp_avg_sq.NAME" for AdamW, "optimizer.momentum.NAME"
  // for SGD). Whole tensors (stage 0) contribute the range their dp_shard index owns, so the
  // ranks of one replica together write every element once. Under tensor parallelism a tp-split
  // parameter's tensors are stored tp-major, global shape [tp, local shape...] with tp rank r's
  // slice at flat offset r·numel, and replicated ones by tp rank 0 only; a checkpoint resumes
  // only under the same tensor-parallel degree (LoadState says so otherwise). Errors: Internal.
  absl::StatusOr<std::string> SaveShard() const;

  // Restores the state SaveState wrote into checkpoint directory dir (files are checked against
  // the manifest) and returns the global data position to SeekGlobal the dataset to. Errors:
  // DataLoss for a corrupt file or a trainer_state.json without data_samples (written before
  // positions were global: "DIR: trainer_state.json is malformed"), InvalidArgument for parameter
  // name/shape mismatches, Internal otherwise.
  absl::StatusOr<GlobalDataPosition> LoadState(const std::string& dir);

  // Starts from the Hugging Face weights at `path` (spec model.init_from; a safetensors file or
  // directory as PretrainedCheckpoint::Open takes it): every parameter's optimizer tensor (its
  // fp32 master or the parameter itself, GradSync::OptimizerParams) receives the checkpoint's
  // values of the range this rank owns — the owned flat range of its tensor-parallel slice under
  // sharding stages 1–3, the whole slice where the optimizer tensor is whole (stage 0) — and
  // the parameters are then published (all-gathered at stages 1–2) as after an update. So each
  // rank copies out of the mapped files only the bytes it owns (ReadPretrainedPart: plus at most
  // a partial row at each end of a range), and a 16-bit run keeps the checkpoint's fp32 values in
  // its master weights. A pipeline stage's tied head copy reads the word embedding. Rows past a
  // checkpoint's shorter vocabulary keep their seeded values. `stats`, when given, receives what
  // was copied. Errors: those of ReadPretrainedPart; communicator errors from the publish.
  absl::Status LoadPretrained(const std::string& path, PretrainedReadStats* stats = nullptr);

 private:
  Trainer(std::shared_ptr<torch::nn::Module> module, LossFn loss, const TrainerOptions& options,
          std::shared_ptr<Communicator> dp);
  absl::Status CreateOptimizer();
  absl::StatusOr<StepResult> StepImpl(const std::vector<torch::Tensor>& micro_batches);
  // The micro-steps of one update, forward and backward: Σ of the micro-batch losses, or of the
  // last stage's in a pipeline (where RunPipelineStage runs them), summed over pp.
  absl::StatusOr<double> RunMicroSteps(const std::vector<torch::Tensor>& micro_batches);
  absl::StatusOr<double> RunPipelineMicroSteps(const std::vector<torch::Tensor>& micro_batches);
  // Pipeline: the tied embedding's and its copy's gradients summed over the embedding group.
  absl::Status SumTiedGradients();
  // After the micro-steps: tp-replicated parameters' gradients summed over their groups.
  absl::Status SumReplicatedGradients();
  absl::StatusOr<double> UnscaleAndClipGradients();
  // Mixture of experts: what the MoE blocks recorded this step, summed over dp and pp.
  absl::StatusOr<MoeStepStats> TakeMoeStats(const torch::Device& device);
  // The model's MoE state, null for a dense model or a module that is not a CausalLm.
  MoeStepState* MoeState() const;
  // Reads this layout's ranges of every parameter, master copy and optimizer state from a
  // sharded checkpoint (any layout wrote it), then publishes the parameters.
  absl::Status LoadShard(const ShardedTensorReader& reader, int64_t step);

  std::shared_ptr<torch::nn::Module> module_;
  LossFn loss_;
  TrainerOptions options_;
  std::shared_ptr<Communicator> dp_;
  std::shared_ptr<Communicator> tp_;  // DataParallelGroups::tp (null: no tensor parallelism)
  ReplicatedGradGroups replicated_;   // DataParallelGroups::replicated
  int64_t TpSize() const { return tp_ == nullptr ? 1 : tp_->Size(); }
  int64_t TpRank() const { return tp_ == nullptr ? 0 : tp_->Rank(); }
  // Mixture of experts: the routed experts [first, end) of num_experts_ this rank holds
  // (CausalLm::LocalExperts); all of them, or none in a dense model, without expert parallelism.
  std::pair<int64_t, int64_t> local_experts_{0, 0};
  int64_t num_experts_ = 0;
  bool ExpertParallel() const { return local_experts_.second - local_experts_.first < num_experts_; }
  std::vector<torch::Tensor> params_;
  std::vector<bool> decays_;
  std::vector<std::vector<int64_t>> shapes_;       // whole parameter shapes
  std::vector<torch::ScalarType> param_dtypes_;  // per parameter: weight decay applies (matrices and embeddings)
  std::unique_ptr<GradSync> sync_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  LossScaler scaler_{LossScalerOptions{}};
  int64_t step_ = 0;
  std::optional<PipelineContext> pipeline_;  // set by SetPipeline (pp > 1)
  int tied_index_ = -1;                      // pipeline: index of context.tied_parameter
  PipelineStepRecord last_pipeline_step_;
};

// Stacks windows from WindowDataset::NextBatch ([count * (seq_len + 1)] ids) into micro-batches of
// micro_batch_size rows each, as int64 tensors on device: returns accumulation tensors of shape
// [micro_batch_size, seq_len + 1], reading accumulation * micro_batch_size windows.
std::vector<torch::Tensor> NextMicroBatches(WindowDataset& dataset, int64_t micro_batch_size,
                                            int64_t accumulation, const torch::Device& device);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_TRAINER_H_
