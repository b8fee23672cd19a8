// Hugging Face names of a mixture-of-experts model's tensors against accel's: accel holds each
// MoE block's routed experts grouped, mlp.experts.{gate,up,down}_proj [E, fe, h] / [E, h, fe]
// (torchtitan's GroupedExperts), where Hugging Face stores one tensor per expert. Torch-free.
//   Qwen2-MoE / Qwen3-MoE: P.mlp.gate.weight (router), P.mlp.experts.N.{gate,up,down}_proj.weight
//     (transformers' Qwen2MoeSparseMoeBlock, Qwen3MoeSparseMoeBlock);
//   Mixtral: P.block_sparse_moe.gate.weight, P.block_sparse_moe.experts.N.{w1,w3,w2}.weight, w1
//     the gate, w3 the up and w2 the down projection (transformers' MixtralSparseMoeBlock).
// Shared experts (Qwen2-MoE) keep accel's names, which are Hugging Face's.
#ifndef ACCEL_CHECKPOINT_EXPERT_NAMES_H_
#define ACCEL_CHECKPOINT_EXPERT_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>

namespace accel::exec {

enum class ExpertNaming {
  kQwen,     // mlp.gate, mlp.experts.N.gate_proj (also what an inline model.moe exports as,
             // unless it has neither shared experts nor dense blocks: then kMixtral)
  kMixtral,  // block_sparse_moe.gate, block_sparse_moe.experts.N.w1
};

// The naming of a config.json model_type: kMixtral for "mixtral", else kQwen.
ExpertNaming ExpertNamingOf(const std::string& model_type);

// A grouped routed-expert tensor's name, "P.mlp.experts.X" with P the block ("model.layers.3")
// and X "gate_proj", "up_proj" or "down_proj".
struct GroupedExpertName {
  std::string block;
  std::string projection;
};

// The parts of `name` when it names a grouped routed-expert tensor, else nullopt.
std::optional<GroupedExpertName> ParseGroupedExpert(const std::string& name);

// Hugging Face's name of expert `expert`'s slice (dim 0) of the grouped tensor `grouped`.
std::string PerExpertName(const GroupedExpertName& grouped, int64_t expert, ExpertNaming naming);

// Hugging Face's name of any other accel parameter: Mixtral's router "P.mlp.gate.weight" becomes
// "P.block_sparse_moe.gate.weight"; every other name is the same.
std::string HuggingFaceName(const std::string& name, ExpertNaming naming);

}  // namespace accel::exec

#endif  // ACCEL_CHECKPOINT_EXPERT_NAMES_H_
