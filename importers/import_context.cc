#include "importers/import_context.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "common/diag_codes.h"
#include "common/spellcheck.h"
#include "spec/field_registry.h"

namespace accel::importers {
namespace {

constexpr size_t kMaxShownBytes = 40;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<double> AsNumber(std::string_view text) {
  double value = 0;
  if (!spec::ParseYamlFloat(text, &value)) return std::nullopt;
  return value;
}

std::string Section(const std::string& field) {
  size_t dot = field.find('.');
  return dot == std::string::npos ? field : field.substr(0, dot);
}

}  // namespace

std::string RelativeToSpec(const std::string& target, const std::string& output_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path base = output_path.empty() ? fs::current_path(ec)
                                      : fs::absolute(output_path, ec).parent_path();
  if (ec) return target;
  fs::path absolute = fs::absolute(target, ec);
  if (ec) return target;
  absolute = absolute.lexically_normal();
  base = base.lexically_normal();
  // Paths that share nothing but the root read better absolute than as ../../../x.
  auto a = absolute.begin(), b = base.begin();
  int common = 0;
  while (a != absolute.end() && b != base.end() && *a == *b) ++a, ++b, ++common;
  if (common <= 1) return absolute.string();
  fs::path relative = absolute.lexically_relative(base);
  return relative.empty() ? target : relative.string();
}

std::string ImportContext::LaunchPath(const std::string& source_path) const {
  namespace fs = std::filesystem;
  const fs::path path(source_path);
  if (path.is_absolute() || launch_dir_.empty()) return source_path;
  return (fs::path(launch_dir_) / path).string();
}

std::string ImportContext::SpecPath(const std::string& source_path) const {
  return RelativeToSpec(LaunchPath(source_path), output_path_);
}

std::string ImportContext::Shown(const YamlNode& value) {
  const YamlNode& v = value.content();
  if (v.kind == YamlNode::Kind::kMapping) return "a mapping";
  if (v.kind == YamlNode::Kind::kSequence) return "a list";
  std::string text = v.value;
  if (text.size() > kMaxShownBytes) {
    size_t cut = kMaxShownBytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  for (char& c : text) {
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  }
  if (v.scalar_type == spec::ScalarType::kString) return "\"" + text + "\"";
  return text;
}

bool ImportContext::IsDefault(const YamlNode& value, const KeyRule* rule) const {
  const YamlNode& v = value.content();
  if (v.kind == YamlNode::Kind::kSequence) return v.items.empty();
  if (v.kind == YamlNode::Kind::kMapping) {
    if (v.entries.empty()) return true;
    for (const spec::YamlEntry& entry : v.entries) {
      const YamlNode& enabled = entry.value->content();
      const std::string& name = entry.key->content().value;
      if ((name == "enabled" || name == "enable") && enabled.kind == YamlNode::Kind::kScalar &&
          enabled.scalar_type == spec::ScalarType::kBool && Lower(enabled.value) == "false") {
        return true;
      }
    }
    return false;
  }
  if (v.scalar_type == spec::ScalarType::kNull) return true;
  if (rule == nullptr) return false;
  // "auto" asks the integration (Hugging Face's DeepSpeed glue) to choose: nothing was chosen.
  if (v.scalar_type == spec::ScalarType::kString && v.value == "auto") return true;
  for (const std::string& def : rule->defaults) {
    if (Lower(def) == Lower(v.value)) return true;
    std::optional<double> a = AsNumber(def), b = AsNumber(v.value);
    if (a && b && v.scalar_type != spec::ScalarType::kString && *a == *b) return true;
  }
  return false;
}

void ImportContext::Walk(const YamlNode& mapping, const std::string& prefix,
                         const std::vector<KeyRule>& rules) {
  const YamlNode& m = mapping.content();
  if (m.kind != YamlNode::Kind::kMapping) {
    sink_.Error(codes::kImportWrongType, file_, mapping.location, "",
                (prefix.empty() ? tool_ + " config" : "'" + prefix + "'") +
                    " must be a mapping of keys, got " + spec::DescribeYamlType(mapping));
    return;
  }
  std::map<std::string, const spec::YamlEntry*> seen;
  for (const spec::YamlEntry& entry : m.entries) {
    const YamlNode& key = *entry.key;
    const std::string name = key.is_scalar() ? key.content().value : Shown(key);
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    auto [first, inserted] = seen.emplace(name, &entry);
    if (!inserted) {
      Duplicate(*first->second, entry, path);
      continue;
    }
    const KeyRule* rule = nullptr;
    for (const KeyRule& r : rules) {
      if (r.key == name) rule = &r;
    }
    SourceKey source{key, *entry.value, path};
    if (rule != nullptr && rule->map) {
      rule->map(source);
    } else if (IsDefault(*entry.value, rule)) {
      defaulted_.push_back(path);
    } else {
      NotImported(source, name, rule, rules);
    }
  }
}

void ImportContext::Duplicate(const spec::YamlEntry& first, const spec::YamlEntry& again,
                              const std::string& path) {
  // The first value is the one imported; a repeat of the same value changes nothing.
  const bool same = first.value->is_scalar() && again.value->is_scalar() &&
                    first.value->content().value == again.value->content().value;
  const std::string message = "duplicate key '" + path + "'" +
                              (same ? " with the same value; the first is imported"
                                    : "; " + tool_ + " would silently use one of them");
  Diagnostic& d = same ? sink_.Warning(codes::kImportDuplicateKey, file_, again.key->location, "", message)
                       : sink_.Error(codes::kDuplicateKey, file_, again.key->location, "", message);
  d.Note(file_, first.key->location, "first defined here");
}

void ImportContext::NotImported(const SourceKey& key, const std::string& name,
                                const KeyRule* rule, const std::vector<KeyRule>& rules) {
  std::string why = "has no accel equivalent; not imported";
  if (rule != nullptr) {
    if (!rule->hint.empty()) why += " (" + rule->hint + ")";
    return Unmapped(key, why);
  }
  std::vector<std::string> mapped;
  for (const KeyRule& r : rules) {
    if (r.map) mapped.push_back(r.key);
  }
  if (std::optional<std::string> match = ClosestMatch(name, mapped)) {
    why += "; did you mean '" + *match + "'?";
  }
  Unmapped(key, why);
}

void ImportContext::Unmapped(const SourceKey& key, const std::string& why) {
  reported_.push_back(key.path);
  sink_.Warning(codes::kImportUnmappedKey, file_, key.key.location, "",
                tool_ + " key '" + key.path + "' = " + Shown(key.value) + " " + why);
}

void ImportContext::WrongType(const SourceKey& key, const std::string& message) {
  sink_.Error(codes::kImportWrongType, file_, key.value.location, "", message);
}

void ImportContext::Unsupported(const SourceKey& key, const std::string& why) {
  sink_.Error(codes::kImportUnsupported, file_, key.value.location, "",
              tool_ + " key '" + key.path + "' = " + Shown(key.value) +
                  " cannot be expressed in accel: " + why);
}

std::optional<int64_t> ImportContext::Int(const SourceKey& key) {
  const YamlNode& v = key.value.content();
  if (v.kind == YamlNode::Kind::kScalar) {
    int64_t integer = 0;
    if (v.scalar_type == spec::ScalarType::kInt && spec::ParseYamlInt(v.value, &integer)) {
      return integer;
    }
    double number = 0;
    if (v.scalar_type == spec::ScalarType::kFloat && spec::ParseYamlFloat(v.value, &number) &&
        std::isfinite(number) && std::floor(number) == number && std::fabs(number) < 9e18) {
      return static_cast<int64_t>(number);
    }
  }
  WrongType(key, "'" + key.path + "' must be an integer, got " + spec::DescribeYamlType(key.value) +
                     (v.kind == YamlNode::Kind::kScalar ? " " + Shown(key.value) : ""));
  return std::nullopt;
}

std::optional<int64_t> ImportContext::IntAtLeast(const SourceKey& key, int64_t minimum) {
  std::optional<int64_t> value = Int(key);
  if (value && *value < minimum) {
    WrongType(key, "'" + key.path + "' must be at least " + std::to_string(minimum) + ", got " +
                       std::to_string(*value));
    return std::nullopt;
  }
  return value;
}

std::optional<double> ImportContext::Number(const SourceKey& key) {
  const YamlNode& v = key.value.content();
  double number = 0;
  if (v.kind == YamlNode::Kind::kScalar &&
      (v.scalar_type == spec::ScalarType::kInt || v.scalar_type == spec::ScalarType::kFloat) &&
      spec::ParseYamlFloat(v.value, &number) && std::isfinite(number)) {
    return number;
  }
  WrongType(key, "'" + key.path + "' must be a finite number, got " +
                     spec::DescribeYamlType(key.value) +
                     (v.kind == YamlNode::Kind::kScalar ? " " + Shown(key.value) : ""));
  return std::nullopt;
}

std::optional<bool> ImportContext::Bool(const SourceKey& key) {
  const YamlNode& v = key.value.content();
  if (v.kind == YamlNode::Kind::kScalar && v.scalar_type == spec::ScalarType::kBool) {
    return Lower(v.value) == "true";
  }
  WrongType(key, "'" + key.path + "' must be true or false, got " +
                     spec::DescribeYamlType(key.value) +
                     (v.kind == YamlNode::Kind::kScalar ? " " + Shown(key.value) : ""));
  return std::nullopt;
}

std::optional<std::string> ImportContext::String(const SourceKey& key) {
  const YamlNode& v = key.value.content();
  // Unquoted YAML words such as `no` or `FULL_SHARD` are strings too; so are numbers written
  // where a name is expected (`fsdp_sharding_strategy: 1`): callers compare the text.
  if (v.kind == YamlNode::Kind::kScalar && v.scalar_type != spec::ScalarType::kNull) {
    return v.value;
  }
  WrongType(key, "'" + key.path + "' must be a string, got " + spec::DescribeYamlType(key.value));
  return std::nullopt;
}

bool ImportContext::IsAuto(const YamlNode& value) {
  const YamlNode& v = value.content();
  return v.kind == YamlNode::Kind::kScalar && v.scalar_type == spec::ScalarType::kString &&
         v.value == "auto";
}

namespace {

// "" when `value` fits the range of accel's `field`, else why not.
std::string OutOfRange(const std::string& field, double value) {
  const spec::FieldInfo* info = spec::FindField(field);
  if (info == nullptr) return "";
  auto text = [](double v) {
    return std::floor(v) == v && std::fabs(v) < 9e18 ? std::to_string(static_cast<int64_t>(v))
                                                     : YamlFloat(v);
  };
  if (info->minimum && (value < *info->minimum || (info->exclusive_minimum && value == *info->minimum))) {
    return "accel's " + field + " must be " + (info->exclusive_minimum ? "above " : "at least ") +
           text(*info->minimum);
  }
  if (info->maximum && (value > *info->maximum || (info->exclusive_maximum && value == *info->maximum))) {
    return "accel's " + field + " is at most " + text(*info->maximum);
  }
  return "";
}

}  // namespace

bool ImportContext::InRange(const std::string& field, double value, const SourceKey& key) {
  std::string why = OutOfRange(field, value);
  if (why.empty()) return true;
  Unsupported(key, why);
  return false;
}

void ImportContext::SetInt(const std::string& field, int64_t value, const SourceKey& key) {
  std::string why = OutOfRange(field, static_cast<double>(value));
  if (!why.empty()) return Unsupported(key, why);
  spec_.Set(field, YamlInt(value), key.path);
}

void ImportContext::SetFloat(const std::string& field, double value, const SourceKey& key) {
  std::string why = OutOfRange(field, value);
  if (!why.empty()) return Unsupported(key, why);
  spec_.Set(field, YamlFloat(value), key.path);
}

void ImportContext::Auto(const std::string& field, const SourceKey& key) {
  const spec::FieldInfo* info = spec::FindField(field);
  if (info != nullptr && info->allows_auto) {
    spec_.Set(field, "auto", key.path + ": \"auto\"");
    return;
  }
  spec_.Note(Section(field), field.substr(field.find('.') + 1) + " omitted: " + key.path +
                                 " is \"auto\", which accel's " + field + " does not accept");
}

}  // namespace accel::importers
