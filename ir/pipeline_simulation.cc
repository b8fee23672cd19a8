#include "ir/pipeline_simulation.h"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"

namespace accel::ir {
namespace {

bool IsCompute(OpKind kind) { return kind == FORWARD || kind == BACKWARD; }

bool IsSend(OpKind kind) { return kind == SEND_ACTIVATION || kind == SEND_GRAD; }
bool IsRecv(OpKind kind) { return kind == RECV_ACTIVATION || kind == RECV_GRAD; }

// Runs every stage's list with asynchronous sends and blocking receives over FIFO channels, one
// per (from, to, activation or gradient), until all are done or none can progress.
std::vector<std::string> SimulateTransport(const Pipeline& pipeline) {
  std::vector<std::string> out;
  const int p = pipeline.stages_size();
  struct Key {
    int from, to;
    bool gradient;
    bool operator<(const Key& o) const {
      return std::tie(from, to, gradient) < std::tie(o.from, o.to, o.gradient);
    }
  };
  std::map<Key, std::deque<int32_t>> channels;
  std::vector<int> pc(static_cast<size_t>(p), 0);
  int done = 0;
  for (int s = 0; s < p; ++s) done += pipeline.stages(s).ops_size() == 0;
  while (done < p) {
    bool progressed = false;
    for (int s = 0; s < p; ++s) {
      const auto& ops = pipeline.stages(s).ops();
      int& k = pc[static_cast<size_t>(s)];
      while (k < ops.size()) {
        const PipelineOp& op = ops[k];
        const int peer = op.peer_stage();
        const bool send = IsSend(op.kind()), recv = IsRecv(op.kind());
        if ((send || recv) && (peer < 0 || peer >= p || peer == s)) {
          out.push_back(absl::StrCat("stage ", s, " op ", k, " has peer ", peer));
          return out;
        }
        if (send) {
          channels[{s, peer, op.kind() == SEND_GRAD}].push_back(op.microbatch());
        } else if (recv) {
          auto& q = channels[{peer, s, op.kind() == RECV_GRAD}];
          if (q.empty()) break;  // blocked
          if (q.front() != op.microbatch()) {
            out.push_back(absl::StrCat("stage ", s, " receives microbatch ", op.microbatch(),
                                       " from stage ", peer, " but the next one sent is ", q.front()));
            return out;
          }
          q.pop_front();
        }
        ++k;
        progressed = true;
        if (k == ops.size()) ++done;
      }
    }
    if (!progressed) {
      std::string where;
      for (int s = 0; s < p; ++s) {
        if (pc[static_cast<size_t>(s)] < pipeline.stages(s).ops_size()) {
          absl::StrAppend(&where, " stage ", s, "@op", pc[static_cast<size_t>(s)]);
        }
      }
      out.push_back("pipeline schedule deadlocks:" + where);
      return out;
    }
  }
  for (const auto& [key, q] : channels) {
    if (q.empty()) continue;
    out.push_back(absl::StrCat("a send is never received (stage ", key.from, " to stage ", key.to, ", ",
                               key.gradient ? "gradient" : "activation", " of microbatch ", q.front(), ")"));
  }
  return out;
}

}  // namespace

std::string PipelineOpName(OpKind kind, int32_t microbatch) {
  return absl::StrCat(kind == FORWARD ? "F" : "B", microbatch);
}

PipelineTimeline SimulatePipeline(const Pipeline& pipeline) {
  PipelineTimeline timeline;
  const int stage_count = pipeline.stages_size();
  timeline.stages.resize(static_cast<size_t>(stage_count));
  std::vector<std::vector<const PipelineOp*>> compute(static_cast<size_t>(stage_count));
  size_t op_count = 0;
  for (int s = 0; s < stage_count; ++s) {
    for (const PipelineOp& op : pipeline.stages(s).ops()) {
      if (IsCompute(op.kind())) compute[static_cast<size_t>(s)].push_back(&op);
    }
    op_count += compute[static_cast<size_t>(s)].size();
  }
  // A valid microbatch index is below the number of ops of any stage that runs it; indices
  // outside [0, op_count) cannot pair with a peer, so they get no cross-stage dependency (the
  // verifier reports them) and the tables below stay bounded by the input size.
  auto in_range = [&](int32_t mb) { return mb >= 0 && static_cast<size_t>(mb) < op_count; };
  size_t mb_bound = 0;
  for (const auto& ops : compute) {
    for (const PipelineOp* op : ops) {
      if (in_range(op->microbatch())) {
        mb_bound = std::max(mb_bound, static_cast<size_t>(op->microbatch()) + 1);
      }
    }
  }
  // End slot (exclusive) of each stage's forward/backward of each microbatch; -1 until placed.
  std::vector<std::vector<int64_t>> forward_end(static_cast<size_t>(stage_count),
                                                std::vector<int64_t>(mb_bound, -1));
  std::vector<std::vector<int64_t>> backward_end = forward_end;
  std::vector<size_t> next(static_cast<size_t>(stage_count), 0);
  std::vector<int64_t> free_at(static_cast<size_t>(stage_count), 0);

  // The slot the op's peer finishes (0: no peer), or -1 while the peer has not run.
  auto ready_at = [&](int s, const PipelineOp& op) -> int64_t {
    if (!in_range(op.microbatch())) return 0;
    size_t mb = static_cast<size_t>(op.microbatch());
    if (op.kind() == FORWARD) return s > 0 ? forward_end[static_cast<size_t>(s - 1)][mb] : 0;
    return s + 1 < stage_count ? backward_end[static_cast<size_t>(s + 1)][mb] : 0;
  };
  bool progress = true;
  auto advance = [&](int s) {
    size_t& k = next[static_cast<size_t>(s)];
    const auto& ops = compute[static_cast<size_t>(s)];
    while (k < ops.size()) {
      const PipelineOp& op = *ops[k];
      int64_t ready = ready_at(s, op);
      if (ready < 0) return;
      int64_t slot = std::max(free_at[static_cast<size_t>(s)], ready);
      free_at[static_cast<size_t>(s)] = slot + 1;
      if (in_range(op.microbatch())) {
        auto& ends = op.kind() == FORWARD ? forward_end : backward_end;
        ends[static_cast<size_t>(s)][static_cast<size_t>(op.microbatch())] = slot + 1;
      }
      timeline.stages[static_cast<size_t>(s)].push_back({slot, op.kind(), op.microbatch()});
      timeline.makespan_slots = std::max(timeline.makespan_slots, slot + 1);
      ++timeline.busy_slots;
      ++k;
      progress = true;
    }
  };
  // Forward work flows down the stages and backward work up, so alternating sweeps place
  // everything in a number of rounds bounded by the schedule's direction changes.
  while (progress) {
    progress = false;
    for (int s = 0; s < stage_count; ++s) advance(s);
    for (int s = stage_count - 1; s >= 0; --s) advance(s);
  }
  // Name the root cause: a stage waiting for an op its peer never runs, else (a cycle of
  // waits) the first blocked stage.
  std::string deadlock;
  for (int s = 0; s < stage_count; ++s) {
    size_t k = next[static_cast<size_t>(s)];
    if (k == compute[static_cast<size_t>(s)].size()) continue;
    const PipelineOp& op = *compute[static_cast<size_t>(s)][k];
    int peer = op.kind() == FORWARD ? s - 1 : s + 1;
    bool peer_has_op = false;
    for (const PipelineOp* other : compute[static_cast<size_t>(peer)]) {
      if (other->kind() == op.kind() && other->microbatch() == op.microbatch()) peer_has_op = true;
    }
    std::string name = PipelineOpName(op.kind(), op.microbatch());
    std::string text = absl::StrCat("stage ", s, " stops at ", name, ": waits for ", name,
                                    " on stage ", peer);
    if (!peer_has_op) {
      timeline.stall = absl::StrCat(text, ", which never runs");
      break;
    }
    if (deadlock.empty()) deadlock = absl::StrCat(text, ", which is blocked too (deadlock)");
  }
  if (timeline.stall.empty()) timeline.stall = deadlock;
  timeline.transport = SimulateTransport(pipeline);
  int64_t cells = static_cast<int64_t>(stage_count) * timeline.makespan_slots;
  timeline.idle_slots = cells - timeline.busy_slots;
  if (cells > 0) {
    timeline.bubble_fraction = static_cast<double>(timeline.idle_slots) / static_cast<double>(cells);
  }
  return timeline;
}

}  // namespace accel::ir
