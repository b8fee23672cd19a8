#include "executor/train/pipeline_schedule.h"

#include <torch/torch.h>

#include <chrono>
#include <list>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"

namespace accel::exec {
namespace {

at::ScalarType DtypeOf(const std::string& name) {
  if (name == "bf16") return at::kBFloat16;
  if (name == "fp16") return at::kHalf;
  return at::kFloat;
}

// The in-flight state of one step: what each microbatch holds between its ops.
class StageRun {
 public:
  StageRun(const PipelineContext& context, const std::vector<at::Tensor>& micro_batches,
           double loss_factor, GradSync& sync, const StageCompute& compute)
      : c_(context), batches_(micro_batches), loss_factor_(loss_factor), sync_(sync),
        compute_(compute), inputs_(micro_batches.size()), outputs_(micro_batches.size()),
        grads_(micro_batches.size()), losses_(micro_batches.size()) {
    for (const ir::PipelineOp& op : c_.stage.ops()) {
      if (op.kind() == ir::BACKWARD) last_backward_ = op.microbatch();
    }
  }

  absl::Status Execute(const ir::PipelineOp& op);
  // Waits for the sends still in flight (all of them when `all`, else those already done).
  absl::Status ReapSends(bool all);
  double loss_sum() const { return loss_sum_; }
  double recv_wait_seconds() const { return recv_wait_seconds_; }

 private:
  at::Tensor NewActivation() const {
    return torch::empty(c_.activation_shape,
                        torch::TensorOptions().dtype(c_.activation_dtype).device(batches_.front().device()));
  }
  absl::Status CheckActivation(const at::Tensor& t, int mb) const;
  absl::Status Forward(int mb);
  absl::Status Backward(int mb);
  absl::Status Send(at::Tensor tensor, int peer, int tag);
  // A blocking receive, its time added to recv_wait_seconds_.
  absl::Status Receive(at::Tensor& into, int peer, int tag);

  const PipelineContext& c_;
  const std::vector<at::Tensor>& batches_;
  double loss_factor_;
  GradSync& sync_;
  const StageCompute& compute_;
  std::vector<at::Tensor> inputs_;   // received activations (leaves whose grad is sent back)
  std::vector<at::Tensor> outputs_;  // forward outputs awaiting backward
  std::vector<at::Tensor> grads_;    // received gradients of outputs_
  std::vector<at::Tensor> losses_;   // last stage: the microbatch losses awaiting backward
  std::list<std::unique_ptr<PendingWork>> sends_;
  int last_backward_ = -1;
  double loss_sum_ = 0;
  double recv_wait_seconds_ = 0;
};

absl::Status StageRun::Receive(at::Tensor& into, int peer, int tag) {
  const auto start = std::chrono::steady_clock::now();
  absl::Status status = c_.pp->Recv(into, peer, tag);
  recv_wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return status;
}

absl::Status StageRun::CheckActivation(const at::Tensor& t, int mb) const {
  if (t.sizes().vec() == c_.activation_shape && t.scalar_type() == c_.activation_dtype) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "stage ", c_.stage.index(), " microbatch ", mb, ": the activation is [",
      absl::StrJoin(t.sizes().vec(), ", "), "] ", c10::toString(t.scalar_type()),
      " but the plan's pipeline carries [", absl::StrJoin(c_.activation_shape, ", "), "] ",
      c10::toString(c_.activation_dtype)));
}

absl::Status StageRun::Forward(int mb) {
  const at::Tensor& batch = batches_[mb];
  const int64_t seq = batch.size(1) - 1;
  at::Tensor input = c_.first() ? batch.narrow(1, 0, seq) : inputs_[mb];
  if (!input.defined()) {
    return absl::InvalidArgumentError(absl::StrCat("stage ", c_.stage.index(), ": forward of microbatch ",
                                                   mb, " before its activation was received"));
  }
  at::Tensor out = compute_.forward(input);
  if (c_.last()) {
    losses_[mb] = compute_.loss(out, batch.narrow(1, 1, seq));
    loss_sum_ += losses_[mb].item<double>();
    return absl::OkStatus();
  }
  ACCEL_RETURN_IF_ERROR(CheckActivation(out, mb));
  outputs_[mb] = out;
  return absl::OkStatus();
}

absl::Status StageRun::Backward(int mb) {
  sync_.BeginMicroStep(/*last=*/mb == last_backward_);
  if (c_.last()) {
    if (!losses_[mb].defined()) {
      return absl::InvalidArgumentError(absl::StrCat("backward of microbatch ", mb, " before its forward"));
    }
    (losses_[mb] * loss_factor_).backward();
  } else {
    if (!outputs_[mb].defined() || !grads_[mb].defined()) {
      return absl::InvalidArgumentError(absl::StrCat("stage ", c_.stage.index(), ": backward of microbatch ", mb,
                                                     " before its forward and gradient"));
    }
    outputs_[mb].backward(grads_[mb]);
  }
  // The activations of this microbatch are no longer needed (its input stays for SEND_GRAD).
  outputs_[mb] = at::Tensor();
  grads_[mb] = at::Tensor();
  losses_[mb] = at::Tensor();
  return sync_.EndMicroStep();
}

absl::Status StageRun::Send(at::Tensor tensor, int peer, int tag) {
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<PendingWork> work, c_.pp->SendAsync(std::move(tensor), peer, tag));
  sends_.push_back(std::move(work));
  return absl::OkStatus();
}

absl::Status StageRun::Execute(const ir::PipelineOp& op) {
  const int mb = op.microbatch();
  const int self = c_.stage.index();
  switch (op.kind()) {
    case ir::FORWARD:
      return Forward(mb);
    case ir::BACKWARD:
      return Backward(mb);
    case ir::RECV_ACTIVATION: {
      at::Tensor t = NewActivation();
      ACCEL_RETURN_IF_ERROR(Receive(t, self - 1, ActivationTag(mb)));
      inputs_[mb] = t.requires_grad_(true);
      return absl::OkStatus();
    }
    case ir::SEND_ACTIVATION:
      return Send(outputs_[mb].detach().contiguous(), self + 1, ActivationTag(mb));
    case ir::RECV_GRAD: {
      at::Tensor g = NewActivation();
      ACCEL_RETURN_IF_ERROR(Receive(g, self + 1, GradientTag(mb)));
      grads_[mb] = g;
      return absl::OkStatus();
    }
    case ir::SEND_GRAD: {
      at::Tensor g = inputs_[mb].grad();
      if (!g.defined()) g = torch::zeros_like(inputs_[mb]);
      inputs_[mb] = at::Tensor();
      return Send(g.contiguous(), self - 1, GradientTag(mb));
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("stage ", self, ": unknown pipeline op kind ",
                                                     static_cast<int>(op.kind())));
  }
}

absl::Status StageRun::ReapSends(bool all) {
  for (auto it = sends_.begin(); it != sends_.end();) {
    if (!all && !(*it)->Done()) {
      ++it;
      continue;
    }
    ACCEL_RETURN_IF_ERROR((*it)->Wait());
    it = sends_.erase(it);
  }
  return absl::OkStatus();
}

}  // namespace

int ActivationTag(int microbatch) { return 2 * microbatch; }
int GradientTag(int microbatch) { return 2 * microbatch + 1; }

absl::StatusOr<PipelineContext> PipelineContextFromPlan(const ir::Plan& plan, int rank,
                                                        std::shared_ptr<Communicator> pp,
                                                        std::shared_ptr<Communicator> embedding) {
  const ir::Pipeline& pipeline = plan.pipeline();
  const int stage = rank >= 0 && rank < plan.ranks_size() ? plan.ranks(rank).stage() : -1;
  if (stage < 0 || stage >= pipeline.stages_size()) {
    return absl::InvalidArgumentError(absl::StrCat("the plan's pipeline has no stage for rank ", rank));
  }
  PipelineContext c;
  c.pp = std::move(pp);
  c.embedding = std::move(embedding);
  c.stage = pipeline.stages(stage);
  c.num_stages = pipeline.stages_size();
  c.activation_shape.assign(pipeline.activation_shape().begin(), pipeline.activation_shape().end());
  c.activation_dtype = DtypeOf(pipeline.activation_dtype());
  if (c.num_stages > 1 && (c.activation_shape.size() != 3 || pipeline.activation_dtype().empty())) {
    return absl::InvalidArgumentError("the plan's pipeline gives no activation shape and dtype");
  }
  if (c.num_stages > 1 && (c.pp == nullptr || c.pp->Size() != c.num_stages)) {
    return absl::InvalidArgumentError(absl::StrCat("the pp group does not have the pipeline's ",
                                                   c.num_stages, " stages"));
  }
  for (const ir::ShardUnit& unit : plan.sharding().units()) {
    for (const ir::Parameter& p : unit.parameters()) {
      if (p.tied_to().empty()) continue;
      if (c.last()) c.tied_parameter = p.name();
      if (c.first()) c.tied_parameter = p.tied_to();
    }
  }
  return c;
}

absl::StatusOr<double> RunPipelineStage(const PipelineContext& context,
                                        const std::vector<at::Tensor>& micro_batches,
                                        double loss_factor, GradSync& sync,
                                        const StageCompute& compute, PipelineStepRecord* record) {
  if (micro_batches.empty()) return absl::InvalidArgumentError("a step needs at least one microbatch");
  const auto start = std::chrono::steady_clock::now();
  StageRun run(context, micro_batches, loss_factor, sync, compute);
  try {
    for (const ir::PipelineOp& op : context.stage.ops()) {
      if (op.microbatch() < 0 || op.microbatch() >= static_cast<int>(micro_batches.size())) {
        return absl::InvalidArgumentError(absl::StrCat("pipeline op for microbatch ", op.microbatch(), " of ",
                                                       micro_batches.size()));
      }
      ACCEL_RETURN_IF_ERROR(run.Execute(op));
      if (record != nullptr) record->ops.push_back({op.kind(), op.microbatch()});
      ACCEL_RETURN_IF_ERROR(run.ReapSends(/*all=*/false));
    }
    ACCEL_RETURN_IF_ERROR(run.ReapSends(/*all=*/true));
    if (record != nullptr) {
      record->recv_wait_seconds = run.recv_wait_seconds();
      record->schedule_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("pipeline stage ", context.stage.index(), ": ", e.what()));
  }
  return run.loss_sum();
}

}  // namespace accel::exec
