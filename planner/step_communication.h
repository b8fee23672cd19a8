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
//   "dp_replicate" on every reducing micro-step whenever dp_replicate > 1 from stage 2 (as the
//   executor does, sharding.hybrid or not). These launch from gradient hooks while backward
//   runs: per reducing micro-step only the last bucket and whatever exceeds that micro-step's
//   backward compute is exposed. Where the workers share the node's cores (a CPU device) no
//   idle core runs the collective and that backward is taken as 0, but the part the profile's
//   shared_core_bucket_overlap measured (waiting, which a busy core spends on backward) hides:
//   exposed × (1 − that fraction). With cp > 1 the reduced gradients (shards from stage 2) are
//   then all-reduced over "cp" once per step, every bucket, exposed (plan.proto Sharding).
// - context parallel (ring attention, Liu et al. 2023): per block and micro-step, cp − 1
//   send/recv of the K and V of s/cp tokens (2·b·(s/cp)·(kv_heads/tp)·head_dim·compute bytes)
//   in forward, again in a selective or full recompute, twice in backward (K/V and their
//   gradients), over "cp"; exposed: max(0, transfers − (cp − 1)/cp × the attention core
//   compute of those passes (step_flops.h LayerFlops::attention), which they overlap).
// - sharding offload (ZeRO-Offload, Ren et al. 2021), over "host_link" (send_recv, α + n/β with
//   DeviceProfile.host_link_bytes_per_second and kHostCopyLatencySeconds, or on a profile
//   without a host link a copy within memory at memory bandwidth × efficiency / 2 and no
//   latency): the reduced gradient shards (reduce dtype) to the host on every reducing
//   micro-step; offload optimizer: the updated parameter shards (param dtype) back once per
//   step; offload all: the parameter shards to the device before every stage-3 forward and
//   backward gather instead. Exposed (no overlap assumed).
// - stages 1–2: every shard unit all-gathered over "dp_shard" after the optimizer step (param
//   dtype); stage 3: every unit's non-persistent parameters all-gathered before its forward and
//   again before its backward (the tied embeddings stay gathered in between), each micro-step,
//   the routed experts' shards over "ep_dp" (mixture of experts). Exposed.
// - tensor parallel (Megatron-LM, Shoeybi et al. 2019; Korthikanti et al. 2022 §4.2.2): per
//   block and micro-step two all-reduces of b·s·h in forward and two in backward, or with
//   sequence parallelism two all-gathers and two reduce-scatters each way; full recompute
//   repeats the forward ones; the vocabulary-parallel embedding all-reduces its output (first
//   stage), the head's input gradient is all-reduced in backward and the vocabulary-parallel
//   loss all-reduces three b·s fp32 vectors (last stage). With sequence parallelism the
//   embedding output is reduce-scattered instead (its gradient all-gathered in backward), the
//   head's input all-gathered (its gradient reduce-scattered), and the tp-replicated
//   parameters' fp32 gradients (StageShardTotals::tp_replicated_elements; the owned 1/dp_shard
//   from stage 1) all-reduced once per step, after the dp reduction, in one collective
//   (executor/train/replicated_grads.h; Megatron-LM's finalize_model_grads). Replicated
//   key/value heads: their projections' fp32 gradients (layers × 2 × head_dim × (h + bias),
//   owned part from stage 1) likewise over "tp_kv". Exposed; each of these collectives blocks
//   the step, so each also costs DeviceProfile.blocking_collective_seconds (what blocking
//   between phases of real work adds: the slowest rank's phase, caches evicted while waiting).
// - pipeline: per microbatch one activation (forward) and one gradient (backward) of b·s·h
//   (/ tp with sequence parallelism) to or from each neighbouring stage; with a tied
//   embedding, the first stage's embedding and the last stage's head copy sum their fp32
//   gradients (padded_vocab / tp × h, owned part from stage 1) over "embedding" once per step.
//   Exposed.
// - expert parallel (mixture of experts, docs/planner-facts.md §9): per MoE block and micro-step
//   an all-to-all over "ep" dispatching the routed rows (R = T·k·margin rows of h in the compute
//   dtype, T = b·s/cp) and one combining them back, in forward, again with full or per-op
//   recompute, and twice in backward (their gradients), each forward dispatch preceded by an
//   all-to-all of the per-expert token counts (8·E bytes). Exposed. The routed experts' gradients
//   are left out of the buckets' collectives and reduced over "ep_dp" (reduce-scatter every
//   micro-step from stage 2, else an all-reduce on the last), one collective per unit holding
//   experts, hidden behind the backward the buckets leave; their shards join the dp_replicate
//   all-reduce; cp does not reduce them (ep_dp spans the cp ranks).
// - per step, scalars: the loss averaged over "dp"; the gradient norm's partial Σ g² over
//   "dp_shard" (stages 1–3, two fp64), over "tp" (one fp64) and over "pp" with the last stage's
//   loss (two fp64 calls). Exposed: each is one latency.
namespace accel::planner {

// The ring of each process-group set the step's collectives use (dp, dp_shard, dp_replicate,
// cp, tp, pp, and for mixture-of-experts models ep and ep_dp): its group size and link class from plan.mesh and topology.devices_per_node
// (planner/mesh_groups.h; the plan's rank lists are not read) and the profile's bandwidth ×
// link_efficiency and latency for that class. Computed once per plan.
class GroupLinks {
 public:
  struct Link {
    const char* name = "";
    int64_t size = 1;
    bool inter_node = false;
    ir::LinkClass link_class = ir::LINK_CLASS_INTRA_NODE;  // CommunicationTime.link
    double bytes_per_second = 0;
    double latency_seconds = 0;
    // What each collective over it adds to a step by blocking (tp and tp_kv:
    // DeviceProfile.blocking_collective_seconds; 0 for the others).
    double blocking_seconds = 0;
  };
  GroupLinks(const ir::Plan& plan, const ir::DeviceProfile& profile);

  // The link of set `group` (dp, dp_shard, dp_replicate, cp, tp, pp, tp_kv, "embedding": the
  // first and the last pipeline stage of a tied embedding, or "host_link": the device and its
  // host memory, size 2); size 1 (no collective) for a set not listed.
  const Link& Of(std::string_view group) const;

  // The compute dtype's matmul FLOP/s one worker gets (peak × matmul_efficiency ×
  // WorkerShare): the attention compute ring-attention transfers overlap.
  double matmul_flops_per_second() const { return matmul_flops_per_second_; }

  // The fraction of the gradient buckets' seconds hidden behind backward when the node's workers
  // share its cores (DeviceProfile.shared_core_bucket_overlap, measured by `accel calibrate`);
  // 0 on devices with their own cores, where the overlap model of StageCommunication applies.
  double shared_core_bucket_overlap() const { return shared_core_bucket_overlap_; }

 private:
  // dp, dp_shard, dp_replicate, cp, tp, pp, tp_kv, embedding, ep, ep_dp, host_link
  std::array<Link, 11> links_;
  double matmul_flops_per_second_ = 0;
  double shared_core_bucket_overlap_ = 0;
};

// Latency of one device–host copy over PCIe: assumed of the order of a cudaMemcpyAsync launch
// and a PCIe round trip (~10 µs; not a datasheet figure).
inline constexpr double kHostCopyLatencySeconds = 10e-6;

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
