#include "planner/pipeline_schedules.h"

#include <algorithm>

namespace accel::planner {
namespace {

// Appends the ops of one stage in order, with the receives and sends each compute op needs.
class StageWriter {
 public:
  StageWriter(const ScheduleShape& shape, int32_t s, ir::PipelineStage& stage)
      : p_(shape.stages), v_(std::max(shape.virtual_stages, 1)), s_(s), stage_(stage) {}

  void Forward(int32_t mb, int32_t chunk) {
    const int32_t vs = chunk * p_ + s_;
    if (vs > 0) Add(ir::RECV_ACTIVATION, mb, chunk, Previous());
    Add(ir::FORWARD, mb, chunk, -1);
    if (vs < p_ * v_ - 1) Add(ir::SEND_ACTIVATION, mb, chunk, Next());
  }

  void Backward(int32_t mb, int32_t chunk) {
    const int32_t vs = chunk * p_ + s_;
    if (vs < p_ * v_ - 1) Add(ir::RECV_GRAD, mb, chunk, Next());
    Add(ir::BACKWARD, mb, chunk, -1);
    if (vs > 0) Add(ir::SEND_GRAD, mb, chunk, Previous());
  }

 private:
  // The stages holding virtual stages vs − 1 and vs + 1 (the wrap-around joins stage p − 1's
  // chunk c to stage 0's chunk c + 1).
  int32_t Previous() const { return (s_ + p_ - 1) % p_; }
  int32_t Next() const { return (s_ + 1) % p_; }

  void Add(ir::OpKind kind, int32_t mb, int32_t chunk, int32_t peer) {
    ir::PipelineOp* op = stage_.add_ops();
    op->set_kind(kind);
    op->set_microbatch(mb);
    op->set_peer_stage(peer);
    op->set_chunk(chunk);
  }

  int32_t p_, v_, s_;
  ir::PipelineStage& stage_;
};

void WriteInterleaved(const ScheduleShape& shape, int32_t s, StageWriter& w) {
  const int32_t p = shape.stages, v = shape.virtual_stages, m = shape.microbatches;
  const int32_t total = m * v;
  auto microbatch = [&](int32_t k) { return (k / (p * v)) * p + k % p; };
  auto forward_chunk = [&](int32_t k) { return (k % (p * v)) / p; };
  auto backward_chunk = [&](int32_t k) { return v - 1 - (k % (p * v)) / p; };
  const int32_t warmup = m == p ? total : std::min(total, (p - s - 1) * 2 + (v - 1) * p);
  for (int32_t k = 0; k < warmup; ++k) w.Forward(microbatch(k), forward_chunk(k));
  for (int32_t i = 0; i < total - warmup; ++i) {
    w.Forward(microbatch(warmup + i), forward_chunk(warmup + i));
    w.Backward(microbatch(i), backward_chunk(i));
  }
  for (int32_t k = total - warmup; k < total; ++k) w.Backward(microbatch(k), backward_chunk(k));
}

}  // namespace

void WriteStageOps(const ScheduleShape& shape, int32_t s, ir::PipelineStage& stage) {
  const int32_t p = shape.stages, m = shape.microbatches;
  stage.clear_ops();
  StageWriter w(shape, s, stage);
  if (p == 1) {
    for (int32_t mb = 0; mb < m; ++mb) {
      w.Forward(mb, 0);
      w.Backward(mb, 0);
    }
  } else if (shape.schedule == ir::PIPELINE_SCHEDULE_GPIPE) {
    for (int32_t mb = 0; mb < m; ++mb) w.Forward(mb, 0);
    for (int32_t mb = 0; mb < m; ++mb) w.Backward(mb, 0);
  } else if (shape.schedule == ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B) {
    WriteInterleaved(shape, s, w);
  } else {
    const int32_t warmup = std::min(p - s - 1, m);
    for (int32_t mb = 0; mb < warmup; ++mb) w.Forward(mb, 0);
    for (int32_t i = 0; i < m - warmup; ++i) {
      w.Forward(warmup + i, 0);
      w.Backward(i, 0);
    }
    for (int32_t mb = m - warmup; mb < m; ++mb) w.Backward(mb, 0);
  }
  stage.set_max_inflight_microbatches(static_cast<int32_t>(InflightMicrobatches(shape, s)));
}

int64_t InflightMicrobatches(const ScheduleShape& shape, int32_t s) {
  const int64_t p = shape.stages, m = std::max(shape.microbatches, 1);
  const int64_t v = std::max(shape.virtual_stages, 1);
  if (p <= 1) return 1;
  if (shape.schedule == ir::PIPELINE_SCHEDULE_GPIPE) return m;
  if (shape.schedule == ir::PIPELINE_SCHEDULE_INTERLEAVED_1F1B) {
    if (m == p) return m * v;
    return std::min(m * v, (p - s - 1) * 2 + (v - 1) * p + 1);
  }
  return std::min(p - s, m);
}

int64_t PeakInflight(const ir::PipelineStage& stage) {
  int64_t alive = 0, peak = 0;
  for (const ir::PipelineOp& op : stage.ops()) {
    if (op.kind() == ir::FORWARD) peak = std::max(peak, ++alive);
    if (op.kind() == ir::BACKWARD) --alive;
  }
  return peak;
}

double ScheduleBubbleFraction(const ScheduleShape& shape) {
  const double p = shape.stages, m = shape.microbatches, v = std::max(shape.virtual_stages, 1);
  if (shape.stages <= 1) return 0;
  return (p - 1) / (v * m + p - 1);
}

}  // namespace accel::planner
