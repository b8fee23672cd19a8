#include "planner/pipeline_schedules.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "ir/pipeline_simulation.h"
#include "ir/plan_access.h"

namespace accel::planner {
namespace {

// Appends the ops of one stage in order, with the receives and sends each compute op needs.
class StageWriter {
 public:
  StageWriter(const ScheduleShape& shape, int32_t s, ir::PipelineStage& stage)
      : schedule_(shape.schedule), p_(shape.stages), v_(std::max(shape.virtual_stages, 1)), s_(s),
        stage_(stage) {}

  void Forward(int32_t mb, int32_t chunk) {
    const int32_t vs = VirtualStage(chunk);
    if (vs > 0 && StageOf(vs - 1) != s_) Add(ir::RECV_ACTIVATION, mb, chunk, StageOf(vs - 1));
    Add(ir::FORWARD, mb, chunk, -1);
    if (vs < p_ * v_ - 1 && StageOf(vs + 1) != s_) Add(ir::SEND_ACTIVATION, mb, chunk, StageOf(vs + 1));
  }

  // The fused backward, or with `kind` BACKWARD_INPUT its input-gradient half: both receive
  // the output gradient and send the input gradient.
  void Backward(int32_t mb, int32_t chunk, ir::OpKind kind = ir::BACKWARD) {
    const int32_t vs = VirtualStage(chunk);
    if (vs < p_ * v_ - 1 && StageOf(vs + 1) != s_) Add(ir::RECV_GRAD, mb, chunk, StageOf(vs + 1));
    Add(kind, mb, chunk, -1);
    if (vs > 0 && StageOf(vs - 1) != s_) Add(ir::SEND_GRAD, mb, chunk, StageOf(vs - 1));
  }

  void Input(int32_t mb, int32_t chunk) { Backward(mb, chunk, ir::BACKWARD_INPUT); }
  void Weight(int32_t mb, int32_t chunk) { Add(ir::BACKWARD_WEIGHT, mb, chunk, -1); }

 private:
  int32_t VirtualStage(int32_t chunk) const { return ir::ScheduledVirtualStage(schedule_, p_, s_, chunk); }
  int32_t StageOf(int32_t vs) const { return ir::ScheduledStageOf(schedule_, p_, vs); }

  void Add(ir::OpKind kind, int32_t mb, int32_t chunk, int32_t peer) {
    ir::PipelineOp* op = stage_.add_ops();
    op->set_kind(kind);
    op->set_microbatch(mb);
    op->set_peer_stage(peer);
    op->set_chunk(chunk);
  }

  ir::PipelineSchedule schedule_;
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

// ZB-H1 (pipeline_schedules.h): 1F1B with I for B, and stage s's W's held back s microbatches.
void WriteZbH1(const ScheduleShape& shape, int32_t s, StageWriter& w) {
  const int32_t p = shape.stages, m = shape.microbatches;
  const int32_t warmup = std::min(p - s - 1, m);
  int32_t weights = 0;
  for (int32_t mb = 0; mb < warmup; ++mb) w.Forward(mb, 0);
  for (int32_t i = 0; i < m; ++i) {
    if (i < m - warmup) w.Forward(warmup + i, 0);
    w.Input(i, 0);
    if (i >= s) w.Weight(weights++, 0);
  }
  while (weights < m) w.Weight(weights++, 0);
}

// ZBV's compute order on one stage (pipeline_schedules.h), before dropping padded microbatches:
// per chunk, counters of forwards, inputs and weights run.
class ZbvOrder {
 public:
  struct Op {
    ir::OpKind kind;
    int32_t microbatch, chunk;
  };

  ZbvOrder(int32_t p, int32_t s, int32_t n) : p_(p), s_(s), n_(n) {}

  std::vector<Op> Build() {
    Repeat(2 * (p_ - s_) - 1, [&] { F(0); });
    Repeat(s_, [&] {
      F(1);
      F(0);
    });
    Repeat(p_ - s_, [&] {
      F(1);
      I(1);
      W(1);
    });
    while (f_[1] < f_[0] || f_[0] < n_) {
      if (f_[0] < n_) F(0);
      I(0);
      W(0);
      F(1);
      I(1);
      W(1);
    }
    Repeat(s_, [&] {
      I(0);
      I(1);
    });
    Repeat(p_ - s_, [&] {
      I(0);
      W(0);
    });
    while (w_[1] < b_[1]) W(1);
    while (w_[0] < b_[0]) W(0);
    return std::move(ops_);
  }

 private:
  template <typename Body>
  static void Repeat(int32_t times, Body body) {
    for (int32_t k = 0; k < times; ++k) body();
  }
  void F(int32_t c) { ops_.push_back({ir::FORWARD, f_[c]++, c}); }
  void I(int32_t c) { ops_.push_back({ir::BACKWARD_INPUT, b_[c]++, c}); }
  void W(int32_t c) { ops_.push_back({ir::BACKWARD_WEIGHT, w_[c]++, c}); }

  int32_t p_, s_, n_;
  int32_t f_[2] = {0, 0}, b_[2] = {0, 0}, w_[2] = {0, 0};
  std::vector<Op> ops_;
};

void WriteZbv(const ScheduleShape& shape, int32_t s, StageWriter& w) {
  const int32_t p = shape.stages, m = shape.microbatches;
  for (const ZbvOrder::Op& op : ZbvOrder(p, s, std::max(m, 2 * p - 1)).Build()) {
    if (op.microbatch >= m) continue;
    if (op.kind == ir::FORWARD) w.Forward(op.microbatch, op.chunk);
    if (op.kind == ir::BACKWARD_INPUT) w.Input(op.microbatch, op.chunk);
    if (op.kind == ir::BACKWARD_WEIGHT) w.Weight(op.microbatch, op.chunk);
  }
}

void WriteOneF1B(const ScheduleShape& shape, int32_t s, StageWriter& w) {
  const int32_t p = shape.stages, m = shape.microbatches;
  const int32_t warmup = std::min(p - s - 1, m);
  for (int32_t mb = 0; mb < warmup; ++mb) w.Forward(mb, 0);
  for (int32_t i = 0; i < m - warmup; ++i) {
    w.Forward(warmup + i, 0);
    w.Backward(i, 0);
  }
  for (int32_t mb = m - warmup; mb < m; ++mb) w.Backward(mb, 0);
}

void WriteOps(const ScheduleShape& shape, int32_t s, ir::PipelineStage& stage) {
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
  } else if (shape.schedule == ir::PIPELINE_SCHEDULE_ZB_H1) {
    WriteZbH1(shape, s, w);
  } else if (shape.schedule == ir::PIPELINE_SCHEDULE_ZBV) {
    WriteZbv(shape, s, w);
  } else {
    WriteOneF1B(shape, s, w);
  }
}

// The peak of a running count over a stage's ops: +1 on `up`, −1 on either of `down`.
int64_t PeakCount(const ir::PipelineStage& stage, ir::OpKind up, ir::OpKind down, ir::OpKind down2) {
  int64_t alive = 0, peak = 0;
  for (const ir::PipelineOp& op : stage.ops()) {
    if (op.kind() == up) peak = std::max(peak, ++alive);
    if (op.kind() == down || op.kind() == down2) --alive;
  }
  return peak;
}

}  // namespace

bool SplitsBackward(ir::PipelineSchedule schedule) {
  return schedule == ir::PIPELINE_SCHEDULE_ZB_H1 || schedule == ir::PIPELINE_SCHEDULE_ZBV;
}

void WriteStageOps(const ScheduleShape& shape, int32_t s, ir::PipelineStage& stage) {
  WriteOps(shape, s, stage);
  const bool zbv = shape.stages > 1 && shape.schedule == ir::PIPELINE_SCHEDULE_ZBV;
  stage.set_max_inflight_microbatches(
      static_cast<int32_t>(zbv ? PeakInflight(stage) : InflightMicrobatches(shape, s)));
  stage.set_max_pending_weight_grads(
      static_cast<int32_t>(zbv ? PeakPendingWeight(stage) : PendingWeightGrads(shape, s)));
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
  if (shape.schedule == ir::PIPELINE_SCHEDULE_ZBV) {
    ir::PipelineStage stage;
    WriteOps(shape, s, stage);
    return PeakInflight(stage);
  }
  return std::min(p - s, m);
}

int64_t PendingWeightGrads(const ScheduleShape& shape, int32_t s) {
  if (shape.stages <= 1 || !SplitsBackward(shape.schedule)) return 0;
  if (shape.schedule == ir::PIPELINE_SCHEDULE_ZB_H1) {
    return std::min<int64_t>(s + 1, std::max(shape.microbatches, 1));
  }
  ir::PipelineStage stage;
  WriteOps(shape, s, stage);
  return PeakPendingWeight(stage);
}

int64_t PeakInflight(const ir::PipelineStage& stage) {
  return PeakCount(stage, ir::FORWARD, ir::BACKWARD, ir::BACKWARD_INPUT);
}

int64_t PeakPendingWeight(const ir::PipelineStage& stage) {
  return PeakCount(stage, ir::BACKWARD_INPUT, ir::BACKWARD_WEIGHT, ir::BACKWARD_WEIGHT);
}

namespace {

// Whether chunk c's output on stage s waits for a gradient from another stage (LiveCounts).
bool OutputAwaitsRemoteGradient(const ScheduleShape& shape, int32_t s, int32_t c) {
  const int32_t p = shape.stages, v = std::max(shape.virtual_stages, 1);
  const int32_t vs = v > 1 ? ir::ScheduledVirtualStage(shape.schedule, p, s, c) : s;
  if (vs + 1 >= p * v) return false;
  return ir::ScheduledStageOf(shape.schedule, p, vs + 1) != s;
}

bool Covers(const LiveCounts& a, const LiveCounts& b) {
  return a.inflight >= b.inflight && a.pending_weight >= b.pending_weight &&
         a.awaiting_output >= b.awaiting_output;
}

}  // namespace

std::vector<LiveCounts> PeakLiveCandidates(const ScheduleShape& shape, int32_t s,
                                           const ir::PipelineStage& stage) {
  std::vector<LiveCounts> candidates;
  LiveCounts now;
  for (const ir::PipelineOp& op : stage.ops()) {
    const int64_t awaits = OutputAwaitsRemoteGradient(shape, s, op.chunk()) ? 1 : 0;
    switch (op.kind()) {
      case ir::FORWARD: ++now.inflight; now.awaiting_output += awaits; break;
      case ir::BACKWARD: --now.inflight; now.awaiting_output -= awaits; break;
      case ir::BACKWARD_INPUT:
        --now.inflight; now.awaiting_output -= awaits; ++now.pending_weight; break;
      case ir::BACKWARD_WEIGHT: --now.pending_weight; break;
      default: continue;
    }
    if (std::any_of(candidates.begin(), candidates.end(), [&](const LiveCounts& c) { return Covers(c, now); })) continue;
    std::erase_if(candidates, [&](const LiveCounts& c) { return Covers(now, c); });
    candidates.push_back(now);
  }
  return candidates;
}

ir::Pipeline ScheduledPipeline(const ScheduleShape& shape) {
  ir::Pipeline pipeline;
  pipeline.set_schedule(shape.schedule);
  pipeline.set_microbatches(shape.microbatches);
  pipeline.set_virtual_stages(std::max(shape.virtual_stages, 1));
  for (int32_t s = 0; s < shape.stages; ++s) {
    ir::PipelineStage* stage = pipeline.add_stages();
    stage->set_index(s);
    for (int32_t c = 0; shape.virtual_stages > 1 && c < shape.virtual_stages; ++c) {
      stage->add_chunks()->set_virtual_stage(ir::ScheduledVirtualStage(shape.schedule, shape.stages, s, c));
    }
    WriteStageOps(shape, s, *stage);
  }
  return pipeline;
}

double ScheduleBubbleFraction(const ScheduleShape& shape) {
  const double p = shape.stages, m = shape.microbatches, v = std::max(shape.virtual_stages, 1);
  if (shape.stages <= 1) return 0;
  if (SplitsBackward(shape.schedule)) return ir::SimulatePipeline(ScheduledPipeline(shape)).bubble_fraction;
  return (p - 1) / (v * m + p - 1);
}

}  // namespace accel::planner
