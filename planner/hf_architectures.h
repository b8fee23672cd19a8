// Exact parameter counts and Accelerate's memory table for Hugging Face model families accel
// counts but does not plan: encoder-only (bert, roberta, vit), encoder-decoder (t5, whisper),
// vision-text (clip) and the decoders phi and phi-2's legacy phi-msft format; and, as an
// independent check of the planner's counts, the planned decoders qwen3, gemma2, gemma3_text,
// phi3 and olmo2 (tests/planner/hf_architectures_test.cc). Each config.json is
// turned into the torch module tree transformers builds from it (planner/module_tree.h), with
// the modules, shapes, buffers and _no_split_modules of transformers' modeling_<family>.py.
#ifndef ACCEL_PLANNER_HF_ARCHITECTURES_H_
#define ACCEL_PLANNER_HF_ARCHITECTURES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "planner/hf_config_keys.h"
#include "planner/module_tree.h"

namespace accel::planner {

// The model types CountHuggingFaceModel understands, in the order messages list them.
inline constexpr const char* kCountedModelTypes[] = {
    "bert",  "roberta", "vit",         "clip", "t5",    "whisper", "qwen3",
    "gemma2", "gemma3_text", "phi3", "olmo2", "phi", "phi-msft"};

// What a config.json describes, counted.
struct HfModelCount {
  std::string model_type;
  // The model `parameters` counts and its class: the causal LM for decoder families (lm_head
  // once when tied), T5ForConditionalGeneration for t5 (with the v1.1 untied lm_head), the
  // base model for the rest (BertModel with pooler, CLIPModel, ViTModel, WhisperModel, whose
  // output projection is tied).
  std::string counted_class;
  int64_t parameters = 0;
  // The counted model's top-level parts and their parameters, in module order.
  std::vector<std::pair<std::string, int64_t>> parts;
  // The model Accelerate builds from the config (accelerate/commands/estimate.py,
  // create_empty_model): AutoModel, or the first AutoModelFor* class the config's auto_map
  // names (phi3's and phi-2's configs name AutoModelForCausalLM, so their lm_head is counted).
  std::string accelerate_class;
  ModuleNode accelerate_model;
  std::vector<std::string> no_split_modules;  // that class's _no_split_modules
  // Anything the Accelerate figures leave out, said once ("" when nothing).
  std::string note;
};

// The result: `count` when every key needed was read, else the issues (all of them).
struct HfCountResult {
  std::optional<HfModelCount> count;
  std::vector<HfConfigIssue> issues;
};

// Counts the model of a config.json whose top level `config` (parsed from `text`, which
// locates issues) has a model_type in kCountedModelTypes. Issues: E0202 for a missing or
// mistyped key, E0203 for a model_type outside kCountedModelTypes (message "has model_type
// 'X'; accel counts ...") and for values that change the architecture in ways not modeled
// (bert/roberta position_embedding_type other than "absolute", is_decoder or
// add_cross_attention; t5 feed_forward_proj other than [gated-]relu/gelu/silu; an auto_map
// naming an AutoModelFor* class other than AutoModelForCausalLM), each naming its key.
HfCountResult CountHuggingFaceModel(const nlohmann::json& config, std::string_view text);

// ---- Per family builders (hf_encoder_families.cc, hf_decoder_families.cc); each reads its
// keys through `keys` and returns the counted model's parts as module trees. ----

// A model as its builder leaves it: the base model (AutoModel's tree), the head the counted
// class adds (empty name: none) and the base model's class and _no_split_modules.
struct HfFamilyModel {
  ModuleNode base;
  std::optional<ModuleNode> head;  // e.g. an untied lm_head
  std::string counted_class;       // e.g. "Qwen3ForCausalLM"; the base class when no head
  std::vector<std::string> no_split_modules;
  std::string note;
  // The base model's attribute name in the counted class ("model"; "transformer" for phi-msft).
  std::string base_attribute = "model";
};

HfFamilyModel BuildBertFamily(HfConfigKeys& keys, bool roberta);
HfFamilyModel BuildVit(HfConfigKeys& keys);
HfFamilyModel BuildClip(HfConfigKeys& keys);
HfFamilyModel BuildT5(HfConfigKeys& keys);
HfFamilyModel BuildWhisper(HfConfigKeys& keys);
// qwen3, gemma2, gemma3_text, phi3, olmo2, phi, phi-msft.
HfFamilyModel BuildDecoderFamily(HfConfigKeys& keys, const std::string& model_type);

}  // namespace accel::planner

#endif  // ACCEL_PLANNER_HF_ARCHITECTURES_H_
