#ifndef ACCEL_SPEC_FIELD_REGISTRY_H_
#define ACCEL_SPEC_FIELD_REGISTRY_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spec/job_spec.h"

// The table of every key a job file may contain: its dotted path, type, range, enum values,
// whether `auto` is allowed, whether it is required, its description and documented default, and
// how to store it into a JobSpec. This registry is the single source of the job spec:
//   - the loader and `--set` overrides are driven by it;
//   - the JSON Schema (schemas/accel-job.schema.json, also embedded into the binary) and the
//     Markdown reference (docs/job-spec-reference.md) are generated from it at build time by
//     accel_spec_gen (spec/spec_gen.cc).
// It stays C++ (not a YAML/JSON data file) because every field carries its store function into
// JobSpec. The checked-in schema and reference must match the generator's output (CTest
// `spec_generated_files_up_to_date`); refresh them with
//   cmake --build build-core --target accel_spec_refresh
//
// Adding a spec field:
//   1. add the member to its struct in spec/job_spec.h (its initializer is the default);
//   2. add one entry to BuildFields() in spec/field_registry.cc: the path, kind, range, enum
//      values, store function, .Doc() description and .Default() (the same default, as JSON);
//   3. use it (planner, executor, ...), then run the refresh target above and commit the
//      regenerated schemas/accel-job.schema.json and docs/job-spec-reference.md.
// Cross-field rules the schema cannot express stay in the loader and planner.
namespace accel::spec {

// What a key holds. kSize is a byte count written as an integer or as "8GiB"/"512MB" (see
// common/units.h). kNumberPair is a list of exactly two numbers (training.optimizer.betas).
enum class FieldKind { kSection, kInteger, kNumber, kBoolean, kString, kEnum, kSize, kNumberPair };

// A value that passed its field's type and range checks, ready to be stored.
struct FieldValue {
  bool is_auto = false;
  int64_t integer = 0;        // kInteger; kSize in bytes
  double number = 0;          // kNumber; one item of a kNumberPair when index >= 0
  bool boolean = false;       // kBoolean
  std::string text;           // kString; kEnum spelling as in YAML
  double pair[2] = {0, 0};    // kNumberPair, both items (index == -1)
  int index = -1;             // kNumberPair: the item set by `betas[i]`, -1 for the whole list
};

// One key of the job file.
struct FieldInfo {
  std::string path;                 // dotted, as in JobSpec::sources: "training.optimizer.lr"
  std::string key;                  // last component: "lr"
  std::string parent;               // section path, "" for top-level keys
  FieldKind kind = FieldKind::kSection;
  bool allows_auto = false;         // the plain word `auto` is a valid value
  bool required = false;            // must be present whenever its section is present
  bool non_empty = false;           // strings: "" is rejected
  size_t max_bytes = 0;             // kString: longest value accepted, in bytes; 0: no limit
  std::optional<double> minimum;    // numeric kinds (kSize: bytes); items of a kNumberPair
  bool exclusive_minimum = false;
  std::optional<double> maximum;
  bool exclusive_maximum = false;
  // The maximum is one of accel's resource limits (spec/limits.h), not part of the value's
  // meaning: range errors name the violated side only and call it a limit.
  bool maximum_is_limit = false;
  std::vector<std::string> enum_values;  // kEnum, in documentation order
  std::string pattern;              // kString: the schema's regex for the value, if any
  // kString: hand-written equivalent of `pattern` (no std::regex: it recurses per character and
  // overflows the stack on long hostile input); null when there is no pattern.
  bool (*matches)(std::string_view text) = nullptr;
  // kString: a directory accel writes into; a '..' component is refused (E0112), so a spec
  // cannot make accel write outside the directories it names. Absolute paths are allowed.
  bool contained_path = false;
  // Writes a checked value into the spec; null for sections.
  void (*store)(JobSpec& spec, const FieldValue& value) = nullptr;

  // ---- Documentation: what the generated JSON Schema and reference page say. ----
  // The description (a complete sentence or more; sections have one too).
  std::string description;
  // The default the documentation states, as JSON text: "1e-05", "1234", "\"auto\"",
  // "[0.9, 0.95]". Empty when none is stated (the key is required, or its default depends on
  // other keys, like model.tie_word_embeddings). It must equal the JobSpec member's initializer.
  std::string default_json;
  // Conditional requirement within the section, on top of `required`. With only
  // `required_unless`: the key is required unless sibling `required_unless` is present (the
  // model's dimensions, unless `config` is given). With `required_if_key` too: required only when
  // sibling `required_if_key` equals `required_if_value` (and `required_unless` is absent).
  // The loader enforces these in code (Loader::CheckModel); the schema states them.
  std::string required_unless;
  std::string required_if_key;
  std::string required_if_value;
};

// How the generated schema spells kinds that have no pattern field of their own:
// kSize also accepts a string matching kSizePattern (common/units.h parses it), and a
// contained_path string must not match kParentComponentPattern (see HasParentComponent).
// An integer field whose inclusive minimum equals its maximum (`version`) is written as a
// JSON Schema `const`.
inline constexpr char kSizePattern[] = "^[0-9]+(\\.[0-9]+)? ?(B|KB|kB|MB|GB|TB|KiB|MiB|GiB|TiB)?$";
inline constexpr char kParentComponentPattern[] = "(^|/)\\.\\.(/|$)";

// The job document as a whole: the root of the JSON Schema and the reference page's heading.
struct JobDocumentInfo {
  std::string schema_uri;   // the JSON Schema dialect ("$schema")
  std::string title;
  std::string description;
};
const JobDocumentInfo& JobDocument();

// Every section and key, parents before children, in the order the documentation lists them.
const std::vector<FieldInfo>& JobFields();

// The field with dotted `path`, or nullptr.
const FieldInfo* FindField(std::string_view path);

// Keys directly inside section `section_path` ("" for the top level), in registry order.
const std::vector<std::string>& ChildKeys(std::string_view section_path);

// Whether `value` matches the field's `pattern` (true when it has none).
bool MatchesPattern(const FieldInfo& field, std::string_view value);

// Whether path has a ".." component ("..", "../x", "x/../y", "x/.."), which would let a path
// value climb out of the directory it is resolved against.
bool HasParentComponent(std::string_view path);

// "parallel.tensor" + "tensor" style join: `parent` empty gives `key`.
std::string JoinPath(std::string_view parent, std::string_view key);

}  // namespace accel::spec

#endif  // ACCEL_SPEC_FIELD_REGISTRY_H_
