#include "planner/step_compute.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "common/status_macros.h"
#include "ir/enum_names.h"
#include "ir/plan_access.h"
#include "planner/device_profiles.h"
#include "planner/elementwise_ops.h"
#include "planner/matmul_throughput.h"
#include "planner/memory_estimator.h"
#include "planner/memory_model.h"
#include "planner/moe_layers.h"
#include "planner/step_flops.h"

namespace accel::planner {
namespace {

// Bytes the optimizer step moves per owned parameter (fp32 states).
double OptimizerBytesPerParam(const MemoryInputs& in) {
  if (in.optimizer == ir::OPTIMIZER_KIND_SGD) return in.momentum > 0 ? 20 : 12;
  return 28;
}

// The profile's measured optimizer step per parameter for this job's optimizer on the device
// (DeviceProfile.adamw_seconds_per_parameter, one thread), or 0 when it has none: the step is then
// costed by its bytes.
double MeasuredOptimizerSecondsPerParam(const ir::DeviceProfile& profile, const MemoryInputs& in) {
  return in.optimizer == ir::OPTIMIZER_KIND_SGD ? 0.0 : profile.adamw_seconds_per_parameter();
}

// Parameters this stage's ranks update: Σ shard_count (stages ≥ 1) or Σ local_count.
double OwnedParams(const ir::Plan& plan, const StageShardTotals& shards) {
  return static_cast<double>(plan.sharding().stage() >= 1 ? shards.shard_elements
                                                          : shards.local_elements);
}

}  // namespace

double TrainerPassBytes(const ir::Plan& plan, const StageShardTotals& shards) {
  const double m = static_cast<double>(std::max<int64_t>(plan.batch().grad_accum_steps(), 1));
  const double local = static_cast<double>(shards.local_elements);
  const double owned = OwnedParams(plan, shards);
  const auto bytes_of = [](ir::Dtype d) {
    return d == ir::DTYPE_UNSPECIFIED ? 4.0 : static_cast<double>(ir::DtypeBytes(d));
  };
  const double g = bytes_of(plan.precision().param_dtype());  // the module's gradients
  const double r = bytes_of(plan.precision().reduce_dtype());
  const bool every_microstep = plan.sharding().stage() >= 2;
  double bytes = 0;
  if (shards.buckets > 0) {
    const double reducing = every_microstep ? m : 1.0;
    bytes += reducing * local * (g + 2 * r);
    bytes += every_microstep ? m * owned * (r + 8) : owned * (r + 4);
  }
  if (!every_microstep) bytes += (m - 1) * local * 3 * g;
  bytes += owned * (36 + (plan.training().grad_clip_norm() > 0 ? 8 : 0));
  return bytes;
}

namespace {

// Seconds of one forward product and its two backward products on one worker (`share` of the
// profile's figures), each at its own shape's throughput (planner/matmul_throughput.h).
struct GemmSeconds {
  double forward = 0;
  double backward = 0;
};

GemmSeconds TimeGemm(const Gemm& g, const ir::DeviceProfile& profile, ir::Dtype dtype,
                     double share) {
  auto seconds = [&](const Gemm& x) {
    const double rate = MatmulFlopsPerSecond(profile, dtype, x.layout, x.m, x.n, x.k) * share;
    return rate > 0 ? x.Flops() / rate : 0.0;
  };
  GemmSeconds t;
  t.forward = seconds(g);
  for (const Gemm& b : BackwardGemms(g)) t.backward += seconds(b);
  return t;
}

// Matmul seconds of one block per microbatch: forward, backward, and the forward products
// recompute runs again (selective: the attention products; per-op: the attention products and
// the matmuls whose outputs it does not keep; full: all of them).
double LayerMatmulSeconds(const std::vector<Gemm>& gemms, RecomputeMode recompute,
                          const ir::DeviceProfile& profile, ir::Dtype dtype, double share) {
  double total = 0;
  for (const Gemm& g : gemms) {
    const GemmSeconds t = TimeGemm(g, profile, dtype, share);
    double again = recompute == RecomputeMode::kFull || (recompute == RecomputeMode::kSelective && g.attention);
    if (recompute == RecomputeMode::kOp) again = g.op_recomputed;
    total += t.forward * (1 + again) + t.backward;
  }
  return total;
}

// Seconds of `elements` of each measured op (forward, backward, and the forward again for the
// ops `again` marks) on one worker; ops the profile has no cost for count 0.
double ElementwiseSeconds(const ElementwiseElements& elements, const ir::DeviceProfile& profile,
                          ir::Dtype dtype, double share,
                          const std::array<bool, kElementwiseOpCount>& again) {
  double total = 0;
  for (int i = 0; i < kElementwiseOpCount; ++i) {
    const ir::ElementwiseCost* cost =
        FindElementwiseCost(profile, static_cast<ElementwiseOp>(i), dtype);
    if (cost == nullptr || elements[i] == 0) continue;
    total += elements[i] * (cost->forward_seconds_per_element() * (again[i] ? 2 : 1) +
                            cost->backward_seconds_per_element());
  }
  return share > 0 ? total / share : total;
}

// Which block ops recompute runs forward again: every one (full, per-op), the softmax (selective).
std::array<bool, kElementwiseOpCount> RecomputedOps(RecomputeMode mode) {
  std::array<bool, kElementwiseOpCount> again{};
  if (RecomputesBlocks(mode)) again.fill(true);
  if (mode == RecomputeMode::kSelective) {
    again[static_cast<int>(ElementwiseOp::kCausalSoftmax)] = true;
  }
  return again;
}

}  // namespace

double HostMemoryBytesPerSecond(const ir::DeviceProfile& profile, int64_t devices_per_node) {
  const double device =
      profile.memory_bytes_per_second() * profile.memory_efficiency() *
      WorkerShare(profile, devices_per_node);
  const double host = profile.host_memory_bytes_per_second();
  return host > 0 ? std::min(host, device) : device;
}

double CoreShare(const ir::DeviceProfile& profile, int64_t devices_per_node) {
  if (profile.shared_cores_per_node() <= 0 || devices_per_node <= 0) return 1.0;
  return static_cast<double>(profile.shared_cores_per_node()) /
         static_cast<double>(devices_per_node);
}

double WorkerShare(const ir::DeviceProfile& profile, int64_t devices_per_node) {
  if (profile.shared_cores_per_node() <= 0 || devices_per_node <= 0) return 1.0;
  return CoreShare(profile, devices_per_node) * WorkerScalingEfficiency(profile, devices_per_node);
}

double WorkerScalingEfficiency(const ir::DeviceProfile& profile, int64_t workers) {
  const ir::WorkerScaling* below = nullptr;  // the largest count ≤ workers
  const ir::WorkerScaling* above = nullptr;  // the smallest count ≥ workers
  if (workers < 1) return 1.0;
  for (const ir::WorkerScaling& w : profile.worker_scaling()) {
    const int64_t n = w.workers_per_node();
    if (n <= workers && (!below || n > below->workers_per_node())) below = &w;
    if (n >= workers && (!above || n < above->workers_per_node())) above = &w;
  }
  if (!below && !above) return 1.0;
  if (!below || !above || below == above) return (below ? below : above)->efficiency();
  const double lo = std::log2(static_cast<double>(below->workers_per_node()));
  const double hi = std::log2(static_cast<double>(above->workers_per_node()));
  const double f = (std::log2(static_cast<double>(workers)) - lo) / (hi - lo);
  return below->efficiency() + f * (above->efficiency() - below->efficiency());
}

namespace {

// The MoE blocks a stage holds, over all its chunks (0 in a dense model).
int64_t StageMoeBlocks(const ir::Model& model, const StageLayout& stage) {
  if (!HasMoe(model)) return 0;
  if (stage.chunks.empty()) return MoeBlocksIn(model, stage.layer_begin, stage.layer_end);
  int64_t blocks = 0;
  for (const auto& [begin, end] : stage.chunks) blocks += MoeBlocksIn(model, begin, end);
  return blocks;
}

}  // namespace

absl::StatusOr<std::vector<ir::StageComputeTime>> StageComputeTimes(
    const ir::Plan& plan, const ir::DeviceProfile& profile) {
  return StageComputeTimes(plan, profile, ShardTotalsFromPlan(plan));
}

absl::StatusOr<std::vector<ir::StageComputeTime>> StageComputeTimes(
    const ir::Plan& plan, const ir::DeviceProfile& profile, const ShardTotals& shards) {
  ACCEL_ASSIGN_OR_RETURN(MemoryInputs in,
                         MemoryInputsFromPlan(plan, plan.mesh().sequence_parallel()));
  const double m = static_cast<double>(std::max<int64_t>(plan.batch().grad_accum_steps(), 1));
  const int64_t b = in.micro_batch_size;
  const int64_t s = in.seq_len;
  // MoE blocks and dense blocks (all of them in a dense model) have their own MLPs.
  const LayerFlops layer = LayerForwardFlops(in.model, s, b, in.tp, in.cp);
  const LayerFlops dense_layer = LayerForwardFlops(in.model, s, b, in.tp, in.cp, /*moe_block=*/false);
  const double head = HeadForwardFlops(in.model, s, b, in.tp, in.cp);
  ActivationShape shape;
  shape.seq_len = s / std::max<int64_t>(in.cp, 1);
  shape.micro_batch = b;
  shape.hidden = in.model.hidden_size();
  shape.heads = in.model.num_heads();
  shape.ffn = ir::FfnSize(in.model);
  shape.tp = in.tp;
  shape.sequence_parallel = in.sequence_parallel;
  shape.fused_attention = in.fused_attention;
  const double layer_traffic = static_cast<double>(ActivationBytesPerLayer(shape, RecomputeMode::kNone)) *
                               static_cast<double>(in.compute_bytes) / 2.0;
  const double logits = static_cast<double>(
      LogitsBytes(s, b, in.model.padded_vocab_size(), in.tp, in.compute_bytes));
  const double share = WorkerShare(profile, plan.topology().devices_per_node());
  const ir::Dtype dtype = ir::ComputeDtype(plan.precision());
  const double layer_matmul = LayerMatmulSeconds(LayerForwardGemms(in.model, s, b, in.tp, in.cp),
                                                 in.recompute, profile, dtype, share);
  const double dense_matmul = LayerMatmulSeconds(LayerForwardGemms(in.model, s, b, in.tp, in.cp, false),
                                                 in.recompute, profile, dtype, share);
  const GemmSeconds head_matmul =
      TimeGemm(HeadForwardGemm(in.model, s, b, in.tp, in.cp), profile, dtype, share);
  const double layer_elementwise = ElementwiseSeconds(
      BlockElementwiseElements(in.model, s, b, in.tp, in.cp, in.sequence_parallel), profile,
      dtype, share, RecomputedOps(in.recompute));
  const double head_elementwise = ElementwiseSeconds(
      HeadElementwiseElements(in.model, s, b, in.tp, in.cp, in.sequence_parallel), profile, dtype,
      share, {});
  const double bytes_per_second =
      profile.memory_bytes_per_second() * profile.memory_efficiency() * share;
  // ZeRO-Offload: the optimizer steps on the host over its offloaded states.
  const bool host_step = in.offload != spec::Offload::kNone;
  const double host_bytes_per_second =
      HostMemoryBytesPerSecond(profile, plan.topology().devices_per_node());

  std::vector<ir::StageComputeTime> out;
  std::vector<StageLayout> stages = in.stages;
  if (stages.empty()) stages = EvenStageLayouts(in.model.num_layers(), 1, ir::PIPELINE_SCHEDULE_1F1B, 1);
  for (const StageLayout& st : stages) {
    const double layers = static_cast<double>(st.Layers());
    const double moe = static_cast<double>(StageMoeBlocks(in.model, st)), dense = layers - moe;
    ir::StageComputeTime t;
    t.set_stage(st.index);
    const double forward = m * (moe * layer.Total() + dense * dense_layer.Total() + (st.has_lm_head ? head : 0.0));
    t.set_forward_flops(forward);
    t.set_backward_flops(BackwardFlops(forward));
    // The chunked loss recomputes each chunk's logits in backward: one more head forward.
    const double head_recompute = st.has_lm_head ? head : 0.0;
    t.set_recompute_flops(m * (moe * LayerRecomputeFlops(layer, in.recompute) +
                               dense * LayerRecomputeFlops(dense_layer, in.recompute) + head_recompute));
    double bytes = m * layers * 3.0 * layer_traffic;
    if (RecomputesBlocks(in.recompute)) bytes += m * layers * layer_traffic;
    if (st.has_lm_head) bytes += m * 3.0 * logits;
    const double owned = OwnedParams(plan, shards.Stage(st.index));
    bytes += TrainerPassBytes(plan, shards.Stage(st.index));
    const double optimizer = owned * OptimizerBytesPerParam(in);
    if (host_step) {
      t.set_host_memory_bytes(optimizer);
      t.set_host_seconds(host_bytes_per_second > 0 ? optimizer / host_bytes_per_second : 0);
    } else if (const double measured = MeasuredOptimizerSecondsPerParam(profile, in);
               measured > 0) {
      t.set_optimizer_seconds(share > 0 ? owned * measured / share : owned * measured);
    } else {
      bytes += optimizer;
    }
    t.set_memory_bytes(bytes);
    t.set_matmul_seconds(m * (moe * layer_matmul + dense * dense_matmul +
                              (st.has_lm_head ? 2 * head_matmul.forward + head_matmul.backward : 0.0)));
    t.set_memory_seconds(bytes_per_second > 0 ? bytes / bytes_per_second : 0);
    t.set_elementwise_seconds(
        m * (layers * layer_elementwise + (st.has_lm_head ? head_elementwise : 0.0)));
    t.set_seconds(t.matmul_seconds() + t.memory_seconds() + t.elementwise_seconds() +
                  t.host_seconds() + t.optimizer_seconds());
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace accel::planner
