#ifndef ACCEL_IMPORTERS_IMPORTER_H_
#define ACCEL_IMPORTERS_IMPORTER_H_

#include <optional>
#include <string>
#include <string_view>

#include "common/diagnostics.h"
#include "importers/source_format.h"

// `accel import`: turns another tool's training config into an accel job spec.
namespace accel::importers {

struct ImportOptions {
  // The Hugging Face config.json the spec's model.config names. "" takes the one the source
  // config leads to (torchtitan: model.hf_assets_path/config.json, when that file exists) or
  // leaves a placeholder; given, it wins over that one (a note in the spec says so). Its
  // max_seq_len also bounds the default data.seq_len.
  std::string model_config;
  // The training data path for data.train.path ("" leaves a placeholder); *.bin is read as
  // tokens (uint16), anything else as text.
  std::string data_path;
  // Where the spec will be written ("" = standard output): model.config and data.train.path are
  // written relative to its directory, as the loader resolves them.
  std::string output_path;
  // The directory the source tool runs from ("" = the current directory): paths inside the
  // source config (torchtitan's model.hf_assets_path and tokenizer_path, which torchtitan opens
  // relative to its working directory) resolve from it, and are written relative to the spec.
  std::string launch_dir;
  // Forces the source format; nullopt detects it (DetectSourceFormat).
  std::optional<SourceFormat> format;
};

// The outcome: the spec's YAML text when the import succeeded (warnings allowed), nullopt when
// an error was reported.
struct ImportResult {
  std::optional<std::string> spec_yaml;
  SourceFormat format = SourceFormat::kAccelerate;
};

// Imports `text` (the contents of `file`, which names it in diagnostics). Every problem goes to
// `sink`, located in `file`: E0003 binary or non-UTF-8 text and E0002 over 1 MiB (as for job
// specs), syntax errors (E0004 YAML, E0701 JSON/TOML), E0702 wrong types, E0703 values accel
// cannot express, W0701 keys not imported (see ImportContext::Walk). The source text is
// registered in `sources`.
// The spec has a header comment naming the source and listing the keys left out, and a comment
// on every value naming the source key(s) it came from, or "(... default)" / "importer default"
// for values the source does not give: accel requires data.seq_len, data.micro_batch_size,
// training.steps and cluster.devices_per_node, and plans memory only with a device_memory.
ImportResult ImportConfigText(std::string_view text, const std::string& file,
                              const ImportOptions& options, DiagnosticSink& sink,
                              SourceManager& sources);

// Reads `path` (at most 1 MiB; E0001/E0002 when it cannot be read) and imports it.
ImportResult ImportConfigFile(const std::string& path, const ImportOptions& options,
                              DiagnosticSink& sink, SourceManager& sources);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_IMPORTER_H_
