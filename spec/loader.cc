#include "spec/loader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "common/diag_codes.h"
#include "common/json_document.h"
#include "common/non_ascii.h"
#include "common/spellcheck.h"
#include "common/units.h"
#include "common/utf8.h"
#include "schemas/schema_validator.h"
#include "spec/field_registry.h"
#include "spec/file_reader.h"
#include "spec/device_profile_file.h"
#include "spec/model_config.h"
#include "spec/overrides.h"
#include "spec/spec_json.h"
#include "spec/text_checks.h"
#include "spec/yaml_tree.h"

namespace accel::spec {
namespace {

// Past this many errors in one file the rest are counted, not listed: a file of 50,000 unknown
// keys should not print 50,000 diagnostics.
constexpr int kMaxErrorsPerFile = 100;

// Strings quoted in messages are cut to this many bytes.
constexpr size_t kMaxQuotedBytes = 60;
// A --set argument named in messages is cut to this many bytes.
constexpr size_t kMaxShownOverrideBytes = 120;

std::string FormatNumber(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.15g", value);
  return buffer;
}

std::string Quote(std::string_view text) {
  std::string out = "\"";
  size_t shown = 0;
  for (char c : text) {
    // Cut at a character boundary: half a character is not UTF-8, which JSON output refuses.
    if (shown++ >= kMaxQuotedBytes && (static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      out += "...";
      break;
    }
    if (c == '\n') out += "\\n";
    else if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else out += c;
  }
  return out + "\"";
}

// " (contains non-ASCII character U+0430 CYRILLIC SMALL LETTER A at column 8)" for a key or
// value (`what`) with one, else "". The column is the file's when the text is written plain at
// `location`; in quoted text (which may spell it as an escape) or a --set argument it is the
// character's place in the text instead ("as character 12 of the key").
std::string NonAsciiRemark(std::string_view text, SourceLocation location, bool quoted,
                           std::string_view what) {
  std::optional<NonAsciiCharacter> found = FirstNonAscii(text);
  if (!found) return "";
  std::string where;
  if (location.known() && !quoted) {
    where = "at column " + std::to_string(location.column + static_cast<int>(found->offset));
  } else {
    size_t characters = 0;
    for (size_t i = 0; i < found->offset; i += Utf8SequenceAt(text, i).length) ++characters;
    where = "as character " + std::to_string(characters + 1) + " of the " + std::string(what);
  }
  return " (contains non-ASCII character " + CodePointName(found->code_point) + " " + where + ")";
}

// "string \"eight\"", "float 1.5", "integer 8", "boolean true", "null", "a mapping", "a list".
std::string Got(const YamlNode& node) {
  const YamlNode& n = node.content();
  if (n.kind == YamlNode::Kind::kMapping) return "a mapping";
  if (n.kind == YamlNode::Kind::kSequence) return "a list";
  switch (n.scalar_type) {
    case ScalarType::kNull: return "null";
    case ScalarType::kString: return "string " + Quote(n.value);
    default: return DescribeYamlType(n) + " " + n.value;
  }
}

std::string JoinList(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) out += (out.empty() ? "" : ", ") + v;
  return out;
}

std::string Expected(const FieldInfo& field) {
  switch (field.kind) {
    case FieldKind::kSection: return "a mapping";
    case FieldKind::kInteger: return "an integer";
    case FieldKind::kNumber: return "a number";
    case FieldKind::kBoolean: return "true or false";
    case FieldKind::kString: return "a string";
    case FieldKind::kEnum: return "one of " + JoinList(field.enum_values);
    case FieldKind::kSize: return "a size such as 8GiB, 512MB or a number of bytes";
    case FieldKind::kNumberPair: return "a list of two numbers";
  }
  return "a value";
}

bool IsAutoWord(const YamlNode& node) {
  const YamlNode& n = node.content();
  return n.kind == YamlNode::Kind::kScalar && n.scalar_type == ScalarType::kString &&
         n.value == "auto";
}

std::string Dirname(const std::string& file) {
  return std::filesystem::path(file).parent_path().generic_string();
}

class Loader {
 public:
  Loader(const LoadOptions& options, DiagnosticSink& sink, SourceManager& sources)
      : options_(options), sink_(sink), sources_(sources) {}

  std::optional<JobSpec> Load(std::string_view text, const std::string& file);

 private:
  // --- diagnostics -------------------------------------------------------------------------
  Diagnostic* Error(const char* code, SourceLocation location, const std::string& field,
                    std::string message);
  SourceLocation Loc(SourceLocation location) const { return locate_ ? location : SourceLocation{}; }

  // --- the file ----------------------------------------------------------------------------
  std::unique_ptr<YamlDocument> Parse(std::string_view text);
  void LoadMapping(const YamlNode& mapping, const std::string& section, SourceLocation section_key);
  void LoadField(const FieldInfo& field, const YamlNode& key, const YamlNode& value,
                 const std::string& path);
  void UnknownKey(const std::string& section, const YamlNode& key_node, const std::string& key);
  // An unknown key in a --set argument (its dotted path), with a "did you mean".
  void UnknownOverrideKey(const std::string& path);
  void Record(const std::string& path, Origin origin, SourceLocation key, SourceLocation value);

  // --- typing ------------------------------------------------------------------------------
  std::optional<FieldValue> Convert(const FieldInfo& field, const YamlNode& node,
                                    const std::string& path);
  std::optional<FieldValue> ConvertPair(const FieldInfo& field, const YamlNode& node,
                                        const std::string& path);
  std::optional<double> ConvertNumber(const FieldInfo& field, const YamlNode& node,
                                      const std::string& path);
  bool CheckRange(const FieldInfo& field, double value, const std::string& text,
                  SourceLocation location, const std::string& path, const char* unit = "");
  void WrongType(const FieldInfo& field, const YamlNode& node, const std::string& path);

  // --- after the file ----------------------------------------------------------------------
  void ApplyOverride(const std::string& argument);
  void ApplyModelConfig();
  void ApplyDeviceProfile();
  void CheckModel();
  void ApplyDefaults();
  void RunSchema(const YamlNode& root);
  bool IsSet(std::string_view path) const;
  bool SuppressedBySpecError(const std::string& path, SourceLocation location) const;

  const LoadOptions& options_;
  DiagnosticSink& sink_;
  SourceManager& sources_;
  JobSpec spec_;
  std::string spec_file_;
  std::string file_;      // where diagnostics point: the spec file or "--set ..."
  bool locate_ = true;    // false while applying an override (no line:column to give)
  int errors_ = 0;
  int errors_dropped_ = 0;
  bool model_config_failed_ = false;
  std::vector<std::string> error_fields_;       // fields the loader reported errors for
  std::set<std::pair<int, int>> error_locations_;
  // Keys offered in a "did you mean": not reported again as missing.
  std::set<std::string> suggested_;
};

Diagnostic* Loader::Error(const char* code, SourceLocation location, const std::string& field,
                          std::string message) {
  error_fields_.push_back(field);
  if (locate_ && location.known()) error_locations_.insert({location.line, location.column});
  if (++errors_ > kMaxErrorsPerFile) {
    ++errors_dropped_;
    return nullptr;
  }
  return &sink_.Error(code, file_, Loc(location), field, std::move(message));
}

std::optional<JobSpec> Loader::Load(std::string_view text, const std::string& file) {
  const int errors_before = sink_.error_count();
  spec_file_ = file_ = file;
  spec_.file = file;
  if (!CheckSpecText(text, file, sink_)) {
    sources_.Add(file, SanitizeForDisplay(text.substr(0, kMaxSpecFileBytes)));
    return std::nullopt;
  }
  sources_.Add(file, std::string(text));
  std::unique_ptr<YamlDocument> document = Parse(text);
  if (document == nullptr) return std::nullopt;
  const YamlNode& root = *document->root;
  if (!root.is_mapping()) {
    Error(codes::kWrongType, root.location, "",
          "expected a mapping of sections (version, name, model, ...) at the top level, got " +
              Got(root));
    return std::nullopt;
  }
  LoadMapping(root.content(), "", {1, 1});
  for (const std::string& argument : options_.overrides) ApplyOverride(argument);
  file_ = spec_file_;
  locate_ = true;
  ApplyModelConfig();
  ApplyDeviceProfile();
  CheckModel();
  ApplyDefaults();
  if (errors_dropped_ > 0) {
    sink_.Error("", file_, {}, "",
                "too many errors; " + std::to_string(errors_dropped_) + " more not shown");
  }
  if (!options_.skip_schema) RunSchema(root);
  if (sink_.error_count() > errors_before) return std::nullopt;
  return std::move(spec_);
}

std::unique_ptr<YamlDocument> Loader::Parse(std::string_view text) {
  DiagnosticSink parse_sink;
  std::unique_ptr<YamlDocument> document = ParseYaml(text, file_, parse_sink);
  if (document != nullptr) return document;
  // yaml-cpp's messages for tab indentation ("illegal map value", "illegal tab when looking
  // for indentation") do not mention tabs; when a tab-indented line precedes the error, that
  // line is the cause, so report tabs instead.
  std::vector<SourceLocation> tabs = FindTabIndentation(text);
  const Diagnostic& parse_error = parse_sink.diagnostics().front();
  if (!tabs.empty() && parse_error.code == codes::kYamlSyntax &&
      (!parse_error.location.known() || tabs.front().line <= parse_error.location.line)) {
    for (SourceLocation tab : tabs) {
      Error(codes::kTabIndent, tab, "", "tabs are not allowed for indentation; indent with spaces");
    }
    return nullptr;
  }
  for (const Diagnostic& d : parse_sink.diagnostics()) {
    Diagnostic* added = Error(d.code.c_str(), d.location, d.field, d.message);
    if (added != nullptr) added->notes = d.notes;
  }
  return nullptr;
}

void Loader::Record(const std::string& path, Origin origin, SourceLocation key,
                    SourceLocation value) {
  FieldSource& source = spec_.sources[path];
  source.origin = origin;
  source.file = file_;
  source.key = Loc(key);
  source.value = Loc(value);
}

void Loader::LoadMapping(const YamlNode& mapping, const std::string& section,
                         SourceLocation section_key) {
  std::unordered_map<std::string_view, SourceLocation> seen;
  seen.reserve(mapping.entries.size());
  for (const YamlEntry& entry : mapping.entries) {
    const YamlNode& key = *entry.key;
    if (!key.is_scalar() || key.is_null()) {
      Error(codes::kWrongType, key.location, section,
            "keys must be plain names, got " + Got(key) +
                (section.empty() ? "" : " in " + section));
      continue;
    }
    const std::string& name = key.content().value;
    auto [it, inserted] = seen.emplace(name, key.location);
    if (!inserted) {
      std::string where = section.empty() ? "" : " in " + section;
      Diagnostic* d = Error(codes::kDuplicateKey, key.location, JoinPath(section, name),
                            "duplicate key '" + name + "'" + where);
      if (d != nullptr) d->Note(file_, it->second, "'" + name + "' first defined here");
      continue;
    }
    std::string path = JoinPath(section, name);
    const FieldInfo* field = FindField(path);
    if (field == nullptr) {
      UnknownKey(section, key, name);
      continue;
    }
    LoadField(*field, key, *entry.value, path);
  }
  for (const std::string& child : ChildKeys(section)) {
    if (seen.count(child) > 0) continue;
    std::string path = JoinPath(section, child);
    const FieldInfo* field = FindField(path);
    if (field == nullptr || !field->required || suggested_.count(path) > 0) continue;
    std::string message = "missing required key '" + child + "'";
    if (!section.empty()) message += " in " + section;
    Error(codes::kMissingField, section_key, path, message);
  }
}

void Loader::UnknownKey(const std::string& section, const YamlNode& key_node,
                        const std::string& key) {
  const SourceLocation location = key_node.location;
  std::string path = JoinPath(section, key);
  // Every key is ASCII; a look-alike letter (Cyrillic "а" in num_lаyers) is named, or the
  // suggestion would read like the key itself.
  std::string where = (section.empty() ? "" : " in " + section) +
                      NonAsciiRemark(key, Loc(location), key_node.quoted, "key");
  const std::vector<std::string>& siblings = ChildKeys(section);
  if (std::optional<std::string> match = ClosestMatch(AsciiSkeleton(key), siblings)) {
    suggested_.insert(JoinPath(section, *match));
    Error(codes::kUnknownKey, location, path,
          "unknown key '" + key + "'" + where + "; did you mean '" + *match + "'?");
    return;
  }
  // The right key in the wrong section ("lr" directly under training).
  for (const FieldInfo& field : JobFields()) {
    if (field.key == key && field.parent != section) {
      Error(codes::kUnknownKey, location, path,
            "unknown key '" + key + "'" + where + "; did you mean '" + field.path + "'?");
      return;
    }
  }
  Diagnostic* d = Error(codes::kUnknownKey, location, path, "unknown key '" + key + "'" + where);
  if (d != nullptr) {
    d->Note((section.empty() ? "valid top-level keys: " : "valid keys in " + section + ": ") +
            JoinList(siblings));
  }
}

void Loader::LoadField(const FieldInfo& field, const YamlNode& key, const YamlNode& value,
                       const std::string& path) {
  Record(path, Origin::kFile, key.location, value.location);
  if (field.kind == FieldKind::kSection) {
    if (!value.is_mapping()) {
      WrongType(field, value, path);
      return;
    }
    LoadMapping(value.content(), path, key.location);
    return;
  }
  std::optional<FieldValue> converted = Convert(field, value, path);
  if (converted) field.store(spec_, *converted);
}

void Loader::WrongType(const FieldInfo& field, const YamlNode& node, const std::string& path) {
  Error(codes::kWrongType, node.location, path,
        "expected " + Expected(field) + " for " + path + ", got " + Got(node));
}

bool Loader::CheckRange(const FieldInfo& field, double value, const std::string& text,
                        SourceLocation location, const std::string& path, const char* unit) {
  bool low_ok = !field.minimum || (field.exclusive_minimum ? value > *field.minimum
                                                           : value >= *field.minimum);
  bool high_ok = !field.maximum || (field.exclusive_maximum ? value < *field.maximum
                                                            : value <= *field.maximum);
  if (low_ok && high_ok && !std::isnan(value)) return true;
  if (field.maximum_is_limit && !high_ok) {
    const std::string limit = field.kind == FieldKind::kSize
                                  ? FormatBytes(static_cast<int64_t>(*field.maximum))
                                  : FormatNumber(*field.maximum);
    Error(codes::kOutOfRange, location, path,
          path + " must be at most " + limit + " (accel's limit), got " + text);
    return false;
  }
  std::string low = field.minimum ? FormatNumber(*field.minimum) + unit : "";
  std::string high = field.maximum ? FormatNumber(*field.maximum) + unit : "";
  std::string rule;
  const bool two_sided = field.minimum && field.maximum && !field.maximum_is_limit;
  if (two_sided && !field.exclusive_minimum && !field.exclusive_maximum) {
    rule = "must be between " + low + " and " + high;
  } else if (two_sided) {
    rule = std::string(field.exclusive_minimum ? "must be greater than " : "must be at least ") +
           low + " and less than " + (field.exclusive_maximum ? "" : "or equal to ") + high;
  } else if (field.minimum) {
    rule = (field.exclusive_minimum ? "must be greater than " : "must be at least ") + low;
  } else {
    rule = (field.exclusive_maximum ? "must be less than " : "must be at most ") + high;
  }
  Error(codes::kOutOfRange, location, path, path + " " + rule + ", got " + text);
  return false;
}

std::optional<double> Loader::ConvertNumber(const FieldInfo& field, const YamlNode& node,
                                            const std::string& path) {
  const YamlNode& n = node.content();
  double value = 0;
  if (n.kind != YamlNode::Kind::kScalar ||
      (n.scalar_type != ScalarType::kInt && n.scalar_type != ScalarType::kFloat) ||
      !ParseYamlFloat(n.value, &value)) {
    Error(codes::kWrongType, node.location, path,
          "expected a number for " + path + ", got " + Got(node));
    return std::nullopt;
  }
  if (!std::isfinite(value)) {
    Error(codes::kOutOfRange, node.location, path,
          path + " must be a finite number, got " + n.value);
    return std::nullopt;
  }
  if (!CheckRange(field, value, n.value, node.location, path)) return std::nullopt;
  return value;
}

std::optional<FieldValue> Loader::ConvertPair(const FieldInfo& field, const YamlNode& node,
                                              const std::string& path) {
  const YamlNode& n = node.content();
  if (n.kind != YamlNode::Kind::kSequence) {
    Error(codes::kWrongType, node.location, path,
          "expected a list of two numbers for " + path + ", got " + Got(node));
    return std::nullopt;
  }
  if (n.items.size() != 2) {
    Error(codes::kWrongType, node.location, path,
          path + " must have exactly 2 items, got " + std::to_string(n.items.size()));
    return std::nullopt;
  }
  FieldValue value;
  bool ok = true;
  for (int i = 0; i < 2; ++i) {
    std::string item_path = path + "[" + std::to_string(i) + "]";
    Record(item_path, locate_ ? Origin::kFile : Origin::kOverride, {}, n.items[i]->location);
    std::optional<double> item = ConvertNumber(field, *n.items[i], item_path);
    if (item) value.pair[i] = *item;
    ok = ok && item.has_value();
  }
  if (!ok) return std::nullopt;
  return value;
}

std::optional<FieldValue> Loader::Convert(const FieldInfo& field, const YamlNode& node,
                                          const std::string& path) {
  if (field.kind == FieldKind::kNumberPair) return ConvertPair(field, node, path);
  const YamlNode& n = node.content();
  if (n.kind != YamlNode::Kind::kScalar) {
    WrongType(field, node, path);
    return std::nullopt;
  }
  const bool is_enum_word = field.kind == FieldKind::kEnum &&
                            std::find(field.enum_values.begin(), field.enum_values.end(),
                                      n.value) != field.enum_values.end();
  if (IsAutoWord(node) && !is_enum_word) {
    if (!field.allows_auto) {
      Error(codes::kAutoNotAllowed, node.location, path, "`auto` is not allowed for " + path);
      return std::nullopt;
    }
    FieldValue value;
    value.is_auto = true;
    return value;
  }
  FieldValue value;
  switch (field.kind) {
    case FieldKind::kInteger: {
      if (n.scalar_type != ScalarType::kInt) {
        WrongType(field, node, path);
        return std::nullopt;
      }
      if (!ParseYamlInt(n.value, &value.integer)) {
        Error(codes::kOutOfRange, node.location, path,
              path + " is out of range: " + n.value + " does not fit in 64 bits");
        return std::nullopt;
      }
      if (path == "version" && value.integer != 1) {
        Error(codes::kBadVersion, node.location, path,
              "unsupported spec version " + n.value + "; this accel reads version 1");
        return std::nullopt;
      }
      if (!CheckRange(field, static_cast<double>(value.integer), n.value, node.location, path)) {
        return std::nullopt;
      }
      return value;
    }
    case FieldKind::kNumber: {
      std::optional<double> number = ConvertNumber(field, node, path);
      if (!number) return std::nullopt;
      value.number = *number;
      return value;
    }
    case FieldKind::kBoolean:
      if (n.scalar_type != ScalarType::kBool) {
        WrongType(field, node, path);
        return std::nullopt;
      }
      value.boolean = n.value[0] == 't' || n.value[0] == 'T';
      return value;
    case FieldKind::kString:
      if (n.scalar_type != ScalarType::kString) {
        WrongType(field, node, path);
        return std::nullopt;
      }
      if (field.non_empty && n.value.empty()) {
        Error(codes::kOutOfRange, node.location, path, path + " must not be empty");
        return std::nullopt;
      }
      if (field.max_bytes > 0 && n.value.size() > field.max_bytes) {
        Diagnostic* d = Error(codes::kOutOfRange, node.location, path,
                              path + " must be at most " + std::to_string(field.max_bytes) +
                                  " bytes (accel's limit), got " + std::to_string(n.value.size()));
        if (d != nullptr && path == "name") {
          d->Note("the name becomes the run directory runs/<name>, and file systems allow 255 "
                  "bytes per name");
        }
        return std::nullopt;
      }
      if (!MatchesPattern(field, n.value)) {
        Error(codes::kOutOfRange, node.location, path,
              "invalid " + path + " " + Quote(n.value) +
                  ": use letters, digits, '.', '_' and '-', starting with a letter or digit");
        return std::nullopt;
      }
      if (field.contained_path && HasParentComponent(n.value)) {
        Error(codes::kPathEscapes, node.location, path,
              path + " " + Quote(n.value) +
                  " must not contain '..': accel writes only inside the directories a spec "
                  "names (write the path without '..')");
        return std::nullopt;
      }
      value.text = n.value;
      return value;
    case FieldKind::kEnum: {
      if (n.scalar_type != ScalarType::kString) {
        WrongType(field, node, path);
        return std::nullopt;
      }
      for (size_t i = 0; i < field.enum_values.size(); ++i) {
        if (field.enum_values[i] == n.value) {
          value.integer = static_cast<int64_t>(i);
          value.text = n.value;
          return value;
        }
      }
      std::string message = "invalid value " + Quote(n.value) + " for " + path +
                            NonAsciiRemark(n.value, Loc(n.location), n.quoted, "value");
      if (std::optional<std::string> match =
              ClosestMatch(AsciiSkeleton(n.value), field.enum_values)) {
        message += "; did you mean '" + *match + "'?";
      } else {
        message += "; expected one of " + JoinList(field.enum_values);
      }
      Error(codes::kBadEnum, node.location, path, std::move(message));
      return std::nullopt;
    }
    case FieldKind::kSize: {
      std::optional<int64_t> bytes;
      if (n.scalar_type == ScalarType::kInt) {
        int64_t integer = 0;
        if (ParseYamlInt(n.value, &integer)) bytes = integer;
      } else if (n.scalar_type == ScalarType::kString) {
        bytes = ParseByteSize(n.value);
      } else {
        WrongType(field, node, path);
        return std::nullopt;
      }
      if (!bytes) {
        std::string message = "invalid size " + Quote(n.value) + " for " + path +
                              "; use a number of bytes or a unit: B, KB, MB, GB, TB, KiB, MiB, "
                              "GiB, TiB";
        // "8gib" -> "8GiB": the number is fine, only the unit's case is wrong.
        size_t split = n.value.find_first_not_of("0123456789. ");
        if (split != std::string::npos && split > 0) {
          std::string unit = n.value.substr(split);
          std::optional<std::string> match;
          for (const char* known : {"B", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"}) {
            if (absl::EqualsIgnoreCase(unit, known)) match = known;
          }
          std::string number = n.value.substr(0, split);
          while (!number.empty() && number.back() == ' ') number.pop_back();
          if (match && ParseByteSize(number + *match)) {
            message = "invalid size " + Quote(n.value) + " for " + path + "; did you mean '" +
                      number + *match + "'?";
          }
        }
        Error(codes::kBadSize, node.location, path, std::move(message));
        return std::nullopt;
      }
      if (!CheckRange(field, static_cast<double>(*bytes), n.value, node.location, path,
                      " bytes")) {
        return std::nullopt;
      }
      value.integer = *bytes;
      return value;
    }
    case FieldKind::kSection:
    case FieldKind::kNumberPair:
      break;
  }
  WrongType(field, node, path);
  return std::nullopt;
}

void Loader::ApplyOverride(const std::string& argument) {
  // A --set value may be long (`name=<100,000 characters>`); every message starts with this.
  file_ = "--set " + CutUtf8(argument, kMaxShownOverrideBytes);
  locate_ = false;
  std::optional<Override> parsed = ParseOverride(argument);
  const std::string key = argument.substr(0, argument.find('='));
  if (!parsed && argument.find('=') != std::string::npos && FirstNonAscii(key)) {
    // A look-alike letter makes the key malformed, not the form of the argument.
    UnknownOverrideKey(key);
    return;
  }
  if (!parsed) {
    Error(codes::kBadOverride, {}, "",
          "expected --set section.key=value (for example --set parallel.tensor=2)");
    return;
  }
  const FieldInfo* field = FindField(parsed->path);
  if (field == nullptr) {
    UnknownOverrideKey(parsed->path);
    return;
  }
  if (field->kind == FieldKind::kSection) {
    const std::vector<std::string>& children = ChildKeys(field->path);
    Error(codes::kBadOverride, {}, field->path,
          "'" + field->path + "' is a section; set one of its keys, e.g. " +
              JoinPath(field->path, children.empty() ? "key" : children.front()));
    return;
  }
  if (parsed->index >= 0 && field->kind != FieldKind::kNumberPair) {
    Error(codes::kBadOverride, {}, field->path, "'" + field->path + "' is not a list");
    return;
  }
  if (!parsed->bad_index.empty() && field->kind != FieldKind::kNumberPair) {
    Error(codes::kBadOverride, {}, field->path, "'" + field->path + "' is not a list");
    return;
  }
  if (parsed->bad_index.starts_with('-')) {
    Error(codes::kBadOverride, {}, field->path,
          "'" + field->path + "' has 2 items; index " + CutUtf8(parsed->bad_index, 24) +
              " is negative (items count from 0: use " + field->path + "[0] or [1])");
    return;
  }
  if (parsed->index > 1 || !parsed->bad_index.empty()) {
    const std::string index =
        parsed->bad_index.empty() ? std::to_string(parsed->index) : CutUtf8(parsed->bad_index, 24);
    Error(codes::kBadOverride, {}, field->path,
          "'" + field->path + "' has 2 items; index " + index + " is out of range (use " +
              field->path + "[0] or [1])");
    return;
  }
  // The value is read as YAML (so `auto`, `3e-4`, `[0.9, 0.95]` and quoting work as in a file),
  // but its diagnostics carry no line:column.
  DiagnosticSink value_sink;
  std::unique_ptr<YamlDocument> document;
  YamlNode empty;
  const YamlNode* value = &empty;
  if (!parsed->value.empty()) {
    document = ParseYaml(parsed->value, file_, value_sink);
    if (document == nullptr) {
      Error(codes::kBadOverride, {}, field->path,
            "cannot read the value of --set " + parsed->path + ": " +
                value_sink.diagnostics().front().message);
      return;
    }
    value = document->root;
  }
  std::string path = field->path;
  std::optional<FieldValue> converted;
  if (parsed->index >= 0) {
    path += "[" + std::to_string(parsed->index) + "]";
    std::optional<double> item = ConvertNumber(*field, *value, path);
    if (item) {
      converted.emplace();
      converted->number = *item;
      converted->index = parsed->index;
    }
  } else {
    converted = Convert(*field, *value, path);
  }
  if (!converted) return;
  field->store(spec_, *converted);
  Record(path, Origin::kOverride, {}, {});
  spec_.overrides.push_back(argument);
}

void Loader::UnknownOverrideKey(const std::string& path) {
  std::vector<std::string> paths;
  for (const FieldInfo& f : JobFields()) {
    if (f.kind != FieldKind::kSection) paths.push_back(f.path);
  }
  std::string message = "unknown key '" + CutUtf8(path, kMaxQuotedBytes) + "'" +
                        NonAsciiRemark(path, {}, /*quoted=*/true, "key");
  if (std::optional<std::string> match = ClosestMatch(AsciiSkeleton(path), paths)) {
    message += "; did you mean '" + *match + "'?";
  }
  Error(codes::kUnknownKey, {}, path, std::move(message));
}

bool Loader::IsSet(std::string_view path) const {
  auto it = spec_.sources.find(std::string(path));
  return it != spec_.sources.end() && it->second.origin != Origin::kDefault;
}

// Copies the model.moe field `field` from a config.json's values; false for other fields.
bool CopyMoeField(const std::string& field, const MoeSpec& from, MoeSpec& to) {
  if (field == "model.moe.num_experts") to.num_experts = from.num_experts;
  else if (field == "model.moe.experts_per_token") to.experts_per_token = from.experts_per_token;
  else if (field == "model.moe.expert_ffn_size") to.expert_ffn_size = from.expert_ffn_size;
  else if (field == "model.moe.num_shared_experts") to.num_shared_experts = from.num_shared_experts;
  else if (field == "model.moe.shared_expert_ffn_size") to.shared_expert_ffn_size = from.shared_expert_ffn_size;
  else if (field == "model.moe.shared_expert_gate") to.shared_expert_gate = from.shared_expert_gate;
  else if (field == "model.moe.norm_topk_prob") to.norm_topk_prob = from.norm_topk_prob;
  else if (field == "model.moe.router_aux_loss_coef") to.router_aux_loss_coef = from.router_aux_loss_coef;
  else if (field == "model.moe.first_dense_layers") to.first_dense_layers = from.first_dense_layers;
  else if (field == "model.moe.sparse_step") to.sparse_step = from.sparse_step;
  else if (field == "model.moe.dense_layers") to.dense_layers = from.dense_layers;
  else return false;
  return true;
}

void Loader::ApplyModelConfig() {
  if (spec_.model.config.empty() || !IsSet("model.config")) {
    if (IsSet("model.arch")) spec_.model.model_type = Name(spec_.model.arch);
    return;
  }
  const FieldSource where = spec_.sources["model.config"];
  file_ = where.file;
  locate_ = where.origin == Origin::kFile;
  std::string path = spec_.model.config;
  if (where.origin == Origin::kFile) {
    std::string base = Dirname(spec_file_);
    if (!base.empty()) {
      path = (std::filesystem::path(base) / path).lexically_normal().generic_string();
    }
  }
  ModelConfigResult result = ReadModelConfig(path);
  if (!result.text.empty()) sources_.Add(path, result.text);
  if (!result.config) {
    model_config_failed_ = true;
    for (const ModelConfigIssue& issue : result.issues) {
      std::string message = "model config '" + path + "' " + issue.message;
      Diagnostic* d = Error(issue.code.c_str(), where.value, "model.config", std::move(message));
      if (d != nullptr && issue.location.known()) {
        d->Note(path, issue.location, "the JSON error is here");
      }
    }
    return;
  }
  const ModelConfigFile& config = *result.config;
  if (IsSet("model.arch") && spec_.model.arch != config.model.arch) {
    const FieldSource arch = spec_.sources["model.arch"];
    file_ = arch.file;
    locate_ = arch.origin == Origin::kFile;
    Diagnostic* d = Error(codes::kConflict, arch.value, "model.arch",
                          std::string("model.arch is ") + Name(spec_.model.arch) +
                              " but model config '" + path + "' has model_type '" +
                              config.model.model_type + "'");
    if (d != nullptr && where.origin == Origin::kFile) {
      d->Note(where.file, where.value, "model config named here");
    }
    // The dimensions of one family do not describe the other; do not guess which was meant.
    model_config_failed_ = true;
    return;
  }
  spec_.model.model_type = config.model.model_type;
  // No spec field sets these: they come with the model type.
  spec_.model.variant = config.model.variant;
  ModelSpec& model = spec_.model;
  const ModelSpec& from = config.model;
  for (const std::string& field : config.fields) {
    if (IsSet(field)) continue;
    if (field == "model.arch") model.arch = from.arch;
    else if (field == "model.hidden_size") model.hidden_size = from.hidden_size;
    else if (field == "model.num_layers") model.num_layers = from.num_layers;
    else if (field == "model.num_heads") model.num_heads = from.num_heads;
    else if (field == "model.num_kv_heads") model.num_kv_heads = from.num_kv_heads;
    else if (field == "model.ffn_hidden_size") model.ffn_hidden_size = from.ffn_hidden_size;
    else if (field == "model.vocab_size") model.vocab_size = from.vocab_size;
    else if (field == "model.max_seq_len") model.max_seq_len = from.max_seq_len;
    else if (field == "model.tie_word_embeddings") model.tie_word_embeddings = from.tie_word_embeddings;
    else if (field == "model.qkv_bias") model.qkv_bias = from.qkv_bias;
    else if (field == "model.norm_eps") model.norm_eps = from.norm_eps;
    else if (field == "model.rope_theta") model.rope_theta = from.rope_theta;
    else if (field == "model.head_dim") model.head_dim = from.head_dim;
    else if (field == "model.qk_norm") model.qk_norm = from.qk_norm;
    else if (!CopyMoeField(field, from.moe, model.moe)) continue;
    FieldSource& source = spec_.sources[field];
    source.origin = Origin::kModelConfig;
    source.file = path;
    source.key = {};
    source.value = {};
    source.source_key.clear();
    // Located at the value in config.json, so a note can point there and name its key.
    if (auto key = config.keys.find(field); key != config.keys.end()) {
      source.source_key = key->second;
      source.value = accel::LocateJsonPath(result.text, FieldPath{key->second});
      source.key = source.value;
    }
  }
}

// A cluster.device_profile that names a file is read here, like model.config, so its problems
// are reported with the spec's other errors (located at the value; JSON syntax errors also at
// the byte in the profile). A built-in name is checked by the planner.
void Loader::ApplyDeviceProfile() {
  if (!IsSet("cluster.device_profile") || !IsDeviceProfilePath(spec_.cluster.device_profile)) {
    return;
  }
  const FieldSource where = spec_.sources["cluster.device_profile"];
  file_ = where.file;
  locate_ = where.origin == Origin::kFile;
  std::string path = spec_.cluster.device_profile;
  if (where.origin == Origin::kFile) {
    std::string base = Dirname(spec_file_);
    if (!base.empty()) {
      path = (std::filesystem::path(base) / path).lexically_normal().generic_string();
    }
  }
  DeviceProfileResult result = ReadDeviceProfile(path);
  if (!result.text.empty()) sources_.Add(path, result.text);
  for (const DeviceProfileIssue& issue : result.issues) {
    Diagnostic* d = Error(issue.code.c_str(), where.value, "cluster.device_profile",
                          "device profile '" + path + "' " + issue.message);
    if (d != nullptr && issue.location.known()) d->Note(path, issue.location, "the JSON error is here");
  }
  spec_.cluster.device_profile_values = std::move(result.values);
  file_ = spec_file_;
  locate_ = true;
}

void Loader::CheckModel() {
  file_ = spec_file_;
  locate_ = true;
  if (model_config_failed_ || !IsSet("model")) return;
  const FieldSource model = spec_.sources["model"];
  std::vector<std::string> needed = {"arch", "hidden_size", "num_layers", "num_heads",
                                     "vocab_size", "max_seq_len"};
  if (spec_.model.arch == Arch::kLlama) needed.push_back("ffn_hidden_size");
  bool noted = false;
  for (const std::string& key : needed) {
    if (IsSet("model." + key) || suggested_.count("model." + key) > 0) continue;
    Diagnostic* d = Error(codes::kMissingField, model.key, "model." + key,
                          "missing required key '" + key + "' in model" +
                              (key == "ffn_hidden_size" ? " (llama has no default MLP size)" : ""));
    if (d != nullptr && !noted && !IsSet("model.config")) {
      d->Note("give the model's dimensions, or set model.config to a Hugging Face config.json");
      noted = true;
    }
  }
}

void Loader::ApplyDefaults() {
  ApplyArchDefaults(spec_.model, [this](std::string_view path) { return IsSet(path); });
  if (!IsSet("checkpoint.dir") && !spec_.name.empty()) {
    spec_.checkpoint.dir = "runs/" + spec_.name + "/ckpt";
  }
}

bool Loader::SuppressedBySpecError(const std::string& path, SourceLocation location) const {
  if (location.known() && error_locations_.count({location.line, location.column}) > 0) {
    return true;
  }
  auto within = [](const std::string& inner, const std::string& outer) {
    if (outer.empty()) return true;
    if (inner.size() < outer.size() || inner.compare(0, outer.size(), outer) != 0) return false;
    return inner.size() == outer.size() || inner[outer.size()] == '.' || inner[outer.size()] == '[';
  };
  for (const std::string& field : error_fields_) {
    if (within(field, path) || within(path, field)) return true;
  }
  return false;
}

void Loader::RunSchema(const YamlNode& root) {
  file_ = spec_file_;
  locate_ = true;
  absl::StatusOr<std::vector<schemas::SchemaViolation>> violations =
      schemas::ValidateJobDocument(YamlToJson(root));
  if (!violations.ok()) {
    sink_.Error(codes::kSchema, file_, {}, "", "internal error: " +
                                                   std::string(violations.status().message()));
    return;
  }
  for (const schemas::SchemaViolation& violation : *violations) {
    JsonPathTarget target = LocateJsonPath(root, violation.path);
    if (SuppressedBySpecError(target.field, target.location)) continue;
    std::string message = violation.message;
    while (!message.empty() && message.back() == '.') message.pop_back();
    Diagnostic& d = sink_.Error(codes::kSchema, file_, target.location, target.field,
                                "schema: " + message);
    d.origin = "schema";
  }
}

}  // namespace

std::optional<JobSpec> LoadJobSpec(const std::string& path, const LoadOptions& options,
                                   DiagnosticSink& sink, SourceManager& sources) {
  absl::StatusOr<std::string> text = ReadFileLimited(path, kMaxSpecFileBytes);
  if (!text.ok()) {
    if (text.status().code() == absl::StatusCode::kOutOfRange) {
      sink.Error(codes::kFileTooLarge, path, {}, "",
                 "file is " + std::string(text.status().message()) +
                     " bytes; spec files are limited to 1 MiB (1048576 bytes)");
    } else {
      sink.Error(codes::kFileUnreadable, path, {}, "",
                 "cannot read file: " + std::string(text.status().message()));
    }
    return std::nullopt;
  }
  return LoadJobSpecFromString(*text, path, options, sink, sources);
}

std::optional<JobSpec> LoadJobSpecFromString(std::string_view text, const std::string& file,
                                             const LoadOptions& options, DiagnosticSink& sink,
                                             SourceManager& sources) {
  Loader loader(options, sink, sources);
  return loader.Load(text, file);
}

}  // namespace accel::spec
