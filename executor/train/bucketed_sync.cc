#include "executor/train/bucketed_sync.h"

#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>
#include <torch/torch.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace accel::exec {
namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Runs a callback after the gradient accumulator of a leaf wrote .grad (the hook PyTorch DDP's
// reducer uses; it sees the accumulated gradient, unlike a tensor hook).
class AfterAccumulateHook final : public torch::autograd::FunctionPostHook {
 public:
  explicit AfterAccumulateHook(std::function<void()> fn) : fn_(std::move(fn)) {}
  torch::autograd::variable_list operator()(const torch::autograd::variable_list& outputs,
                                            const torch::autograd::variable_list& /*inputs*/) override {
    fn_();
    return outputs;
  }

 private:
  std::function<void()> fn_;
};

}  // namespace

// Shared with the hooks, which outlive this object on the module's parameters.
struct BucketedGradSync::HookState {
  std::mutex mu;
  BucketedGradSync* owner = nullptr;
};

BucketedGradSync::BucketedGradSync(std::vector<at::Tensor> params, ShardLayout layout,
                                   DataParallelGroups groups, GradSyncOptions options)
    : params_(std::move(params)), layout_(std::move(layout)), groups_(std::move(groups)),
      options_(options), hook_state_(std::make_shared<HookState>()) {}

BucketedGradSync::~BucketedGradSync() {
  {
    std::lock_guard<std::mutex> lock(hook_state_->mu);
    hook_state_->owner = nullptr;
  }
  for (BucketState& bucket : buckets_) {
    if (bucket.work) bucket.work->Wait().IgnoreError();
  }
}

absl::Status BucketedGradSync::Init() {
  if (params_.size() != layout_.params.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the module has ", params_.size(),
                                                   " parameters but the layout ",
                                                   layout_.params.size()));
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].numel() != layout_.params[i].numel) {
      return absl::InvalidArgumentError(absl::StrCat("parameter ", layout_.params[i].name, " has ",
                                                     params_[i].numel(), " elements, layout ",
                                                     layout_.params[i].numel));
    }
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) opt_.push_back(MakeOptimizerTensor(static_cast<int>(i)));
  buckets_.resize(layout_.buckets.size());
  ready_.assign(params_.size(), false);
  hook_state_->owner = this;
  for (size_t i = 0; i < params_.size(); ++i) {
    std::shared_ptr<torch::autograd::Node> acc = torch::autograd::impl::grad_accumulator(params_[i]);
    if (acc == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameter ", layout_.params[i].name, " does not require grad"));
    }
    std::shared_ptr<HookState> state = hook_state_;
    const int p = static_cast<int>(i);
    acc->add_post_hook(std::make_unique<AfterAccumulateHook>([state, p] {
      std::lock_guard<std::mutex> lock(state->mu);
      if (state->owner != nullptr) state->owner->OnGradReady(p);
    }));
    accumulators_.push_back(std::move(acc));
  }
  return absl::OkStatus();
}

void BucketedGradSync::OnNewStep() {
  for (size_t i = 0; i < params_.size(); ++i) {
    params_[i].mutable_grad().reset();
    if (IsMaster(static_cast<int>(i))) opt_[i].mutable_grad().reset();
  }
}

void BucketedGradSync::BeginMicroStep(bool last) {
  std::lock_guard<std::mutex> lock(mu_);
  if (new_step_) {
    new_step_ = false;
    stats_ = GradSyncStats{};
    OnNewStep();
  }
  armed_ = ReducesOn(last);
  last_ = last;
  for (BucketState& bucket : buckets_) bucket = BucketState{};
  ready_.assign(params_.size(), false);
  next_launch_ = 0;
  next_finish_ = 0;
  live_buckets_ = 0;
  hook_error_ = absl::OkStatus();
  backward_start_ = std::chrono::steady_clock::now();
}

void BucketedGradSync::MarkReady(int p, const at::Tensor& grad) {
  const ParamSlot& slot = layout_.params[p];
  BucketState& bucket = buckets_[slot.bucket];
  if (!bucket.buffer.defined()) {
    FinishAllButNewestLaunched();
    bucket.buffer = NewBucketBuffer(layout_.buckets[slot.bucket]);
    stats_.max_live_buckets = std::max(stats_.max_live_buckets, ++live_buckets_);
  }
  if (grad.defined()) CopyIn(p, grad, bucket.buffer);
  if (DropsGradAfterCopy()) params_[p].mutable_grad().reset();
  ready_[p] = true;
  ++bucket.ready;
  OnGradCopied(p);
}

void BucketedGradSync::OnGradReady(int p) {
  // The engine's thread holds no lock of ours here; mu_ orders hooks against EndMicroStep.
  std::lock_guard<std::mutex> lock(mu_);
  if (!armed_ || ready_[p]) return;
  torch::NoGradGuard no_grad;
  MarkReady(p, params_[p].grad());
  const BucketLayout& bucket = layout_.buckets[layout_.params[p].bucket];
  if (buckets_[bucket.index].ready == static_cast<int64_t>(bucket.params.size())) {
    LaunchReady(/*from_hook=*/true);
  }
}

void BucketedGradSync::LaunchReady(bool from_hook) {
  while (next_launch_ < static_cast<int>(buckets_.size())) {
    BucketState& state = buckets_[next_launch_];
    const BucketLayout& bucket = layout_.buckets[next_launch_];
    if (state.ready != static_cast<int64_t>(bucket.params.size())) return;
    if (stats_.buckets == 0) stats_.first_launch_seconds = Seconds(std::chrono::steady_clock::now() - backward_start_);
    absl::StatusOr<std::unique_ptr<PendingWork>> work = Launch(state, bucket);
    if (!work.ok()) {
      // A hook cannot return a status; keep the first error for EndMicroStep.
      if (hook_error_.ok()) hook_error_ = work.status();
    } else {
      state.work = *std::move(work);
    }
    state.launched = true;
    ++stats_.buckets;
    if (from_hook) ++stats_.launched_during_backward;
    ++next_launch_;
  }
}

absl::Status BucketedGradSync::EndMicroStep() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!armed_) return absl::OkStatus();
  armed_ = false;
  const auto end_of_backward = std::chrono::steady_clock::now();
  stats_.backward_seconds = Seconds(end_of_backward - backward_start_);
  try {
    torch::NoGradGuard no_grad;
    // Parameters that took no part in this backward contribute their current gradient or zeros.
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!ready_[i]) MarkReady(static_cast<int>(i), params_[i].grad());
    }
    LaunchReady(/*from_hook=*/false);
    absl::Status status = hook_error_;
    for (; next_finish_ < static_cast<int>(buckets_.size()); ++next_finish_) {
      absl::Status s = FinishBucket(next_finish_, /*write=*/status.ok());
      if (status.ok()) status = s;
    }
    if (status.ok() && last_) status = AfterLastMicroStep();
    stats_.wait_seconds += Seconds(std::chrono::steady_clock::now() - end_of_backward);
    return status;
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("gradient synchronization failed: ", e.what()));
  }
}

absl::Status BucketedGradSync::FinishBucket(int b, bool write) {
  BucketState& state = buckets_[b];
  absl::Status status = absl::OkStatus();
  try {
    if (state.work) {
      status = state.work->Wait();
      state.work.reset();
    }
    if (status.ok() && write) status = Finish(state, layout_.buckets[b]);
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrCat("gradient synchronization failed: ", e.what()));
  }
  if (state.buffer.defined()) --live_buckets_;
  state.buffer = at::Tensor();
  state.output = at::Tensor();
  return status;
}

void BucketedGradSync::FinishAllButNewestLaunched() {
  const auto start = std::chrono::steady_clock::now();
  for (; next_finish_ < next_launch_ - 1; ++next_finish_) {
    absl::Status s = FinishBucket(next_finish_, /*write=*/hook_error_.ok());
    if (hook_error_.ok()) hook_error_ = s;
  }
  // Inside EndMicroStep (armed_ already false) its own clock counts this wait.
  if (armed_) stats_.wait_seconds += Seconds(std::chrono::steady_clock::now() - start);
}

absl::StatusOr<double> BucketedGradSync::GradNormSquared() {
  torch::NoGradGuard no_grad;
  // Summed where the optimizer tensors live (the host when offloaded), then moved once to the
  // parameters' device, where the collectives run. Under tensor parallelism the tp-split
  // parameters' sum is added over the tp group; replicated ones are the same on every tp rank
  // and count once. A slice held by R tp ranks (ParamSlot::tp_replicas) counts on the first of
  // them. A tied copy counts on its original's stage only.
  const bool tp = groups_.tp != nullptr && groups_.tp->Size() > 1;
  const int64_t tp_rank = tp ? groups_.tp->Rank() : 0;
  // Routed experts: at stage 0 each rank holds its experts' whole gradients, added over "ep"
  // (slot 2); sharded, the dp_shard group holds every expert's every shard exactly once.
  const bool expert_sum = layout_.stage == 0 && groups_.ep != nullptr && groups_.ep->Size() > 1;
  at::Tensor sq = at::zeros({3}, opt_.front().options().dtype(at::kDouble));
  for (size_t i = 0; i < opt_.size(); ++i) {
    const at::Tensor& g = opt_[i].grad();
    const ParamSlot& slot = layout_.params[i];
    if (!g.defined() || !slot.tied_to.empty() || tp_rank % slot.tp_replicas != 0) continue;
    const int at = expert_sum && slot.routed_expert ? 2 : (tp && !slot.tp_split ? 1 : 0);
    sq[at] += g.to(at::kDouble).pow(2).sum();
  }
  sq = sq.to(params_.front().device());
  if (expert_sum) {
    at::Tensor experts = sq.narrow(0, 2, 1).clone();
    if (absl::Status s = groups_.ep->AllReduce(experts, ReduceOp::kSum); !s.ok()) return s;
    // Routed experts are tp-split (their inner width) or, without tp, counted as the rest.
    sq[0] += experts[0];
  }
  sq = sq.narrow(0, 0, 2).clone();
  if (layout_.stage >= 1 && groups_.dp_shard != nullptr && groups_.dp_shard->Size() > 1) {
    if (absl::Status s = groups_.dp_shard->AllReduce(sq, ReduceOp::kSum); !s.ok()) return s;
  }
  if (!tp) return sq[0].item<double>();
  at::Tensor split = sq.narrow(0, 0, 1).clone();
  if (absl::Status s = groups_.tp->AllReduce(split, ReduceOp::kSum); !s.ok()) return s;
  return split.item<double>() + sq[1].item<double>();
}

absl::Status BucketedGradSync::AfterOptimizerStep() {
  new_step_ = true;
  try {
    torch::NoGradGuard no_grad;
    return Publish();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("publishing updated parameters failed: ", e.what()));
  }
}

at::Tensor BucketedGradSync::OwnedView(int p) const {
  const ParamSlot& slot = layout_.params[p];
  return params_[p].detach().view({-1}).narrow(0, slot.owned_begin, slot.owned_numel());
}

Communicator* BucketedGradSync::ShardGroup(bool routed_experts) const {
  // Under expert parallelism a null ep_dp has one rank: degree 1, never communicated over.
  if (routed_experts && ExpertParallel()) return groups_.ep_dp.get();
  return groups_.dp_shard.get();
}

void BucketedGradSync::ScaleExpertGradients(const BucketLayout& bucket, at::Tensor& buffer) const {
  if (bucket.routed_experts && ExpertParallel()) buffer.mul_(1.0 / static_cast<double>(groups_.ep->Size()));
}

absl::StatusOr<std::unique_ptr<PendingWork>> BucketedGradSync::LaunchGather(const UnitGather& gather,
                                                                            at::Tensor& output) {
  const int64_t degree = layout_.DegreeOf(gather.routed_experts);
  at::Tensor input = at::zeros({gather.shard_numel}, params_[gather.params.front()].options());
  for (int p : gather.params) {
    const ParamSlot& slot = layout_.params[p];
    input.narrow(0, slot.unit_shard_offset, slot.owned_numel()).copy_(opt_[p].view({-1}));
  }
  if (degree == 1) {
    output = input;
    return std::unique_ptr<PendingWork>();
  }
  output = at::empty({degree * gather.shard_numel}, input.options());
  return ShardGroup(gather.routed_experts)->AllGatherAsync(input, output);
}

at::Tensor BucketedGradSync::GatheredWhole(const UnitGather& gather, const at::Tensor& output, int p) const {
  const ParamSlot& slot = layout_.params[p];
  at::Tensor blocks = output.view({layout_.DegreeOf(gather.routed_experts), gather.shard_numel});
  return blocks.narrow(1, slot.unit_shard_offset, slot.shard_numel).reshape({-1}).narrow(0, 0, slot.numel);
}

absl::Status BucketedGradSync::AllGatherUnits(const std::function<bool(const ParamSlot&)>& select) {
  struct Gathering {
    const UnitGather* gather;
    at::Tensor output;
    std::unique_ptr<PendingWork> work;
  };
  // One unit's gathers in flight while the previous unit's are written: the outputs of every
  // unit at once would hold a second copy of all parameters (the memory estimate counts one
  // unit's, as stage 3 does).
  std::vector<Gathering> previous, current;
  auto write = [&](std::vector<Gathering>& gatherings) -> absl::Status {
    for (Gathering& g : gatherings) {
      if (g.work) ACCEL_RETURN_IF_ERROR(g.work->Wait());
      for (int p : g.gather->params) {
        if (!select(layout_.params[p])) continue;
        params_[p].detach().view({-1}).copy_(GatheredWhole(*g.gather, g.output, p));
      }
    }
    gatherings.clear();
    return absl::OkStatus();
  };
  for (const UnitLayout& unit : layout_.units) {
    for (const UnitGather& gather : unit.gathers) {
      bool any = false;
      for (int p : gather.params) any = any || select(layout_.params[p]);
      if (!any) continue;
      Gathering g{&gather, at::Tensor(), nullptr};
      ACCEL_ASSIGN_OR_RETURN(g.work, LaunchGather(gather, g.output));
      current.push_back(std::move(g));
    }
    ACCEL_RETURN_IF_ERROR(write(previous));
    std::swap(previous, current);
  }
  return write(previous);
}

}  // namespace accel::exec
