#include "importers/importer.h"

#include <algorithm>
#include <filesystem>

#include "common/diag_codes.h"
#include "importers/accelerate_importer.h"
#include "importers/deepspeed_importer.h"
#include "importers/import_context.h"
#include "importers/located_json.h"
#include "importers/located_toml.h"
#include "importers/megatron_importer.h"
#include "importers/spec_builder.h"
#include "importers/torchtitan_importer.h"
#include "spec/file_reader.h"
#include "spec/model_config.h"
#include "spec/text_checks.h"
#include "spec/yaml_tree.h"

namespace accel::importers {
namespace {

constexpr size_t kHeaderWidth = 98;

// The file name without directories and extension, as a job name (the schema's pattern).
std::string JobName(const std::string& file) {
  std::string stem = std::filesystem::path(file).stem().string();
  std::string name;
  for (char c : stem) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    name += ok ? c : '-';
  }
  while (!name.empty() && !std::isalnum(static_cast<unsigned char>(name[0]))) name.erase(0, 1);
  if (name.size() > 100) name.resize(100);
  return name.empty() ? "imported" : name;
}

// "Label: a, b, c" wrapped into comment lines of at most kHeaderWidth characters.
void HeaderList(SpecBuilder& spec, const std::string& label, const std::vector<std::string>& keys) {
  if (keys.empty()) return;
  std::string line = label;
  for (size_t i = 0; i < keys.size(); ++i) {
    std::string item = keys[i] + (i + 1 < keys.size() ? "," : "");
    if (line.size() + 1 + item.size() > kHeaderWidth) {
      spec.Note("", line);
      line = "  " + item;
    } else {
      line += " " + item;
    }
  }
  spec.Note("", line);
}

std::unique_ptr<spec::YamlDocument> Parse(SourceFormat format, std::string_view text,
                                          const std::string& file, DiagnosticSink& sink) {
  switch (format) {
    case SourceFormat::kDeepSpeed: return ParseLocatedJson(text, file, sink);
    case SourceFormat::kTorchtitan:
      return IsJsonText(text) ? ParseLocatedJson(text, file, sink) : ParseLocatedToml(text, file, sink);
    case SourceFormat::kMegatron: return ParseMegatronArgs(text, file, sink);
    case SourceFormat::kAccelerate: break;
  }
  bool tabs = false;
  for (SourceLocation at : spec::FindTabIndentation(text)) {
    sink.Error(codes::kTabIndent, file, at, "", "tab character in indentation (YAML allows spaces only)");
    tabs = true;
  }
  if (tabs) return nullptr;
  return spec::ParseYaml(text, file, sink);
}

// model.config: --model, else a config.json the source config leads to (`found`), else a
// placeholder; --model over a found one leaves a note saying so. Returns the model's
// max_seq_len (0 when unknown).
int64_t FinishModelConfig(SpecBuilder& spec, const ImportOptions& options,
                          const std::optional<FoundModelConfig>& found) {
  std::string config = options.model_config;
  if (!config.empty()) {
    spec.Set("model.config", YamlString(RelativeToSpec(config, options.output_path)), "--model");
    if (spec.Has("model.arch")) {
      // The source described the model itself (Megatron-LM's --num-layers, ...).
      spec.EraseSection("model", "model.config");
      spec.Note("model", "the source's model arguments not used: --model names the model");
    }
    if (found) {
      spec.Note("model", found->source + " (" + RelativeToSpec(found->path, options.output_path) +
                             ") not used: --model names the model");
    }
  } else if (found) {
    config = found->path;
    spec.Set("model.config", YamlString(RelativeToSpec(config, options.output_path)), found->source);
  } else if (spec.Has("model.arch")) {
    // The source gave the model's shape (Megatron-LM's --num-layers, ...) but maybe not the
    // vocabulary, which its tokenizer decides.
    if (!spec.Has("model.vocab_size")) {
      spec.Set("model.vocab_size", "32000", "importer assumption: the source leaves it to its tokenizer; set it");
    }
    return 0;
  } else {
    spec.Set("model.config", "config.json", "placeholder: no --model given");
    return 0;
  }
  spec::ModelConfigResult model = spec::ReadModelConfig(config);
  return model.config ? model.config->model.max_seq_len : 0;
}

// The fields accel requires that the source did not give, and the model and data paths.
void FinishSpec(SpecBuilder& spec, SourceFormat format, const std::string& file,
                const ImportOptions& options, const std::optional<FoundModelConfig>& found) {
  const std::string tool(ToolName(format));
  spec.Set("version", "1", "");
  spec.Set("name", YamlString(JobName(file)), "the source file's name");
  const int64_t max_seq_len = FinishModelConfig(spec, options, found);
  if (options.data_path.empty()) {
    spec.Set("data.train.path", "train.txt", "placeholder: no --data given");
  } else {
    std::string data = RelativeToSpec(options.data_path, options.output_path);
    spec.Set("data.train.path", YamlString(data), "--data");
    if (data.size() > 4 && data.compare(data.size() - 4, 4, ".bin") == 0) {
      spec.Set("data.train.format", "tokens", "--data names a .bin token file");
      // Tokens need no tokenizer, and the loader refuses one with them.
      if (spec.Has("data.train.tokenizer")) {
        spec.Note("data", "tokenizer " + spec.Get("data.train.tokenizer") +
                              " omitted: --data names a .bin token file, already tokenized");
        spec.Erase("data.train.tokenizer");
      }
    }
  }
  const std::string why = "importer default: " + tool + " configs do not give it";
  if (!spec.Has("data.seq_len")) {
    int64_t seq = max_seq_len > 0 ? std::min<int64_t>(max_seq_len, 2048) : 1024;
    spec.Set("data.seq_len", YamlInt(seq), why + (max_seq_len > 0 ? " (min(model max_seq_len, 2048))" : ""));
  }
  if (!spec.Has("data.micro_batch_size")) spec.Set("data.micro_batch_size", "1", why);
  if (!spec.Has("training.steps")) spec.Set("training.steps", "1000", why);
  if (!spec.Has("cluster.devices_per_node")) {
    spec.Set("cluster.devices_per_node", "1", why + " (the launcher does): set the real count");
  }
  if (!spec.Has("cluster.device_memory")) {
    const bool cpu = spec.Get("cluster.device") == "cpu";
    spec.Set("cluster.device_memory", cpu ? "16GiB" : "80GiB",
             std::string("importer assumption (") + (cpu ? "host memory per rank" : "an 80 GB GPU") +
                 "): set device_model or device_memory");
  }
}

}  // namespace

ImportResult ImportConfigText(std::string_view text, const std::string& file,
                              const ImportOptions& options, DiagnosticSink& sink,
                              SourceManager& sources) {
  ImportResult result;
  result.format = options.format.value_or(DetectSourceFormat(file, text));
  if (!spec::CheckSpecText(text, file, sink)) return result;
  sources.Add(file, std::string(text));
  std::unique_ptr<spec::YamlDocument> document = Parse(result.format, text, file, sink);
  if (document == nullptr || sink.HasErrors()) return result;
  SpecBuilder spec;
  ImportContext context(file, std::string(ToolName(result.format)), sink, spec);
  context.SetPaths(options.launch_dir, options.output_path);
  switch (result.format) {
    case SourceFormat::kAccelerate: ImportAccelerate(*document->root, context); break;
    case SourceFormat::kDeepSpeed: ImportDeepSpeed(*document->root, context); break;
    case SourceFormat::kTorchtitan: ImportTorchtitan(*document->root, context); break;
    case SourceFormat::kMegatron: ImportMegatron(*document->root, context); break;
  }
  if (sink.HasErrors()) return result;
  const std::string tool(ToolName(result.format));
  spec.Note("", "Imported by `accel import` from " + file + " (" + tool + " config).");
  spec.Note("", "Each comment names the source key a value came from.");
  HeaderList(spec, "Left out at " + tool + "'s defaults:", context.defaulted());
  HeaderList(spec, "Not imported (see the warnings):", context.reported());
  FinishSpec(spec, result.format, file, options, context.found_config());
  result.spec_yaml = spec.Render();
  return result;
}

ImportResult ImportConfigFile(const std::string& path, const ImportOptions& options,
                              DiagnosticSink& sink, SourceManager& sources) {
  absl::StatusOr<std::string> text = spec::ReadFileLimited(path, spec::kMaxSpecFileBytes);
  if (!text.ok()) {
    bool too_large = text.status().code() == absl::StatusCode::kOutOfRange;
    sink.Error(too_large ? codes::kFileTooLarge : codes::kFileUnreadable, path, {}, "",
               too_large ? "file is larger than 1 MiB (" + std::string(text.status().message()) +
                               " bytes); it is not a training config"
                         : "cannot read file: " + std::string(text.status().message()));
    ImportResult result;
    result.format = options.format.value_or(DetectSourceFormat(path, ""));
    return result;
  }
  return ImportConfigText(*text, path, options, sink, sources);
}

}  // namespace accel::importers
