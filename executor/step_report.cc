#include "executor/step_report.h"

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "executor/memory/counting_allocator.h"
#include "executor/memory/cuda_memory.h"
#include "executor/worker_log.h"

namespace accel::exec {
namespace {

int64_t UnixNanos() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// "1h02m", "3m05s", "42s".
std::string FormatDuration(double seconds) {
  const int64_t s = std::max<int64_t>(0, static_cast<int64_t>(std::llround(seconds)));
  if (s >= 3600) return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
  if (s >= 60) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%ds", s);
}

// Tensor bytes of the step: the counting CPU allocator's or the CUDA caching allocator's.
void SetTensorBytes(const RunState& s, StepRecord& r) {
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
}

}  // namespace

int64_t PeakResidentBytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
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
  SetTensorBytes(s, r);
  r.buckets = result.sync.buckets;
  r.buckets_launched_in_backward = result.sync.launched_during_backward;
  r.backward_seconds = result.sync.backward_seconds;
  r.comm_wait_seconds = result.sync.wait_seconds;
  r.loss_scale = result.loss_scale;
  r.skipped = result.skipped;
  r.expert_tokens = result.moe.expert_counts;
  if (result.moe.aux_losses > 0) r.aux_loss = result.moe.aux_loss_sum / static_cast<double>(result.moe.aux_losses);
  r.unix_time = static_cast<double>(UnixNanos()) / 1e9;
  return r;
}

void LogProgress(const RunState& s, const StepRecord& r, const LoopOutcome& o, bool first_step) {
  const int64_t total_steps = s.plan.batch().steps();
  const int64_t log_every = std::max<int64_t>(1, s.plan.training().log_every_steps());
  if (first_step && s.env.launch_unix_ns > 0) {
    WorkerLog(absl::StrFormat("first step done %.2f s after launch", r.since_launch_seconds));
  }
  if (r.step % log_every != 0 && r.step != total_steps && !first_step) return;
  const double mean_step = o.timed_steps > 0 ? o.timed_seconds / o.timed_steps : r.step_seconds;
  WorkerLog(absl::StrFormat("step %d/%d | loss %.4f | lr %.3e | grad_norm %.3f | %.0f tok/s | "
                            "%.0f ms/step | ETA %s",
                            r.step, total_steps, r.loss, r.lr, r.grad_norm, r.tokens_per_second,
                            r.step_seconds * 1000,
                            FormatDuration(mean_step * static_cast<double>(total_steps - r.step))));
}

}  // namespace accel::exec
