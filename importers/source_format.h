#ifndef ACCEL_IMPORTERS_SOURCE_FORMAT_H_
#define ACCEL_IMPORTERS_SOURCE_FORMAT_H_

#include <optional>
#include <string>
#include <string_view>

// The kinds of configuration file `accel import` reads.
namespace accel::importers {

enum class SourceFormat {
  kAccelerate,  // Hugging Face Accelerate `accelerate config` YAML
  kDeepSpeed,   // DeepSpeed JSON (ds_config.json)
  kTorchtitan,  // torchtitan job TOML (train_configs/*.toml), or the JSON its 2026 Python configs
                // dump (Trainer.Config.to_dict(), --debug.save_config_file)
  kMegatron,    // Megatron-LM arguments: a launch script (bash) or an arguments file
};

// "accelerate", "deepspeed", "torchtitan" or "megatron": the --from spelling.
std::string_view FormatName(SourceFormat format);

// "Accelerate", "DeepSpeed", "torchtitan" or "Megatron-LM": how messages and comments name the tool.
std::string_view ToolName(SourceFormat format);

// The format named by `name` (a FormatName spelling), or nullopt.
std::optional<SourceFormat> ParseFormatName(std::string_view name);

// Guesses the format of `text` read from `path`: by extension first (.json DeepSpeed, or
// torchtitan when IsTorchtitanJson; .toml torchtitan, .yaml/.yml Accelerate, .sh/.bash/.args
// Megatron-LM), then by content (first non-blank, non-comment character `{`: JSON, torchtitan's
// or DeepSpeed's as for .json; a line starting with `[name]`: TOML; a `#!` line naming a shell or
// a first line starting with `--name`: Megatron-LM; else YAML). Never fails: YAML is the fallback.
SourceFormat DetectSourceFormat(std::string_view path, std::string_view text);

// True when `text` starts (after blanks and # comments) with `{`: the JSON forms.
bool IsJsonText(std::string_view text);

// True for a torchtitan Trainer.Config dump: JSON naming a "model_spec" or "parallelism" key,
// which DeepSpeed's config never has.
bool IsTorchtitanJson(std::string_view text);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_SOURCE_FORMAT_H_
