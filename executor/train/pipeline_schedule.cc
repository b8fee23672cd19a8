#include "executor/train/pipeline_schedule.h"

#include <torch/torch.h>

#include <chrono>
#include <list>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "executor/models/ops/weight_grad_store.h"
#include "executor/plan_dtype.h"
#include "ir/pipeline_simulation.h"
#include "ir/plan_access.h"

namespace accel::exec {
namespace {

// The in-flight state of one step: what each (chunk, microbatch) holds between its ops, at
// index chunk · M + microbatch.
class StageRun {
 public:
  StageRun(const PipelineContext& context, const std::vector<at::Tensor>& micro_batches,
           double loss_factor, GradSync& sync, const StageCompute& compute)
      : c_(context), batches_(micro_batches), loss_factor_(loss_factor), sync_(sync),
        compute_(compute), m_(static_cast<int>(micro_batches.size())),
        inputs_(Slots()), outputs_(Slots()), grads_(Slots()), losses_(Slots()), weight_grads_(Slots()) {
    const auto& ops = c_.stage.ops();
    for (int i = 0; i < ops.size(); ++i) {
      if (ops[i].kind() == ir::BACKWARD || ops[i].kind() == ir::BACKWARD_INPUT ||
          ops[i].kind() == ir::BACKWARD_WEIGHT) {
        last_backward_ = i;
      }
    }
  }

  // Runs op `index` of the stage's list.
  absl::Status Execute(int index, const ir::PipelineOp& op);
  // Waits for the sends still in flight (all of them when `all`, else those already done).
  absl::Status ReapSends(bool all);
  // After receiving from `peer` what it sent at index `sent_at` of its op list: every send to
  // `peer` that it received before that index is complete; waits for them (at once) so their
  // tensors are released. Gloo reports a send complete only once waited on.
  absl::Status ReleaseReceived(int peer, int sent_at);
  double loss_sum() const { return loss_sum_; }
  double recv_wait_seconds() const { return recv_wait_seconds_; }

 private:
  size_t Slots() const { return c_.chunk_virtual_stages.size() * batches_.size(); }
  size_t At(int chunk, int mb) const { return static_cast<size_t>(chunk * m_ + mb); }
  int VirtualStage(int chunk) const { return c_.chunk_virtual_stages[static_cast<size_t>(chunk)]; }
  // The chunk of this stage that runs virtual stage `vs`, or −1: under ZBV stage p − 1 runs
  // virtual stages p − 1 and p, and the activation and its gradient pass between them locally.
  int LocalChunk(int vs) const {
    for (size_t c = 0; c < c_.chunk_virtual_stages.size(); ++c) {
      if (c_.chunk_virtual_stages[c] == vs) return static_cast<int>(c);
    }
    return -1;
  }
  std::string Where(int chunk, int mb) const {
    return absl::StrCat("stage ", c_.stage.index(), c_.chunk_virtual_stages.size() > 1 ? absl::StrCat(" chunk ", chunk) : "",
                        " microbatch ", mb);
  }
  at::Tensor NewActivation() const {
    return torch::empty(c_.activation_shape,
                        torch::TensorOptions().dtype(c_.activation_dtype).device(batches_.front().device()));
  }
  absl::Status CheckActivation(const at::Tensor& t, int chunk, int mb) const;
  absl::Status Forward(int chunk, int mb);
  // BACKWARD (both halves), or BACKWARD_INPUT (B: the input gradients, the projections' weight
  // gradients deferred into weight_grads_) when split. `index`: the op's place in the list.
  absl::Status Backward(int chunk, int mb, int index, bool split);
  // BACKWARD_WEIGHT (W): the weight gradients B deferred.
  absl::Status BackwardWeight(int chunk, int mb, int index);
  absl::Status Send(at::Tensor tensor, int peer, int tag, int received_at);
  // A blocking receive, its time added to recv_wait_seconds_.
  absl::Status Receive(at::Tensor& into, int peer, int tag);

  const PipelineContext& c_;
  const std::vector<at::Tensor>& batches_;
  double loss_factor_;
  GradSync& sync_;
  const StageCompute& compute_;
  int m_;
  std::vector<at::Tensor> inputs_;   // received activations (leaves whose grad is sent back)
  std::vector<at::Tensor> outputs_;  // forward outputs awaiting backward
  std::vector<at::Tensor> grads_;    // received gradients of outputs_
  std::vector<at::Tensor> losses_;   // last virtual stage: the microbatch losses awaiting backward
  std::vector<WeightGradStore> weight_grads_;  // split backward: what B deferred to W
  // Sends in flight, with the peer and the index of the matching receive in its op list.
  struct PendingSend {
    std::unique_ptr<PendingWork> work;
    int peer = -1;
    int received_at = -1;
  };
  std::list<PendingSend> sends_;
  // Index of the op list's last backward op (BACKWARD, BACKWARD_INPUT or BACKWARD_WEIGHT): the
  // gradient synchronization's last micro-step. With a split backward every B and W is a
  // micro-step of its own (zero-bubble schedules run at sharding stage 0 or 1, which reduce only
  // in the last one: the others accumulate into .grad, whatever their order).
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

absl::Status StageRun::CheckActivation(const at::Tensor& t, int chunk, int mb) const {
  if (t.sizes().vec() == c_.activation_shape && t.scalar_type() == c_.activation_dtype) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      Where(chunk, mb), ": the activation is [",
      absl::StrJoin(t.sizes().vec(), ", "), "] ", c10::toString(t.scalar_type()),
      " but the plan's pipeline carries [", absl::StrJoin(c_.activation_shape, ", "), "] ",
      c10::toString(c_.activation_dtype)));
}

absl::Status StageRun::Forward(int chunk, int mb) {
  const at::Tensor& batch = batches_[mb];
  const int64_t seq = batch.size(1) - 1;
  const size_t at = At(chunk, mb);
  at::Tensor input = c_.FirstChunk(chunk) ? batch.narrow(1, 0, seq) : inputs_[at];
  const int previous = c_.FirstChunk(chunk) ? -1 : LocalChunk(VirtualStage(chunk) - 1);
  if (!input.defined() && previous >= 0 && outputs_[At(previous, mb)].defined()) {
    input = inputs_[at] = outputs_[At(previous, mb)].detach().requires_grad_(true);
  }
  if (!input.defined()) {
    return absl::InvalidArgumentError(absl::StrCat(Where(chunk, mb), ": forward before its activation was received"));
  }
  if (c_.LastChunk(chunk)) {
    losses_[at] = compute_.loss(input, chunk, batch.narrow(1, 1, seq));
    loss_sum_ += losses_[at].item<double>();
    return absl::OkStatus();
  }
  at::Tensor out = compute_.forward(input, chunk);
  ACCEL_RETURN_IF_ERROR(CheckActivation(out, chunk, mb));
  outputs_[at] = out;
  return absl::OkStatus();
}

absl::Status StageRun::Backward(int chunk, int mb, int index, bool split) {
  sync_.BeginMicroStep(/*last=*/index == last_backward_);
  const size_t at = At(chunk, mb);
  WeightGradDeferral defer(split ? &weight_grads_[at] : nullptr);
  if (c_.LastChunk(chunk)) {
    if (!losses_[at].defined()) {
      return absl::InvalidArgumentError(absl::StrCat(Where(chunk, mb), ": backward before its forward"));
    }
    (losses_[at] * loss_factor_).backward();
  } else {
    if (!outputs_[at].defined() || !grads_[at].defined()) {
      return absl::InvalidArgumentError(absl::StrCat(Where(chunk, mb), ": backward before its forward and gradient"));
    }
    outputs_[at].backward(grads_[at]);
  }
  // A local predecessor (ZBV) takes the input's gradient as its output's.
  const int previous = c_.FirstChunk(chunk) ? -1 : LocalChunk(VirtualStage(chunk) - 1);
  if (previous >= 0 && inputs_[at].defined()) {
    at::Tensor g = inputs_[at].grad();
    grads_[At(previous, mb)] = g.defined() ? g : torch::zeros_like(inputs_[at]);
    inputs_[at] = at::Tensor();
  }
  // The activations of this microbatch are no longer needed (its input stays for SEND_GRAD).
  outputs_[at] = at::Tensor();
  grads_[at] = at::Tensor();
  losses_[at] = at::Tensor();
  return sync_.EndMicroStep();
}

absl::Status StageRun::BackwardWeight(int chunk, int mb, int index) {
  sync_.BeginMicroStep(/*last=*/index == last_backward_);
  weight_grads_[At(chunk, mb)].Run();
  return sync_.EndMicroStep();
}

absl::Status StageRun::Send(at::Tensor tensor, int peer, int tag, int received_at) {
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<PendingWork> work, c_.pp->SendAsync(std::move(tensor), peer, tag));
  sends_.push_back({std::move(work), peer, received_at});
  return absl::OkStatus();
}

absl::Status StageRun::Execute(int index, const ir::PipelineOp& op) {
  const int matching =
      static_cast<size_t>(index) < c_.matching_peer_ops.size() ? c_.matching_peer_ops[static_cast<size_t>(index)] : -1;
  const int mb = op.microbatch();
  const int chunk = op.chunk();
  const int vs = VirtualStage(chunk);
  const size_t at = At(chunk, mb);
  switch (op.kind()) {
    case ir::FORWARD:
      return Forward(chunk, mb);
    case ir::BACKWARD:
      return Backward(chunk, mb, index, /*split=*/false);
    case ir::BACKWARD_INPUT:
      return Backward(chunk, mb, index, /*split=*/true);
    case ir::BACKWARD_WEIGHT:
      return BackwardWeight(chunk, mb, index);
    case ir::RECV_ACTIVATION: {
      at::Tensor t = NewActivation();
      ACCEL_RETURN_IF_ERROR(Receive(t, op.peer_stage(), ActivationTag(vs, mb, m_)));
      inputs_[at] = t.requires_grad_(true);
      return ReleaseReceived(op.peer_stage(), matching);
    }
    case ir::SEND_ACTIVATION:
      return Send(outputs_[at].detach().contiguous(), op.peer_stage(), ActivationTag(vs + 1, mb, m_), matching);
    case ir::RECV_GRAD: {
      at::Tensor g = NewActivation();
      ACCEL_RETURN_IF_ERROR(Receive(g, op.peer_stage(), GradientTag(vs, mb, m_)));
      grads_[at] = g;
      return ReleaseReceived(op.peer_stage(), matching);
    }
    case ir::SEND_GRAD: {
      at::Tensor g = inputs_[at].grad();
      if (!g.defined()) g = torch::zeros_like(inputs_[at]);
      inputs_[at] = at::Tensor();
      return Send(g.contiguous(), op.peer_stage(), GradientTag(vs - 1, mb, m_), matching);
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat("stage ", c_.stage.index(), ": unknown pipeline op kind ",
                                                     static_cast<int>(op.kind())));
  }
}

absl::Status StageRun::ReapSends(bool all) {
  for (auto it = sends_.begin(); it != sends_.end();) {
    if (!all && !it->work->Done()) {
      ++it;
      continue;
    }
    ACCEL_RETURN_IF_ERROR(it->work->Wait());
    it = sends_.erase(it);
  }
  return absl::OkStatus();
}

absl::Status StageRun::ReleaseReceived(int peer, int sent_at) {
  for (auto it = sends_.begin(); it != sends_.end();) {
    if (it->peer != peer || it->received_at < 0 || it->received_at >= sent_at) {
      ++it;
      continue;
    }
    ACCEL_RETURN_IF_ERROR(it->work->Wait());
    it = sends_.erase(it);
  }
  return absl::OkStatus();
}

}  // namespace

int ActivationTag(int to, int microbatch, int microbatches) { return 2 * (to * microbatches + microbatch); }
int GradientTag(int to, int microbatch, int microbatches) { return 2 * (to * microbatches + microbatch) + 1; }

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
  c.chunk_virtual_stages.clear();
  for (const ir::ModelChunk& chunk : ir::StageChunks(c.stage)) c.chunk_virtual_stages.push_back(chunk.virtual_stage());
  c.num_virtual_stages = c.num_stages * ir::VirtualStages(pipeline);
  c.matching_peer_ops = ir::MatchingPeerOps(pipeline, stage);
  c.activation_shape.assign(pipeline.activation_shape().begin(), pipeline.activation_shape().end());
  c.activation_dtype = ScalarTypeOf(pipeline.activation_dtype());
  if (c.num_stages > 1 &&
      (c.activation_shape.size() != 3 || pipeline.activation_dtype() == ir::DTYPE_UNSPECIFIED)) {
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
    for (int index = 0; index < context.stage.ops_size(); ++index) {
      const ir::PipelineOp& op = context.stage.ops(index);
      if (op.microbatch() < 0 || op.microbatch() >= static_cast<int>(micro_batches.size())) {
        return absl::InvalidArgumentError(absl::StrCat("pipeline op for microbatch ", op.microbatch(), " of ",
                                                       micro_batches.size()));
      }
      if (op.chunk() < 0 || op.chunk() >= static_cast<int>(context.chunk_virtual_stages.size())) {
        return absl::InvalidArgumentError(absl::StrCat("pipeline op for chunk ", op.chunk(), " of ",
                                                       context.chunk_virtual_stages.size()));
      }
      ACCEL_RETURN_IF_ERROR(run.Execute(index, op));
      if (record != nullptr) record->ops.push_back({op.kind(), op.microbatch(), op.chunk()});
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
