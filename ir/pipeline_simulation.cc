#include "ir/pipeline_simulation.h"

#include <algorithm>
#include <deque>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "ir/plan_access.h"

namespace accel::ir {
namespace {

bool IsCompute(OpKind kind) {
  return kind == FORWARD || kind == BACKWARD || kind == BACKWARD_INPUT || kind == BACKWARD_WEIGHT;
}

// What a compute op waits for: a forward the previous virtual stage's forward, a backward (or
// its input half) the next virtual stage's, a weight gradient its own input gradient.
OpKind AwaitedKind(OpKind kind) { return kind == BACKWARD_WEIGHT ? BACKWARD_INPUT : kind; }
int AwaitedVirtualStage(OpKind kind, int vs) {
  if (kind == FORWARD) return vs - 1;
  return kind == BACKWARD_WEIGHT ? vs : vs + 1;
}

bool IsSend(OpKind kind) { return kind == SEND_ACTIVATION || kind == SEND_GRAD; }
bool IsRecv(OpKind kind) { return kind == RECV_ACTIVATION || kind == RECV_GRAD; }

// The virtual stage each (stage, chunk) runs: ModelChunk.virtual_stage, or the stage's index
// without chunks; -1 for a chunk the stage does not have.
class VirtualStageMap {
 public:
  explicit VirtualStageMap(const Pipeline& pipeline) {
    for (int s = 0; s < pipeline.stages_size(); ++s) {
      const PipelineStage& stage = pipeline.stages(s);
      std::vector<int> row;
      if (stage.chunks_size() == 0) row.push_back(s);
      for (const ModelChunk& c : stage.chunks()) row.push_back(c.virtual_stage());
      count_ += static_cast<int>(row.size());
      rows_.push_back(std::move(row));
    }
    stage_of_.assign(static_cast<size_t>(count_), -1);
    for (int s = 0; s < static_cast<int>(rows_.size()); ++s) {
      for (int vs : rows_[static_cast<size_t>(s)]) {
        if (vs >= 0 && vs < count_) stage_of_[static_cast<size_t>(vs)] = s;
      }
    }
  }
  // Virtual stage of `chunk` on stage `s`, or -1.
  int Of(int s, int32_t chunk) const {
    const auto& row = rows_[static_cast<size_t>(s)];
    if (chunk < 0 || static_cast<size_t>(chunk) >= row.size()) return -1;
    const int vs = row[static_cast<size_t>(chunk)];
    return vs >= 0 && vs < count_ ? vs : -1;
  }
  // The stage running virtual stage vs, or -1.
  int StageOf(int vs) const { return vs >= 0 && vs < count_ ? stage_of_[static_cast<size_t>(vs)] : -1; }
  int count() const { return count_; }

 private:
  std::vector<std::vector<int>> rows_;
  std::vector<int> stage_of_;
  int count_ = 0;
};

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
  // Each message: (microbatch, virtual stage of the sender).
  std::map<Key, std::deque<std::pair<int32_t, int>>> channels;
  const VirtualStageMap vs(pipeline);
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
          channels[{s, peer, op.kind() == SEND_GRAD}].push_back({op.microbatch(), vs.Of(s, op.chunk())});
        } else if (recv) {
          auto& q = channels[{peer, s, op.kind() == RECV_GRAD}];
          if (q.empty()) break;  // blocked
          if (q.front().first != op.microbatch()) {
            out.push_back(absl::StrCat("stage ", s, " receives microbatch ", op.microbatch(),
                                       " from stage ", peer, " but the next one sent is ", q.front().first));
            return out;
          }
          const int self = vs.Of(s, op.chunk());
          const int expected = op.kind() == RECV_GRAD ? self + 1 : self - 1;
          if (self < 0 || q.front().second != expected) {
            out.push_back(absl::StrCat("stage ", s, " chunk ", op.chunk(), " receives microbatch ",
                                       op.microbatch(), " from stage ", peer,
                                       " but the next one sent comes from virtual stage ",
                                       q.front().second, ", not ", expected));
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
                               key.gradient ? "gradient" : "activation", " of microbatch ", q.front().first, ")"));
  }
  return out;
}

// Names the root cause of ops left unplaced: a stage waiting for an op its peer never runs,
// else (a cycle of waits) the first blocked stage. Empty when everything was placed.
std::string StallCause(const Pipeline& pipeline, const std::vector<std::vector<const PipelineOp*>>& compute,
                       const std::vector<size_t>& next, const VirtualStageMap& vmap, bool interleaved) {
  std::string deadlock;
  for (int s = 0; s < pipeline.stages_size(); ++s) {
    size_t k = next[static_cast<size_t>(s)];
    if (k == compute[static_cast<size_t>(s)].size()) continue;
    const PipelineOp& op = *compute[static_cast<size_t>(s)][k];
    const int vs = vmap.Of(s, op.chunk());
    const int peer_vs = AwaitedVirtualStage(op.kind(), vs);
    const int peer = vmap.StageOf(peer_vs);
    bool peer_has_op = false;
    if (peer >= 0) {
      for (const PipelineOp* other : compute[static_cast<size_t>(peer)]) {
        peer_has_op |= other->kind() == AwaitedKind(op.kind()) && other->microbatch() == op.microbatch() &&
                       vmap.Of(peer, other->chunk()) == peer_vs;
      }
    }
    auto name = [&](OpKind kind, int32_t chunk) {
      return PipelineOpName(kind, op.microbatch(), interleaved ? chunk : -1);
    };
    int32_t peer_chunk = 0;
    if (peer >= 0) {
      for (const ModelChunk& c : pipeline.stages(peer).chunks()) {
        if (c.virtual_stage() == peer_vs) break;
        ++peer_chunk;
      }
    }
    std::string text = absl::StrCat("stage ", s, " stops at ", name(op.kind(), op.chunk()), ": waits for ",
                                    name(AwaitedKind(op.kind()), peer_chunk), " on stage ", peer);
    if (!peer_has_op) return absl::StrCat(text, ", which never runs");
    if (deadlock.empty()) deadlock = absl::StrCat(text, ", which is blocked too (deadlock)");
  }
  return deadlock;
}

}  // namespace

std::vector<int> MatchingPeerOps(const Pipeline& pipeline, int stage) {
  const VirtualStageMap vs(pipeline);
  // (gradient, sending virtual stage, microbatch) of a send or receive op of stage s.
  auto key = [&](int s, const PipelineOp& op) {
    const int self = vs.Of(s, op.chunk());
    const bool gradient = op.kind() == SEND_GRAD || op.kind() == RECV_GRAD;
    int from = self;
    if (op.kind() == RECV_ACTIVATION) from = self - 1;
    if (op.kind() == RECV_GRAD) from = self + 1;
    return std::make_tuple(gradient, self < 0 ? -1 : from, op.microbatch());
  };
  using Key = std::tuple<bool, int, int32_t, bool>;  // key(...), and whether the op sends
  // Each peer's sends and receives to or from `stage`, by key: one pass per peer.
  std::map<int, std::map<Key, int>> peers;
  auto index_of = [&](int peer) -> const std::map<Key, int>& {
    auto [it, fresh] = peers.try_emplace(peer);
    if (!fresh) return it->second;
    const auto& peer_ops = pipeline.stages(peer).ops();
    for (int j = 0; j < peer_ops.size(); ++j) {
      const PipelineOp& other = peer_ops[j];
      if (other.peer_stage() != stage || !(IsSend(other.kind()) || IsRecv(other.kind()))) continue;
      const auto [gradient, from, mb] = key(peer, other);
      it->second.try_emplace(Key{gradient, from, mb, IsSend(other.kind())}, j);
    }
    return it->second;
  };
  const auto& ops = pipeline.stages(stage).ops();
  std::vector<int> out(static_cast<size_t>(ops.size()), -1);
  for (int i = 0; i < ops.size(); ++i) {
    const PipelineOp& op = ops[i];
    const bool send = IsSend(op.kind()), recv = IsRecv(op.kind());
    const int peer = op.peer_stage();
    if ((!send && !recv) || peer < 0 || peer >= pipeline.stages_size()) continue;
    const auto [gradient, from, mb] = key(stage, op);
    const std::map<Key, int>& index = index_of(peer);
    // A send pairs with the peer's receive, a receive with the peer's send.
    auto it = index.find(Key{gradient, from, mb, !send});
    if (it != index.end()) out[static_cast<size_t>(i)] = it->second;
  }
  return out;
}

std::string PipelineOpName(OpKind kind, int32_t microbatch, int32_t chunk) {
  const char* letter = kind == FORWARD ? "F" : kind == BACKWARD_INPUT ? "I" : kind == BACKWARD_WEIGHT ? "W" : "B";
  std::string name = absl::StrCat(letter, microbatch);
  if (chunk >= 0) absl::StrAppend(&name, "c", chunk);
  return name;
}

PipelineTimeline SimulatePipeline(const Pipeline& pipeline) {
  PipelineTimeline timeline;
  const int stage_count = pipeline.stages_size();
  const bool interleaved = VirtualStages(pipeline) > 1;
  const VirtualStageMap vmap(pipeline);
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
  // End slot (exclusive) of each virtual stage's forward/backward of each microbatch; -1 until
  // placed. Without interleaving the virtual stages are the stages.
  std::vector<std::vector<int64_t>> forward_end(static_cast<size_t>(vmap.count()),
                                                std::vector<int64_t>(mb_bound, -1));
  std::vector<std::vector<int64_t>> backward_end = forward_end;
  std::vector<size_t> next(static_cast<size_t>(stage_count), 0);
  std::vector<int64_t> free_at(static_cast<size_t>(stage_count), 0);

  // The virtual stage an op waits for (AwaitedVirtualStage), or -1.
  auto peer_of = [&](int s, const PipelineOp& op) -> int {
    const int vs = vmap.Of(s, op.chunk());
    if (vs < 0 || !in_range(op.microbatch())) return -1;
    const int peer = AwaitedVirtualStage(op.kind(), vs);
    return peer >= 0 && peer < vmap.count() ? peer : -1;
  };
  // The slot the op's peer finishes (0: no peer), or -1 while the peer has not run.
  auto ready_at = [&](int s, const PipelineOp& op) -> int64_t {
    const int peer = peer_of(s, op);
    if (peer < 0) return 0;
    const auto& ends = op.kind() == FORWARD ? forward_end : backward_end;
    return ends[static_cast<size_t>(peer)][static_cast<size_t>(op.microbatch())];
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
      const int vs = vmap.Of(s, op.chunk());
      if (vs >= 0 && in_range(op.microbatch()) && op.kind() != BACKWARD_WEIGHT) {
        auto& ends = op.kind() == FORWARD ? forward_end : backward_end;
        ends[static_cast<size_t>(vs)][static_cast<size_t>(op.microbatch())] = slot + 1;
      }
      timeline.stages[static_cast<size_t>(s)].push_back({slot, op.kind(), op.microbatch(), op.chunk()});
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
  timeline.stall = StallCause(pipeline, compute, next, vmap, interleaved);
  timeline.transport = SimulateTransport(pipeline);
  int64_t cells = static_cast<int64_t>(stage_count) * timeline.makespan_slots;
  timeline.idle_slots = cells - timeline.busy_slots;
  if (cells > 0) {
    timeline.bubble_fraction = static_cast<double>(timeline.idle_slots) / static_cast<double>(cells);
  }
  return timeline;
}

}  // namespace accel::ir
