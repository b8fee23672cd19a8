// Where every model parameter sits in the plan's sharding: its shard unit, its gradient bucket
// and the flat element range this rank owns. Built from plan.sharding() and matched by name to
// the module's parameters; the executor never re-derives units, buckets or shard sizes.
// Torch-free.
#ifndef ACCEL_EXECUTOR_TRAIN_SHARD_LAYOUT_H_
#define ACCEL_EXECUTOR_TRAIN_SHARD_LAYOUT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/plan.pb.h"

namespace accel::exec {

// One module parameter.
struct ParamSlot {
  std::string name;          // Hugging Face name (the module's named_parameters() key)
  int64_t numel = 0;         // elements (Parameter.local_count)
  int64_t shard_numel = 0;   // elements per dp_shard rank, padded (Parameter.shard_count)
  int64_t owned_begin = 0;   // this rank's flat range [owned_begin, owned_end) of the parameter
  int64_t owned_end = 0;
  int unit = -1;             // index into ShardLayout::units
  int bucket = -1;           // index into ShardLayout::buckets
  int64_t bucket_offset = 0;        // element offset in the bucket's unsharded buffer
  int64_t bucket_shard_offset = 0;  // element offset in each rank's block of the bucket
  int64_t unit_shard_offset = 0;    // element offset in each rank's block of its UnitGather
  bool persistent = false;   // stage 3: kept whole (Parameter.persistent)
  bool tp_split = false;     // split over tensor-parallel ranks (Parameter.tp_dim >= 0)
  int tp_dim = -1;           // Parameter.tp_dim
  int tp_parts = 1;          // Parameter.tp_parts (at least 1)
  int tp_replicas = 1;       // Parameter.tp_replicas (at least 1): tp ranks holding the same slice
  // Parameter.tied_to: this is a pipeline stage's copy of that first-stage parameter, whose
  // gradient the trainer sums with the original's and which the gradient norm counts once.
  std::string tied_to;
  // A routed expert (Parameter.routed_expert): sharded and reduced over "ep_dp"
  // (ShardLayout::expert_degree), not dp_shard; its shard fields are of that group.
  bool routed_expert = false;
  // Parameter.tp_partial_grad: its gradient is summed over tp once per step.
  bool tp_partial_grad = false;

  int64_t owned_numel() const { return owned_end - owned_begin; }
};

// The parameters of a unit that one all-gather collects: over dp_shard, or for routed experts
// over "ep_dp".
struct UnitGather {
  bool routed_experts = false;
  std::vector<int> params;   // indices into ShardLayout::params, plan order
  int64_t shard_numel = 0;   // Σ shard_numel: one rank's block in the all-gather
};

// Parameters gathered together (stage 3) and published together after the update (stages 1–3).
struct UnitLayout {
  std::string name;
  std::vector<int> params;   // indices into ShardLayout::params, plan order
  int64_t numel = 0;         // Σ numel
  // The unit's all-gathers: one, or in a mixture-of-experts block two (its other parameters
  // first, then its routed experts), in that order on every rank.
  std::vector<UnitGather> gathers;
};

// Gradients reduced by one collective.
struct BucketLayout {
  int index = 0;             // launch order (Bucket.index)
  std::vector<int> params;   // indices into ShardLayout::params, in gradient-ready order
  int64_t numel = 0;         // Σ numel: the all-reduce buffer
  int64_t shard_numel = 0;   // Σ shard_numel: one rank's block in the reduce-scatter
  bool routed_experts = false;  // Bucket.routed_experts: reduced over "ep_dp", not dp
};

// The whole layout for one rank.
struct ShardLayout {
  int64_t stage = 0;         // ZeRO stage 0–3
  int64_t degree = 1;        // dp_shard size
  int64_t shard_rank = 0;    // this rank's index in its dp_shard group
  // Routed experts: the "ep_dp" size (Sharding.expert_shard_degree, 1 when absent) and this
  // rank's index in its ep_dp group.
  int64_t expert_degree = 1;
  int64_t expert_shard_rank = 0;
  int64_t prefetch_elements = 0;  // stage 3 gather-ahead budget (Sharding.prefetch_bucket_elements)
  std::vector<ParamSlot> params;    // module parameter order
  std::vector<UnitLayout> units;    // forward order
  std::vector<BucketLayout> buckets;  // launch order

  // The sharding degree of a parameter, bucket or gather: expert_degree for routed experts,
  // else degree.
  int64_t DegreeOf(bool routed_experts) const { return routed_experts ? expert_degree : degree; }

  // Matches `sharding` (units and buckets of the pipeline stage `stage_index`) to the module's
  // parameters, given as (name, numel) in named_parameters() order. shard_rank ∈ [0, degree);
  // expert_shard_rank ∈ [0, expert_shard_degree), this rank's index in "ep_dp".
  // Errors: InvalidArgument naming the parameter when a plan parameter is missing from the
  // module, a module parameter is in no unit or no bucket, the element counts differ, or a
  // bucket mixes routed experts with other parameters.
  static absl::StatusOr<ShardLayout> FromPlan(
      const ir::Sharding& sharding, int stage_index,
      const std::vector<std::pair<std::string, int64_t>>& module_params, int64_t shard_rank,
      int64_t expert_shard_rank = 0);

  // Stage 0 for a module without a plan (tests, tools): one unit, buckets filled in reverse
  // parameter order and closed once they reach bucket_elements (≥ 1), as PyTorch DDP does.
  static ShardLayout Replicated(const std::vector<std::pair<std::string, int64_t>>& module_params,
                                int64_t bucket_elements);
};

}  // namespace accel::exec

#endif  // ACCEL_EXECUTOR_TRAIN_SHARD_LAYOUT_H_
