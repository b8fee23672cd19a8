// Typed, name-based access to the parts of an accel.ir.Plan that code would otherwise look up by
// position: mesh axes and process-group sets. Torch-free (planner and executor both use it).
#ifndef ACCEL_IR_PLAN_ACCESS_H_
#define ACCEL_IR_PLAN_ACCESS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/plan.pb.h"

namespace accel::ir {

// The five mesh axes, outermost to innermost (the order of Mesh.axes).
enum class Axis { kPp, kDpReplicate, kDpShard, kCp, kTp };

// The axis' name in the plan: "pp", "dp_replicate", "dp_shard", "cp", "tp".
std::string_view AxisName(Axis axis);

// Size of `axis` in plan.mesh(), found by name; 1 when the mesh lacks it (a partial plan).
int64_t AxisSize(const Plan& plan, Axis axis);

// The process-group set called `name` ("world", "dp", "dp_shard", "tp", ...), or nullptr.
const ProcessGroupSet* FindGroupSet(const Plan& plan, std::string_view name);

// The ranks of the group of set `name` that contains global rank `rank`, ascending; empty when
// the plan has no such set or the rank is in none of its groups.
std::vector<int> GroupOf(const Plan& plan, std::string_view name, int rank);

// Tensor-parallel ranks holding each key/value head (the rule Model.kv_head_replicas follows, for
// the planner that writes it and the executor whose model must match it): tp / kv_heads when tp
// exceeds kv_heads and is a multiple of it, else 1 (whole heads split, or a layout resolve-auto
// refuses with E0404; Megatron-LM: num_query_groups a multiple or divisor of the tensor degree).
int64_t KvHeadReplicas(int64_t kv_heads, int64_t tp);

// The model chunks pipeline stage `stage` holds, in chunk order: PipelineStage.chunks when the
// schedule interleaves (virtual stages), else the one chunk [layer_begin, layer_end) with
// virtual_stage = index. Every consumer that counts or runs a stage's blocks goes through this.
std::vector<ModelChunk> StageChunks(const PipelineStage& stage);

// Blocks the stage holds over all its chunks.
int64_t StageLayerCount(const PipelineStage& stage);

// Blocks of the stage's largest chunk: one chunk activation of a microbatch spans at most these.
int64_t LargestChunkLayers(const PipelineStage& stage);

// The stage's blocks as text, chunk by chunk: "0-3", or "0-1, 4-5" when interleaved; a
// one-block chunk is "7". `dash` joins the ends ("-" in text, "–" in pictures).
std::string StageLayersText(const PipelineStage& stage, std::string_view dash = "-");

// Model chunks per stage: Pipeline.virtual_stages, 1 when unset.
int32_t VirtualStages(const Pipeline& pipeline);

// The virtual stage the planner gives chunk `chunk` (0 ≤ chunk < v) of stage `stage` (0 ≤ stage
// < p) under `schedule` (ModelChunk): ZBV's V shape (Qi et al. 2023 §6; PyTorch's
// generate_stage_to_rank_mapping style "v"): even chunks c·p + stage, odd ones
// c·p + p − 1 − stage; otherwise round robin c·p + stage (Megatron-LM). Plans record the result
// in ModelChunk.virtual_stage, which consumers read; the planner writes it and the verifier
// checks the plan against it.
int32_t ScheduledVirtualStage(PipelineSchedule schedule, int32_t p, int32_t stage, int32_t chunk);

// The inverse: the stage that runs virtual stage `vs` (0 ≤ vs < p·v) under `schedule`.
int32_t ScheduledStageOf(PipelineSchedule schedule, int32_t p, int32_t vs);

// The autocast dtype of matmuls: Precision.compute_dtype, the parameter dtype when unspecified
// (hand-written plans in tests).
Dtype ComputeDtype(const Precision& precision);

// A model's dimensions where the plan may leave them 0 (a plan from a config that omits them, or
// written by hand), with the defaults every consumer applies: the vocabulary rows the embedding
// and head hold (padded_vocab_size, else vocab_size), the key/value heads (num_kv_heads, else
// num_heads: no grouped-query attention) and the MLP width (ffn_hidden_size, else 4 ×
// hidden_size, GPT-2's; Radford et al. 2019).
int64_t VocabRows(const Model& model);
int64_t KvHeads(const Model& model);
int64_t FfnSize(const Model& model);

// The routed experts [begin, end) a rank holds (RankPlacement.expert_begin/expert_end) as text:
// "expert 3", "experts 0–3" (inclusive, en dash), "" when empty.
std::string ExpertRangeText(int64_t begin, int64_t end);

}  // namespace accel::ir

#endif  // ACCEL_IR_PLAN_ACCESS_H_
