// The training step: forward, loss, backward with bucketed data-parallel gradient averaging,
// gradient accumulation, global-norm clipping, optimizer update with the learning-rate schedule,
// and exact save/restore of all training state.
#ifndef ACCEL_EXECUTOR_TRAIN_TRAINER_H_
#define ACCEL_EXECUTOR_TRAIN_TRAINER_H_

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/checkpoint/checkpoint_store.h"
#include "executor/communicator.h"
#include "executor/data/window_dataset.h"
#include "executor/models/causal_lm.h"
#include "executor/train/autocast.h"
#include "executor/train/grad_bucketer.h"
#include "executor/train/lr_schedule.h"

namespace accel::exec {

// Mean loss of one micro-batch as a scalar tensor (autograd-connected to the module's parameters).
using LossFn = std::function<torch::Tensor(torch::nn::Module& module, const torch::Tensor& batch)>;

// Next-token cross-entropy of a CausalLm (Shannon; the standard LM objective, as in Hugging Face's
// causal-LM loss): batch is [b, seq+1] token ids; inputs batch[:, :-1], targets batch[:, 1:],
// mean over b*seq positions, computed in fp32.
LossFn CausalLmLoss();

// Optimizer family. kAdamW: decoupled weight decay (Loshchilov & Hutter 2019), torch::optim::AdamW;
// weight decay applies to parameters with >= 2 dims (matrices and embeddings), not to biases and
// norm weights (nanoGPT's grouping). kSgd: plain SGD without momentum (tests, Accelerate's example).
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
  // Clip gradients to this global L2 norm (Pascanu et al. 2013); 0 disables clipping.
  double grad_clip_norm = 0.0;
  // Data-parallel all-reduce bucket capacity in bytes (PyTorch DDP's default is 25 MiB).
  int64_t bucket_bytes = 25 * 1024 * 1024;
  // Forward compute precision (parameters stay fp32).
  ComputePrecision precision = ComputePrecision::kFp32;
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
};

// Trains one model replica. Every data-parallel rank owns a Trainer over an identically initialized
// module and calls Step with its own micro-batches in lockstep.
class Trainer {
 public:
  // module: parameters on their final device; loss: see LossFn; dp: the data-parallel group or
  // nullptr for a single replica. Errors: InvalidArgument for bad options.
  static absl::StatusOr<std::unique_ptr<Trainer>> Create(std::shared_ptr<torch::nn::Module> module, LossFn loss,
                                                         const TrainerOptions& options,
                                                         std::shared_ptr<Communicator> dp);
  ~Trainer();

  // One update from micro_batches.size() accumulation micro-steps. Each micro-step's loss is scaled
  // by 1/accumulation so the gradient equals that of the mean loss over all micro-batches;
  // gradients are averaged over data-parallel ranks only on the last micro-step.
  // Errors: InvalidArgument for an empty list; Internal for LibTorch failures; communicator errors.
  absl::StatusOr<StepResult> Step(const std::vector<torch::Tensor>& micro_batches);

  // Updates done so far (the index of the next update).
  int64_t step() const { return step_; }

  // All state needed to continue training exactly, as checkpoint files:
  //   model.safetensors      parameters under their named_parameters() names (metadata format=pt);
  //   optimizer.pt           the optimizer's own serialization (moments and per-parameter step);
  //   rng.safetensors        the default CPU generator state (and CUDA's, when used);
  //   trainer_state.json     {"step", "data_epoch", "data_index"}.
  // Errors: Internal when serialization fails.
  absl::StatusOr<std::vector<CheckpointFile>> SaveState(const DataPosition& data_position) const;

  // Restores the state SaveState wrote into checkpoint directory dir (files are checked against
  // the manifest) and returns the data position to Seek the dataset to. Errors: DataLoss for a
  // corrupt file, InvalidArgument for parameter name/shape mismatches, Internal otherwise.
  absl::StatusOr<DataPosition> LoadState(const std::string& dir);

 private:
  Trainer(std::shared_ptr<torch::nn::Module> module, LossFn loss, const TrainerOptions& options,
          std::shared_ptr<Communicator> dp);
  absl::StatusOr<StepResult> StepImpl(const std::vector<torch::Tensor>& micro_batches);

  std::shared_ptr<torch::nn::Module> module_;
  LossFn loss_;
  TrainerOptions options_;
  std::shared_ptr<Communicator> dp_;
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  std::unique_ptr<GradBucketer> bucketer_;
  int64_t step_ = 0;
};

// Stacks windows from WindowDataset::NextBatch ([count * (seq_len + 1)] ids) into micro-batches of
// micro_batch_size rows each, as int64 tensors on device: returns accumulation tensors of shape
// [micro_batch_size, seq_len + 1], reading accumulation * micro_batch_size windows.
std::vector<torch::Tensor> NextMicroBatches(WindowDataset& dataset, int64_t micro_batch_size,
                                            int64_t accumulation, const torch::Device& device);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_TRAINER_H_
