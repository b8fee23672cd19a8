#ifndef ACCEL_PLANNER_STEP_COMMUNICATION_H_
#define ACCEL_PLANNER_STEP_COMMUNICATION_H_

#include <array>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"
#include "planner/shard_layout.h"

// The collectives one rank of a pipeline stage issues per optimizer step, as the executor
// schedules them (plan.proto's Sharding and Mesh comments), each costed with the ring α–β model
// (planner/collective_cost.h) on the link its group crosses:
// - data parallel, per the plan's buckets (Bucket.bytes, reduce dtype): stages 0–1 all-reduce
//   every bucket over "dp" on the last micro-step; stages 2–3 reduce-scatter every bucket over
//   "dp_shard" on every micro-step (on Gloo, which lacks reduce-scatter, the executor all-reduces
//   a copy: costed as an all-reduce); hybrid adds an all-reduce of the reduced shards over
//   "dp_replicate". These launch from gradient hooks while backward runs: per reducing
//   micro-step only the last bucket and whatever exceeds that micro-step's backward compute is
//   exposed.
// - stages 1–2: every shard unit all-gathered over "dp_shard" after the optimizer step (param
//   dtype); stage 3: every unit's non-persistent parameters all-gathered before its forward and
//   again before its backward (the tied embeddings stay gathered in between), each micro-step.
//   Exposed.
// - tensor parallel (Megatron-LM, Shoeybi et al. 2019; Korthikanti et al. 2022 §4.2.2): per
//   block and micro-step two all-reduces of b·s·h in forward and two in backward, or with
//   sequence parallelism two all-gathers and two reduce-scatters each way; full recompute
//   repeats the forward ones; the vocabulary-parallel embedding all-reduces its output (first
//   stage), the head's input gradient is all-reduced in backward and the vocabulary-parallel
//   loss all-reduces three b·s fp32 vectors (last stage). Exposed.
// - pipeline: per microbatch one activation (forward) and one gradient (backward) of b·s·h
//   (/ tp with sequence parallelism) to or from each neighbouring stage. Exposed.
namespace accel::planner {

// The ring of each process-group set the step's collectives use (dp, dp_shard, dp_replicate,
// tp, pp): its group size and link class from plan.mesh and topology.devices_per_node
// (planner/mesh_groups.h; the plan's rank lists are not read) and the profile's bandwidth ×
// link_efficiency and latency for that class. Computed once per plan.
class GroupLinks {
 public:
  struct Link {
    const char* name = "";
    int64_t size = 1;
    bool inter_node = false;
    double bytes_per_second = 0;
    double latency_seconds = 0;
  };
  GroupLinks(const ir::Plan& plan, const ir::DeviceProfile& profile);

  // The link of set `group`; size 1 (no collective) for a set not listed above.
  const Link& Of(std::string_view group) const;

 private:
  std::array<Link, 5> links_;
};

// The CommunicationTime terms of `stage`'s ranks with seconds, exposed_seconds and formulas
// filled, its buckets and units read from the plan (ShardTotalsFromPlan).
// `backward_seconds_per_microstep`: that stage's backward (and recompute) compute time of one
// micro-step, behind which gradient buckets hide. Collectives over groups of one rank are left
// out. Errors: InvalidArgument for a dtype name the planner never writes.
absl::StatusOr<std::vector<ir::CommunicationTime>> StageCommunication(
    const ir::Plan& plan, const ir::DeviceProfile& profile, int32_t stage,
    double backward_seconds_per_microstep);

// StageCommunication with the links and the stage's shard totals given (planner/shard_layout.h:
// from the plan's units and buckets, or the planner's summary mode's totals); `formulas` false
// leaves CommunicationTime.formula empty (every number is the same).
absl::StatusOr<std::vector<ir::CommunicationTime>> StageCommunication(
    const ir::Plan& plan, const GroupLinks& links, const StageShardTotals& shards, int32_t stage,
    double backward_seconds_per_microstep, bool formulas);

// ExposedSeconds(StageCommunication(...)) without building the messages: the step-time estimate
// compares every stage this way and builds the terms of the slowest one only.
double StageExposedSeconds(const ir::Plan& plan, const GroupLinks& links,
                           const StageShardTotals& shards, int32_t stage,
                           double backward_seconds_per_microstep);

// Seconds of `terms` not hidden behind the bucket overlap, i.e. Σ exposed_seconds.
double ExposedSeconds(const std::vector<ir::CommunicationTime>& terms);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_STEP_COMMUNICATION_H_
