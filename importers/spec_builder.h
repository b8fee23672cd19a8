#ifndef ACCEL_IMPORTERS_SPEC_BUILDER_H_
#define ACCEL_IMPORTERS_SPEC_BUILDER_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

// The shared emitter of `accel import`: collects job-spec values with the source key each came
// from, and writes them as one YAML job file whose comments name those keys.
namespace accel::importers {

class SpecBuilder {
 public:
  // Sets the job field at dotted `path` (a key of spec/field_registry.h, e.g. "sharding.stage")
  // to `yaml_value`, which is already YAML text (use the Yaml* helpers below). `source` becomes
  // the line's comment: the source key(s) the value came from, e.g. "zero_optimization.stage".
  // A second Set of the same path replaces the first.
  void Set(const std::string& path, std::string yaml_value, std::string source);

  // Removes the value Set for `path`, if any.
  void Erase(const std::string& path) { values_.erase(path); }

  // Removes every value Set under the section `prefix` ("model" removes model.*), `keep` aside.
  void EraseSection(const std::string& prefix, const std::string& keep);

  // Whether `path` was Set.
  bool Has(const std::string& path) const { return values_.count(path) > 0; }

  // The YAML text Set for `path`, or "" when unset.
  std::string Get(const std::string& path) const;

  // Adds a comment line printed at the top of `section` (a top-level key such as "training"),
  // or in the file header when `section` is empty. Used for values left out ("lr omitted: ...").
  void Note(const std::string& section, std::string text);

  // Renders the spec: the header comments, then every set field in the order of the job
  // schema (spec::JobFields), nested sections in block style, each value followed by
  // "  # source". Sections with nothing set and no notes are left out.
  std::string Render() const;

 private:
  struct Value {
    std::string yaml;
    std::string source;
  };
  std::map<std::string, Value> values_;
  std::map<std::string, std::vector<std::string>> notes_;
};

// YAML text of an integer.
std::string YamlInt(int64_t value);
// YAML text of a float that reads back as the same double and always as a float ("1.0", "3e-05").
std::string YamlFloat(double value);
// A plain scalar when `text` reads back as the same string (and is not the word `auto`), else a
// double-quoted one.
std::string YamlString(std::string_view text);

}  // namespace accel::importers

#endif  // ACCEL_IMPORTERS_SPEC_BUILDER_H_
