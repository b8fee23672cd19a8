#ifndef ACCEL_IMPORTERS_IMPORT_CONTEXT_H_
#define ACCEL_IMPORTERS_IMPORT_CONTEXT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostics.h"
#include "importers/spec_builder.h"
#include "spec/yaml_tree.h"

// What every format importer shares: typed, located reads of the source tree, the walk over a
// mapping's keys with the reporting rule for keys accel has no equivalent for, and the spec
// being built.
namespace accel::importers {

using spec::YamlNode;

// An integer read from the source file with where it came from, for the facts an importer combines
// after the walk (a batch size checked against two others, a degree against the world size): the
// value, the dotted path of its key ("zero_optimization.stage") and the value's position.
struct Sourced {
  int64_t value = 0;
  std::string path;
  SourceLocation at = {};
};

// One key of a source mapping as a handler sees it: the key and value nodes and the dotted path
// of the key in the source file ("zero_optimization.stage").
struct SourceKey {
  const YamlNode& key;
  const YamlNode& value;
  std::string path;
};

// How Walk treats one key of a mapping.
struct KeyRule {
  KeyRule(std::string key_in, std::function<void(const SourceKey&)> map_in,
          std::vector<std::string> defaults_in = {}, std::string hint_in = {})
      : key(std::move(key_in)),
        map(std::move(map_in)),
        defaults(std::move(defaults_in)),
        hint(std::move(hint_in)) {}

  std::string key;
  // Reads the value into the spec (or the importer's state); empty for keys accel has no
  // equivalent for, which are reported unless their value is a default (see Walk).
  std::function<void(const SourceKey&)> map;
  // The source tool's defaults for an unmapped key, as scalar text ("false", "static", "5e8";
  // numbers compare by value, words case-insensitively).
  std::vector<std::string> defaults;
  // Appended to the warning for this key (e.g. how to get the setting another way).
  std::string hint;
};

// A Hugging Face config.json the source config leads to (torchtitan's model.hf_assets_path
// directory holding one), to become the spec's model.config unless `accel import --model` names
// another.
struct FoundModelConfig {
  std::string path;    // where it is on this machine (LaunchPath of the source path)
  std::string source;  // the source key it came from, for the spec's comment
};

// State shared by one import: the file, the tool's name for messages, the diagnostics and the
// spec being built. Reads report located errors (E0702) and return nullopt on a wrong type.
class ImportContext {
 public:
  ImportContext(std::string file, std::string tool, DiagnosticSink& sink, SpecBuilder& spec)
      : file_(std::move(file)), tool_(std::move(tool)), sink_(sink), spec_(spec) {}

  // Where paths named inside the source config resolve from (`launch_dir`, "" = the current
  // directory: the tools open them relative to their working directory) and where the spec
  // will be written (`output_path`, "" = standard output): see SpecPath.
  void SetPaths(std::string launch_dir, std::string output_path) {
    launch_dir_ = std::move(launch_dir);
    output_path_ = std::move(output_path);
  }

  // `source_path`, a path named in the source config, as the spec must name it: an absolute
  // path stays absolute; a relative one is taken from the launch directory and written
  // relative to the spec's directory (RelativeToSpec).
  std::string SpecPath(const std::string& source_path) const;

  // `source_path` as this machine finds it: an absolute path as is, a relative one taken from the
  // launch directory (or the current directory when none was given).
  std::string LaunchPath(const std::string& source_path) const;

  // Records a config.json found through the source config (see FoundModelConfig); the last one
  // recorded is used.
  void FoundConfig(FoundModelConfig found) { found_config_ = std::move(found); }
  const std::optional<FoundModelConfig>& found_config() const { return found_config_; }

  const std::string& file() const { return file_; }
  const std::string& tool() const { return tool_; }
  SpecBuilder& spec() { return spec_; }
  DiagnosticSink& sink() { return sink_; }

  // Visits every key of `mapping` (whose dotted path is `prefix`, "" at the top). A key with a
  // rule that maps it is handed to the rule. Any other key is "not imported": when its value is
  // null, an empty list or mapping, a mapping with `enabled: false`, or (for a key with a rule)
  // "auto" or one of the rule's defaults, it is only listed in the output's header; otherwise
  // it gets warning W0701 at the key, "KEY = VALUE has no accel equivalent; not imported", with
  // "did you mean" for a near miss of a mapped key. Duplicate keys are errors (E0102), or
  // warnings (W0702) when both values are the same scalar. A `mapping` that is not a mapping
  // is an E0702 error.
  void Walk(const YamlNode& mapping, const std::string& prefix, const std::vector<KeyRule>& rules);

  // Typed reads of `key.value`. Integers accept integral floats written as 5e8; numbers accept
  // integers. Errors: E0702 "'PATH' must be an integer, got string \"x\"".
  std::optional<int64_t> Int(const SourceKey& key);
  std::optional<double> Number(const SourceKey& key);
  std::optional<bool> Bool(const SourceKey& key);
  std::optional<std::string> String(const SourceKey& key);

  // An integer at least `minimum`; E0702 for other integers too.
  std::optional<int64_t> IntAtLeast(const SourceKey& key, int64_t minimum);

  // True when the value is the string "auto" (DeepSpeed and Hugging Face's "fill me in").
  static bool IsAuto(const YamlNode& value);

  // Writes `auto` to `field` when the accel field accepts it, else leaves the field out and
  // adds a note comment to its section saying so.
  void Auto(const std::string& field, const SourceKey& key);

  // Sets `field` from a value read elsewhere, with `key`'s path as the comment.
  void Set(const std::string& field, std::string yaml_value, const std::string& source) {
    spec_.Set(field, std::move(yaml_value), source);
  }

  // Sets `field` to a number read from `key`, with the key's path as the comment, after checking
  // it against the accel field's range (spec/field_registry.h): E0703 at the value when outside,
  // e.g. more steps than accel's planning limit.
  void SetInt(const std::string& field, int64_t value, const SourceKey& key);
  void SetFloat(const std::string& field, double value, const SourceKey& key);

  // The range check of SetInt alone: false (after E0703 at the value) when `value` is outside
  // the range of accel's `field`.
  bool InRange(const std::string& field, double value, const SourceKey& key);

  // E0703 at the value: KEY = VALUE cannot be expressed in accel (`why` explains).
  void Unsupported(const SourceKey& key, const std::string& why);

  // E0702 at the value with `message`.
  void WrongType(const SourceKey& key, const std::string& message);

  // W0701 at the key (the warning Walk gives unmapped keys), for keys a rule decides not to
  // import; `why` replaces the default explanation.
  void Unmapped(const SourceKey& key, const std::string& why);

  // Lists `path` in the header as left out at its default (for sections a rule skips whole,
  // such as a disabled checkpoint section).
  void Defaulted(const std::string& path) { defaulted_.push_back(path); }

  // Keys listed in the output header: left out at their defaults, and reported.
  const std::vector<std::string>& defaulted() const { return defaulted_; }
  const std::vector<std::string>& reported() const { return reported_; }

  // How messages quote a value: scalars as written (cut to 40 bytes), else "a mapping"/"a list".
  static std::string Shown(const YamlNode& value);

 private:
  bool IsDefault(const YamlNode& value, const KeyRule* rule) const;
  // Walk's reports: a repeated key (E0102, or W0702 for the same scalar), and a key it does not
  // import (W0701, with the rule's hint or a "did you mean" among the mapped keys).
  void Duplicate(const spec::YamlEntry& first, const spec::YamlEntry& again,
                 const std::string& path);
  void NotImported(const SourceKey& key, const std::string& name, const KeyRule* rule,
                   const std::vector<KeyRule>& rules);

  std::string file_;
  std::string tool_;
  std::string launch_dir_;
  std::string output_path_;
  DiagnosticSink& sink_;
  SpecBuilder& spec_;
  std::vector<std::string> defaulted_;
  std::vector<std::string> reported_;
  std::optional<FoundModelConfig> found_config_;
};

// `target` as the job loader will resolve it from a spec written at `output_path` ("" = the
// current directory): relative to the spec's directory, or absolute when the two share nothing
// but the root. A relative `target` is taken from the current directory.
std::string RelativeToSpec(const std::string& target, const std::string& output_path);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_IMPORT_CONTEXT_H_
