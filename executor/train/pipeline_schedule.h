// One pipeline stage's part of an optimizer step: the executor interprets the plan's op list for
// its stage (ir::PipelineStage.ops: forward, backward, send and receive per microbatch) in the
// order the plan gives and never re-derives a schedule (GPipe, Huang et al. 2019; 1F1B,
// Narayanan et al. 2021, as planned by the schedule-pipeline pass).
#ifndef ACCEL_EXECUTOR_TRAIN_PIPELINE_SCHEDULE_H_
#define ACCEL_EXECUTOR_TRAIN_PIPELINE_SCHEDULE_H_

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/communicator.h"
#include "executor/train/grad_sync.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// The pipeline side of one rank, from the plan.
struct PipelineContext {
  // The "pp" group: its group rank is the stage index (the plan lists ranks by stage).
  std::shared_ptr<Communicator> pp;
  // The "embedding" group (first and last stage; tied embeddings with pp > 1), else null.
  std::shared_ptr<Communicator> embedding;
  // This rank's stage and its op list (plan.pipeline.stages(stage)), and the number of stages.
  ir::PipelineStage stage;
  int num_stages = 1;
  // The virtual stage of each of the stage's model chunks (ir::StageChunks: {index} without
  // interleaving), and the number of virtual stages (num_stages × chunks).
  std::vector<int> chunk_virtual_stages = {0};
  int num_virtual_stages = 1;
  // For each op of the stage's list, the index of the op at the other end of its message in the
  // peer's list (ir::MatchingPeerOps); −1 for compute ops. Lets a rank release a sent tensor
  // once its receiver provably has it.
  std::vector<int> matching_peer_ops;
  // What travels between stages (ir::Pipeline.activation_shape, activation_dtype).
  std::vector<int64_t> activation_shape;
  at::ScalarType activation_dtype = at::kFloat;
  // The module parameter whose gradient is summed over `embedding`: the word embedding on the
  // first stage, its copy (ir::Parameter.tied_to) on the last; "" for none.
  std::string tied_parameter;

  bool first() const { return stage.index() == 0; }
  bool last() const { return stage.index() == num_stages - 1; }
  // Whether chunk c reads the tokens (virtual stage 0) / computes the loss (the last one).
  bool FirstChunk(int c) const { return chunk_virtual_stages[static_cast<size_t>(c)] == 0; }
  bool LastChunk(int c) const { return chunk_virtual_stages[static_cast<size_t>(c)] == num_virtual_stages - 1; }
};

// Builds the context of `rank` from the plan and this rank's groups ("pp", "embedding").
// Errors: InvalidArgument when the plan's pipeline lacks the rank's stage or, with pp > 1, an
// activation shape or dtype.
absl::StatusOr<PipelineContext> PipelineContextFromPlan(const ir::Plan& plan, int rank,
                                                        std::shared_ptr<Communicator> pp,
                                                        std::shared_ptr<Communicator> embedding);

// The compute of one stage, supplied by the trainer (autocast and the model live there).
struct StageCompute {
  // Forward of one microbatch through model chunk `chunk` (0 unless interleaved) of any virtual
  // stage but the last: tokens [b, seq] (first virtual stage) or received hidden states → hidden
  // states (activation_shape).
  std::function<at::Tensor(const at::Tensor& input, int chunk)> forward;
  // The last virtual stage's forward, ending in the mean loss of one microbatch with targets
  // [b, seq] (CausalLm::ForwardLoss).
  std::function<at::Tensor(const at::Tensor& input, int chunk, const at::Tensor& targets)> loss;
};

// One op as executed, for the trace the tests compare with the plan.
struct ExecutedOp {
  ir::OpKind kind = ir::OP_KIND_UNSPECIFIED;
  int microbatch = 0;
  int chunk = 0;
};

// What one stage did in one optimizer step.
struct PipelineStepRecord {
  std::vector<ExecutedOp> ops;  // in execution order: the plan's op list for the stage
  // Seconds blocked in RECV_ACTIVATION / RECV_GRAD (waiting for the neighbouring stage), and the
  // whole schedule's seconds: their ratio is the bubble this stage measured.
  double recv_wait_seconds = 0;
  double schedule_seconds = 0;
};

// Point-to-point tags: the activation and the gradient of microbatch mb (of M in the step) for
// virtual stage `to` (the receiver's) travel under their own tags, so a receive can never take
// another microbatch's or another chunk's tensor.
int ActivationTag(int to, int microbatch, int microbatches);
int GradientTag(int to, int microbatch, int microbatches);

// Runs the stage's op list for one optimizer step. micro_batches: one [b, seq + 1] token tensor
// per microbatch, the same on every stage of a pipeline (the first stage reads the inputs
// [:, :-1], the last the targets [:, 1:]). Each microbatch's loss is multiplied by loss_factor
// (the loss scale over the number of microbatches) before backward. Around each BACKWARD it
// calls sync.BeginMicroStep (last: the op list's last backward) and sync.EndMicroStep, so data-
// parallel gradients are reduced once per optimizer step, after the last microbatch's backward.
// Sends are asynchronous and receives block, as the plan's verifier simulated; a sent tensor is
// released once its send completes, at the latest when a later message from the receiver shows
// (through the plan's op lists) that it was received; all sends are complete on return. Returns the sum of the
// microbatch losses (unscaled) on the last stage, 0 elsewhere; `record` (optional) receives the
// ops as executed and the time spent waiting in receives. Errors: those of the communicators and the GradSync, InvalidArgument when a
// stage's output differs from the plan's activation shape or dtype, Internal for LibTorch errors.
absl::StatusOr<double> RunPipelineStage(const PipelineContext& context,
                                        const std::vector<at::Tensor>& micro_batches,
                                        double loss_factor, GradSync& sync,
                                        const StageCompute& compute,
                                        PipelineStepRecord* record = nullptr);

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_PIPELINE_SCHEDULE_H_
