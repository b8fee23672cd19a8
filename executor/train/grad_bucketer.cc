#include "executor/train/grad_bucketer.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include "absl/strings/str_cat.h"

namespace accel::exec {
namespace {

double Seconds(std::chrono::steady_clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

absl::StatusOr<std::unique_ptr<GradBucketer>> GradBucketer::Create(std::vector<at::Tensor> params,
                                                                   std::shared_ptr<Communicator> comm,
                                                                   int64_t bucket_bytes) {
  if (bucket_bytes < 1) return absl::InvalidArgumentError(absl::StrCat("bucket size must be >= 1 byte, got ", bucket_bytes));
  if (params.empty()) return absl::InvalidArgumentError("no parameters to synchronize");
  if (comm == nullptr) return absl::InvalidArgumentError("gradient bucketing needs a communicator");
  std::unique_ptr<GradBucketer> b(new GradBucketer(std::move(params), std::move(comm)));
  const int64_t n = static_cast<int64_t>(b->params_.size());
  b->bucket_of_.assign(n, -1);
  b->slot_of_.assign(n, -1);
  b->param_ready_.assign(n, false);
  int64_t bytes = 0;
  int64_t elements = 0;
  for (int64_t i = n - 1; i >= 0; --i) {
    const at::Tensor& p = b->params_[i];
    const int64_t p_bytes = p.numel() * p.element_size();
    bool open_new = b->buckets_.empty() || bytes + p_bytes > bucket_bytes;
    if (!open_new) {
      const at::Tensor& first = b->params_[b->buckets_.back().slots.front().param];
      open_new = first.scalar_type() != p.scalar_type() || first.device() != p.device();
    }
    if (open_new) {
      if (!b->buckets_.empty()) {
        const at::Tensor& first = b->params_[b->buckets_.back().slots.front().param];
        b->buckets_.back().buffer = at::zeros({elements}, first.options());
      }
      b->buckets_.emplace_back();
      bytes = 0;
      elements = 0;
    }
    b->bucket_of_[i] = static_cast<int64_t>(b->buckets_.size()) - 1;
    b->slot_of_[i] = static_cast<int64_t>(b->buckets_.back().slots.size());
    b->buckets_.back().slots.push_back({i, elements});
    bytes += p_bytes;
    elements += p.numel();
  }
  b->buckets_.back().buffer =
      at::zeros({elements}, b->params_[b->buckets_.back().slots.front().param].options());
  GradBucketer* self = b.get();
  for (int64_t i = 0; i < n; ++i) {
    self->hook_handles_.push_back(
        self->params_[i].register_hook([self, i](const at::Tensor& grad) { self->OnGrad(i, grad); }));
  }
  return b;
}

GradBucketer::GradBucketer(std::vector<at::Tensor> params, std::shared_ptr<Communicator> comm)
    : params_(std::move(params)), comm_(std::move(comm)) {}

GradBucketer::~GradBucketer() {
  for (size_t i = 0; i < hook_handles_.size(); ++i) params_[i].remove_hook(hook_handles_[i]);
  for (Bucket& bucket : buckets_) {
    if (bucket.work) bucket.work->Wait().IgnoreError();
  }
}

std::vector<int64_t> GradBucketer::BucketParams(int64_t b) const {
  std::vector<int64_t> out;
  for (const Slot& s : buckets_[b].slots) out.push_back(s.param);
  return out;
}

void GradBucketer::BeginBackward(bool sync) {
  std::lock_guard<std::mutex> lock(mu_);
  sync_ = sync;
  if (!sync) return;
  for (Bucket& bucket : buckets_) {
    bucket.ready = 0;
    bucket.launched = false;
    bucket.work.reset();
  }
  param_ready_.assign(params_.size(), false);
  next_launch_ = 0;
  launch_error_ = absl::OkStatus();
  stats_ = GradSyncStats{};
  backward_start_ = std::chrono::steady_clock::now();
}

void GradBucketer::CopyIntoBucket(int64_t param, const at::Tensor* incoming) {
  Bucket& bucket = buckets_[bucket_of_[param]];
  const Slot& slot = bucket.slots[slot_of_[param]];
  const at::Tensor& p = params_[param];
  at::Tensor view = bucket.buffer.narrow(0, slot.offset, p.numel()).view(p.sizes());
  // The hook runs before autograd accumulates `incoming` into .grad, so the value to reduce is the
  // gradient accumulated over earlier micro-steps plus this one.
  const at::Tensor& accumulated = p.grad();
  if (incoming != nullptr && accumulated.defined()) {
    at::add_out(view, accumulated, *incoming);
  } else if (incoming != nullptr) {
    view.copy_(*incoming);
  } else if (accumulated.defined()) {
    view.copy_(accumulated);
  } else {
    view.zero_();
  }
}

void GradBucketer::OnGrad(int64_t param, const at::Tensor& grad) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sync_ || param_ready_[param]) return;
  c10::AutoGradMode no_grad(false);
  CopyIntoBucket(param, &grad);
  param_ready_[param] = true;
  Bucket& bucket = buckets_[bucket_of_[param]];
  if (++bucket.ready == static_cast<int64_t>(bucket.slots.size())) LaunchReady(/*from_hook=*/true);
}

void GradBucketer::LaunchReady(bool from_hook) {
  while (next_launch_ < num_buckets()) {
    Bucket& bucket = buckets_[next_launch_];
    if (bucket.ready != static_cast<int64_t>(bucket.slots.size())) return;
    if (stats_.buckets == 0) stats_.first_launch_seconds = Seconds(std::chrono::steady_clock::now() - backward_start_);
    absl::StatusOr<std::unique_ptr<PendingWork>> work = comm_->AllReduceAsync(bucket.buffer, ReduceOp::kAvg);
    if (!work.ok()) {
      // A hook cannot return a status; keep the first error for FinishBackward.
      if (launch_error_.ok()) launch_error_ = work.status();
    } else {
      bucket.work = *std::move(work);
    }
    bucket.launched = true;
    ++stats_.buckets;
    if (from_hook) ++stats_.launched_during_backward;
    ++next_launch_;
  }
}

absl::Status GradBucketer::FinishBackward() {
  std::lock_guard<std::mutex> lock(mu_);
  if (!sync_) return absl::OkStatus();
  sync_ = false;
  const auto end_of_backward = std::chrono::steady_clock::now();
  stats_.backward_seconds = Seconds(end_of_backward - backward_start_);
  try {
    c10::AutoGradMode no_grad(false);
    for (int64_t i = 0; i < static_cast<int64_t>(params_.size()); ++i) {
      if (param_ready_[i]) continue;
      CopyIntoBucket(i, nullptr);
      param_ready_[i] = true;
      ++buckets_[bucket_of_[i]].ready;
    }
    LaunchReady(/*from_hook=*/false);
    absl::Status status = launch_error_;
    for (Bucket& bucket : buckets_) {
      if (bucket.work) {
        absl::Status s = bucket.work->Wait();
        bucket.work.reset();
        if (status.ok()) status = s;
      }
    }
    stats_.wait_seconds = Seconds(std::chrono::steady_clock::now() - end_of_backward);
    if (!status.ok()) return status;
    for (Bucket& bucket : buckets_) {
      for (const Slot& slot : bucket.slots) {
        at::Tensor& p = params_[slot.param];
        at::Tensor reduced = bucket.buffer.narrow(0, slot.offset, p.numel()).view(p.sizes());
        if (p.grad().defined()) {
          p.mutable_grad().copy_(reduced);
        } else {
          p.mutable_grad() = reduced.clone();
        }
      }
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("gradient synchronization failed: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace accel::exec
