// A transformers model as a tree of torch modules holding parameters and buffers, and the sizes
// Accelerate's `accelerate estimate-memory` computes over such a tree. Used for the Hugging Face
// families accel counts but does not plan (planner/hf_architectures.h).
#ifndef ACCEL_PLANNER_MODULE_TREE_H_
#define ACCEL_PLANNER_MODULE_TREE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace accel::planner {

// One tensor a module owns directly (torch's named_parameters / named_buffers with
// recurse=False). A weight tied to another module's is not listed again: torch's
// named_parameters yields a shared tensor once, under the first name it meets.
struct ModuleTensor {
  std::string name;           // attribute name, e.g. "weight", "position_ids"
  int64_t numel = 0;          // elements
  int64_t element_bytes = 4;  // bytes per element as built in float32 (int64 buffers: 8)
  bool buffer = false;        // a registered buffer (persistent or not), not a parameter
};

// One torch module: its attribute name in the parent ("encoder", "0", "query"), its
// transformers class name (matched against the model's _no_split_modules), its own tensors
// and its child modules in registration order.
struct ModuleNode {
  std::string name;
  std::string class_name;
  std::vector<ModuleTensor> tensors;
  std::vector<ModuleNode> children;
};

// Parameters (elements) of `node` and everything below it; buffers are not parameters.
int64_t ModuleParameterCount(const ModuleNode& node);

// The most parameters one module owns directly (its own tensors, not its children's), as
// DeepSpeed's largest_layer_params sums m.parameters(recurse=False) per module
// (deepspeed/runtime/zero/stage3.py, estimate_zero3_model_states_mem_needs_all_live).
int64_t LargestModuleOwnParameters(const ModuleNode& node);

// Bytes of every parameter and buffer of `node` and below, as built in float32.
int64_t ModuleBytes(const ModuleNode& node);

// What Accelerate reports for a model built on the meta device in float32
// (accelerate/utils/modeling.py: calculate_maximum_sizes, compute_module_sizes,
// get_max_layer_size). total_bytes: numel × dtype size over every parameter and buffer
// (non-persistent buffers included). largest_layer_bytes: the largest "layer", where the
// candidates are the root's own parameters and buffers one by one and its children, and a
// candidate module with children is replaced by its children unless its class is in
// `no_split_modules` (the model's _no_split_modules). A module's own tensors count only
// when the module itself is a layer. largest_layer_names: the dotted paths of every layer of
// that size, in walk order.
struct AccelerateSizes {
  int64_t total_bytes = 0;
  int64_t largest_layer_bytes = 0;
  std::vector<std::string> largest_layer_names;
};
AccelerateSizes AccelerateModelSizes(const ModuleNode& root,
                                     const std::vector<std::string>& no_split_modules);

// ---- Builders for the torch modules transformers models are made of (shapes of
// torch.nn and of transformers' norm classes) ----

// nn.Linear(in, out, bias): weight [out, in], bias [out].
ModuleNode LinearModule(std::string name, int64_t in, int64_t out, bool bias);
// nn.Embedding(count, dim): weight [count, dim].
ModuleNode EmbeddingModule(std::string name, int64_t count, int64_t dim);
// nn.LayerNorm(dim): weight and bias [dim] (bias=false: weight only, as T5LayerNorm and the
// RMSNorm classes).
ModuleNode NormModule(std::string name, int64_t dim, bool bias, std::string class_name);
// nn.Conv1d / nn.Conv2d: weight [out, in, kernel elements], bias [out] when `bias`.
ModuleNode ConvModule(std::string name, int64_t in, int64_t out, int64_t kernel_elements,
                      bool bias, std::string class_name);
// A module with only children (ModuleList, a container class).
ModuleNode ContainerModule(std::string name, std::string class_name,
                           std::vector<ModuleNode> children);
// A ModuleList named `name` holding `count` copies of `layer`, renamed "0", "1", ...
ModuleNode RepeatedModule(std::string name, const ModuleNode& layer, int64_t count);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_MODULE_TREE_H_
