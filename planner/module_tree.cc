#include "planner/module_tree.h"

#include <algorithm>
#include <utility>

namespace accel::planner {
namespace {

bool IsNoSplit(const ModuleNode& node, const std::vector<std::string>& no_split) {
  return std::find(no_split.begin(), no_split.end(), node.class_name) != no_split.end();
}

// One candidate of get_max_layer_size: a module, or a single tensor of the root.
struct LayerCandidate {
  std::string path;
  const ModuleNode* module = nullptr;  // null: a root tensor of `tensor_bytes`
  int64_t tensor_bytes = 0;
};

void ConsiderLayer(AccelerateSizes& sizes, const std::string& path, int64_t bytes) {
  if (bytes > sizes.largest_layer_bytes) {
    sizes.largest_layer_bytes = bytes;
    sizes.largest_layer_names = {path};
  } else if (bytes == sizes.largest_layer_bytes) {
    sizes.largest_layer_names.push_back(path);
  }
}

}  // namespace

int64_t ModuleParameterCount(const ModuleNode& node) {
  int64_t count = 0;
  for (const ModuleTensor& t : node.tensors) count += t.buffer ? 0 : t.numel;
  for (const ModuleNode& child : node.children) count += ModuleParameterCount(child);
  return count;
}

int64_t LargestModuleOwnParameters(const ModuleNode& node) {
  int64_t own = 0;
  for (const ModuleTensor& t : node.tensors) own += t.buffer ? 0 : t.numel;
  for (const ModuleNode& child : node.children) own = std::max(own, LargestModuleOwnParameters(child));
  return own;
}

int64_t ModuleBytes(const ModuleNode& node) {
  int64_t bytes = 0;
  for (const ModuleTensor& t : node.tensors) bytes += t.numel * t.element_bytes;
  for (const ModuleNode& child : node.children) bytes += ModuleBytes(child);
  return bytes;
}

AccelerateSizes AccelerateModelSizes(const ModuleNode& root,
                                     const std::vector<std::string>& no_split_modules) {
  AccelerateSizes sizes;
  sizes.total_bytes = ModuleBytes(root);
  // calculate_maximum_sizes: the root's parameters, then its children, then its buffers.
  std::vector<LayerCandidate> pending;
  for (const ModuleTensor& t : root.tensors) {
    if (!t.buffer) pending.push_back({t.name, nullptr, t.numel * t.element_bytes});
  }
  for (const ModuleNode& child : root.children) pending.push_back({child.name, &child, 0});
  for (const ModuleTensor& t : root.tensors) {
    if (t.buffer) pending.push_back({t.name, nullptr, t.numel * t.element_bytes});
  }
  // get_max_layer_size: depth first, a split module's children taking its place in order.
  while (!pending.empty()) {
    LayerCandidate c = std::move(pending.front());
    pending.erase(pending.begin());
    if (c.module == nullptr) {
      ConsiderLayer(sizes, c.path, c.tensor_bytes);
    } else if (c.module->children.empty() || IsNoSplit(*c.module, no_split_modules)) {
      ConsiderLayer(sizes, c.path, ModuleBytes(*c.module));
    } else {
      std::vector<LayerCandidate> children;
      for (const ModuleNode& child : c.module->children) {
        children.push_back({c.path + "." + child.name, &child, 0});
      }
      pending.insert(pending.begin(), children.begin(), children.end());
    }
  }
  return sizes;
}

ModuleNode LinearModule(std::string name, int64_t in, int64_t out, bool bias) {
  ModuleNode node{std::move(name), "Linear", {{"weight", in * out}}, {}};
  if (bias) node.tensors.push_back({"bias", out});
  return node;
}

ModuleNode EmbeddingModule(std::string name, int64_t count, int64_t dim) {
  return {std::move(name), "Embedding", {{"weight", count * dim}}, {}};
}

ModuleNode NormModule(std::string name, int64_t dim, bool bias, std::string class_name) {
  ModuleNode node{std::move(name), std::move(class_name), {{"weight", dim}}, {}};
  if (bias) node.tensors.push_back({"bias", dim});
  return node;
}

ModuleNode ConvModule(std::string name, int64_t in, int64_t out, int64_t kernel_elements,
                      bool bias, std::string class_name) {
  ModuleNode node{std::move(name), std::move(class_name), {{"weight", out * in * kernel_elements}}, {}};
  if (bias) node.tensors.push_back({"bias", out});
  return node;
}

ModuleNode ContainerModule(std::string name, std::string class_name,
                           std::vector<ModuleNode> children) {
  return {std::move(name), std::move(class_name), {}, std::move(children)};
}

ModuleNode RepeatedModule(std::string name, const ModuleNode& layer, int64_t count) {
  ModuleNode list{std::move(name), "ModuleList", {}, {}};
  list.children.reserve(static_cast<size_t>(std::max<int64_t>(count, 0)));
  for (int64_t i = 0; i < count; ++i) {
    list.children.push_back(layer);
    list.children.back().name = std::to_string(i);
  }
  return list;
}

}  // namespace accel::planner
