#include "planner/hf_architectures.h"

#include "common/diag_codes.h"
#include "spec/model_config.h"

namespace accel::planner {
namespace {

// "has model_type 'X'; accel plans gpt2, ... and counts bert, ..." for a type no one knows.
std::string UnknownModelTypeMessage(const std::string& type) {
  std::string planned, counted;
  for (const char* name : spec::kSupportedModelTypes) planned += (planned.empty() ? "" : ", ") + std::string(name);
  for (const char* name : kCountedModelTypes) {
    // Planned types (qwen3) are counted too; the message names each once, where it goes furthest.
    bool is_planned = false;
    for (const char* p : spec::kSupportedModelTypes) is_planned = is_planned || std::string_view(p) == name;
    if (!is_planned) counted += (counted.empty() ? "" : ", ") + std::string(name);
  }
  return "has model_type '" + type + "'; accel plans " + planned + " and counts " + counted;
}

HfFamilyModel BuildFamily(HfConfigKeys& keys, const std::string& type) {
  if (type == "bert" || type == "roberta") return BuildBertFamily(keys, type == "roberta");
  if (type == "vit") return BuildVit(keys);
  if (type == "clip") return BuildClip(keys);
  if (type == "t5") return BuildT5(keys);
  if (type == "whisper") return BuildWhisper(keys);
  return BuildDecoderFamily(keys, type);
}

// The AutoModelFor* class accelerate's create_empty_model takes from auto_map: the first key
// that starts with "AutoModelFor" ("" when none: it builds AutoModel).
std::string AutoMapModelClass(HfConfigKeys& keys) {
  const nlohmann::json* map = keys.Find("auto_map");
  if (map == nullptr || !map->is_object()) return "";
  for (auto it = map->begin(); it != map->end(); ++it) {
    if (it.key().rfind("AutoModelFor", 0) == 0) return it.key();
  }
  return "";
}

// The counted class's tree: the base model under `base_attribute`, then the head.
ModuleNode WithHead(const HfFamilyModel& family) {
  ModuleNode base = family.base;
  base.name = family.base_attribute;
  ModuleNode root = ContainerModule("", family.counted_class, {base});
  // A tied lm_head is a Linear whose weight is the embedding's: a module owning nothing.
  root.children.push_back(family.head ? *family.head : ModuleNode{"lm_head", "Linear", {}, {}});
  return root;
}

}  // namespace

HfCountResult CountHuggingFaceModel(const nlohmann::json& config, std::string_view text) {
  HfCountResult result;
  HfConfigKeys keys(config, text, {}, result.issues);
  const std::string type = keys.Text("model_type", "");
  bool known = false;
  for (const char* name : kCountedModelTypes) known = known || type == name;
  if (!known) {
    result.issues.push_back({codes::kModelTypeUnsupported,
                             type.empty() ? "has no 'model_type' string, so its architecture is unknown"
                                          : UnknownModelTypeMessage(type),
                             LocateJsonPath(text, {"model_type"})});
    return result;
  }
  HfFamilyModel family = BuildFamily(keys, type);
  const std::string auto_class = AutoMapModelClass(keys);
  const bool causal_lm_head = family.counted_class.find("ForCausalLM") != std::string::npos;
  if (!auto_class.empty() && !(auto_class == "AutoModelForCausalLM" && causal_lm_head)) {
    keys.Refuse("auto_map", "Accelerate would build " + auto_class + ", which accel does not count");
  }
  if (!result.issues.empty()) return result;

  HfModelCount count;
  count.model_type = type;
  count.counted_class = family.counted_class;
  count.parameters = ModuleParameterCount(family.head ? WithHead(family) : family.base);
  for (const ModuleNode& part : family.base.children) {
    count.parts.push_back({part.name, ModuleParameterCount(part)});
  }
  for (const ModuleTensor& t : family.base.tensors) {
    if (!t.buffer) count.parts.push_back({t.name, t.numel});
  }
  if (family.head) count.parts.push_back({family.head->name, ModuleParameterCount(*family.head)});
  count.accelerate_class = auto_class.empty() ? family.base.class_name : family.counted_class;
  count.accelerate_model = auto_class.empty() ? family.base : WithHead(family);
  count.no_split_modules = family.no_split_modules;
  count.note = family.note;
  result.count = std::move(count);
  return result;
}

}  // namespace accel::planner
