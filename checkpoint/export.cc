#include "checkpoint/export.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "checkpoint/checkpoint_store.h"
#include "checkpoint/expert_names.h"
#include "common/durable_file.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/sharded_tensors.h"
#include "checkpoint/tp_layout.h"

namespace accel::exec {
namespace fs = std::filesystem;
namespace {

constexpr char kConfigFile[] = "config.json";
constexpr char kModelFile[] = "model.safetensors";
constexpr char kOptimizerPrefix[] = "optimizer.";

// The checkpoint's tensor_parallel.json, or degree 1 when it has none (no tensor parallelism).
absl::StatusOr<TpLayoutRecord> TpLayoutOf(const std::string& checkpoint_dir) {
  ACCEL_ASSIGN_OR_RETURN(std::vector<std::string> files, CheckpointStore::ManifestFiles(checkpoint_dir));
  if (std::find(files.begin(), files.end(), kTensorParallelFile) == files.end()) return TpLayoutRecord{};
  ACCEL_ASSIGN_OR_RETURN(std::string text, CheckpointStore::ReadFile(checkpoint_dir, kTensorParallelFile));
  return ParseTpLayoutJson(text, absl::StrCat(checkpoint_dir, "/", kTensorParallelFile));
}

// The model tensors of the checkpoint, whole, sorted by name; tp-major tensors merged back.
absl::StatusOr<SafetensorsFile> ConsolidateModel(const std::string& checkpoint_dir) {
  ACCEL_ASSIGN_OR_RETURN(TpLayoutRecord tp, TpLayoutOf(checkpoint_dir));
  auto is_model = [](const std::string& name) { return !absl::StartsWith(name, kOptimizerPrefix); };
  ACCEL_ASSIGN_OR_RETURN(ShardedTensorReader reader, ShardedTensorReader::Open(checkpoint_dir, is_model));
  SafetensorsFile model;
  model.metadata["format"] = "pt";
  for (const GlobalTensorInfo& info : reader.Tensors()) {
    ACCEL_ASSIGN_OR_RETURN(std::string data, reader.ReadWhole(info.name));
    SafetensorsTensor tensor{info.name, info.dtype, info.shape, std::move(data)};
    if (auto it = tp.parameters.find(info.name); it != tp.parameters.end()) {
      ACCEL_ASSIGN_OR_RETURN(tensor, MergeTpMajor(tensor, tp.degree / it->second.replicas, it->second));
    }
    model.tensors.push_back(std::move(tensor));
  }
  return model;
}

// A pipeline whose last stage keeps a copy of a tied word embedding saves it as lm_head.weight
// (ir::Parameter.tied_to); Hugging Face ties the head itself, so a tied model's export leaves
// the copy out. The copy is bitwise the embedding (both take the same summed gradient), which
// is checked rather than assumed.
absl::Status DropTiedCopy(const std::string& config_json, SafetensorsFile& model) {
  const nlohmann::json config = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object() || !config.value("tie_word_embeddings", false)) return absl::OkStatus();
  auto find = [&model](const std::string& name) {
    return std::find_if(model.tensors.begin(), model.tensors.end(),
                        [&name](const SafetensorsTensor& t) { return t.name == name; });
  };
  auto copy = find("lm_head.weight");
  if (copy == model.tensors.end()) return absl::OkStatus();
  auto original = find("transformer.wte.weight");
  if (original == model.tensors.end()) original = find("model.embed_tokens.weight");
  if (original == model.tensors.end() || original->data != copy->data) {
    return absl::DataLossError("the checkpoint's lm_head.weight of a tied model differs from its word embedding");
  }
  model.tensors.erase(copy);
  return absl::OkStatus();
}

// Hugging Face stores one tensor per routed expert (checkpoint/expert_names.h): each grouped
// tensor [E, ...] becomes E tensors [...] named as the config's model_type names them, and a
// Mixtral router is renamed. Tensors stay sorted by name.
absl::Status SplitGroupedExperts(const std::string& config_json, SafetensorsFile& model) {
  const nlohmann::json config = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  const ExpertNaming naming =
      ExpertNamingOf(config.is_object() ? config.value("model_type", std::string()) : std::string());
  std::vector<SafetensorsTensor> out;
  for (SafetensorsTensor& t : model.tensors) {
    const std::optional<GroupedExpertName> grouped = ParseGroupedExpert(t.name);
    if (!grouped) {
      t.name = HuggingFaceName(t.name, naming);
      out.push_back(std::move(t));
      continue;
    }
    if (t.shape.size() < 2 || t.shape[0] <= 0 || t.data.size() % static_cast<size_t>(t.shape[0]) != 0) {
      return absl::DataLossError(absl::StrCat("the checkpoint's routed-expert tensor ", t.name, " has shape ",
                                              ShapeText(t.shape)));
    }
    const size_t bytes = t.data.size() / static_cast<size_t>(t.shape[0]);
    const std::vector<int64_t> shape(t.shape.begin() + 1, t.shape.end());
    for (int64_t e = 0; e < t.shape[0]; ++e) {
      out.push_back({PerExpertName(*grouped, e, naming), t.dtype, shape, t.data.substr(e * bytes, bytes)});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  model.tensors = std::move(out);
  return absl::OkStatus();
}

}  // namespace

absl::Status ExportCheckpoint(const std::string& checkpoint_dir, const std::string& out_dir, ExportSummary* summary) {
  absl::StatusOr<std::string> config = CheckpointStore::ReadFile(checkpoint_dir, kConfigFile);
  if (config.status().code() == absl::StatusCode::kNotFound) {
    return absl::NotFoundError(absl::StrCat(checkpoint_dir, " has no config.json"));
  }
  if (!config.ok()) return config.status();
  std::optional<SafetensorsFile> model;
  ACCEL_ASSIGN_OR_RETURN(model, ConsolidateModel(checkpoint_dir));
  ACCEL_RETURN_IF_ERROR(DropTiedCopy(*config, *model));
  ACCEL_RETURN_IF_ERROR(SplitGroupedExperts(*config, *model));
  const int64_t num_tensors = static_cast<int64_t>(model->tensors.size());
  ACCEL_ASSIGN_OR_RETURN(const std::string bytes, SerializeSafetensors(*model));
  model.reset();  // the serialized copy is all that is needed from here on
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", out_dir, ": ", ec.message()));
  ACCEL_RETURN_IF_ERROR(WriteFileAtomically(out_dir, kModelFile, bytes));
  ACCEL_RETURN_IF_ERROR(WriteFileAtomically(out_dir, kConfigFile, *config));
  if (summary != nullptr) {
    *summary = {num_tensors, static_cast<int64_t>(bytes.size()), (fs::path(out_dir) / kModelFile).string()};
  }
  return absl::OkStatus();
}

}  // namespace accel::exec
