#include "importers/spec_builder.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "spec/field_registry.h"
#include "spec/text_checks.h"
#include "spec/yaml_tree.h"

namespace accel::importers {
namespace {

int Depth(const std::string& path) {
  int depth = 0;
  for (char c : path) depth += c == '.';
  return depth;
}

bool IsPlainSafe(std::string_view text) {
  if (text.empty() || text.size() > 200) return false;
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.' || c == '/';
    if (!ok) return false;
  }
  if (text[0] == '-' || text[0] == '.') return false;
  if (text == "auto") return false;  // the loader's keyword, not the string
  return spec::ClassifyPlainScalar(text) == spec::ScalarType::kString;
}

// `text` as one comment line: no control characters (newlines included) or invalid UTF-8.
std::string OneLine(std::string_view text) {
  std::string out = spec::SanitizeForDisplay(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r' || c == '\t') c = '?';
  }
  return out;
}

}  // namespace

// Comments quote source keys, which may hold any bytes: a newline would end the comment and
// turn the rest into YAML, a NUL or invalid UTF-8 make the file unreadable to the loader.
void SpecBuilder::Set(const std::string& path, std::string yaml_value, std::string source) {
  values_[path] = {std::move(yaml_value), OneLine(source)};
}

std::string SpecBuilder::Get(const std::string& path) const {
  auto it = values_.find(path);
  return it == values_.end() ? "" : it->second.yaml;
}

void SpecBuilder::Note(const std::string& section, std::string text) {
  notes_[section].push_back(OneLine(text));
}

std::string SpecBuilder::Render() const {
  std::string out;
  if (auto it = notes_.find(""); it != notes_.end()) {
    for (const std::string& line : it->second) out += "# " + line + "\n";
  }
  const std::vector<spec::FieldInfo>& fields = spec::JobFields();
  // A section is printed when a field below it is set or it has notes.
  auto has_values = [&](const std::string& section) {
    for (const auto& [path, value] : values_) {
      if (path.size() > section.size() && path.compare(0, section.size(), section) == 0 &&
          path[section.size()] == '.') {
        return true;
      }
    }
    return false;
  };
  for (const spec::FieldInfo& field : fields) {
    std::string indent(2 * Depth(field.path), ' ');
    if (field.kind == spec::FieldKind::kSection) {
      if (!notes_.count(field.path) && !has_values(field.path)) continue;
      // A section holding only notes is an empty mapping, not null (which the loader rejects).
      out += indent + field.key + (has_values(field.path) ? ":\n" : ": {}\n");
      if (auto it = notes_.find(field.path); it != notes_.end()) {
        for (const std::string& line : it->second) out += indent + "  # " + line + "\n";
      }
      continue;
    }
    auto it = values_.find(field.path);
    if (it == values_.end()) continue;
    out += indent + field.key + ": " + it->second.yaml;
    if (!it->second.source.empty()) out += "  # " + it->second.source;
    out += "\n";
  }
  return out;
}

std::string YamlInt(int64_t value) { return std::to_string(value); }

std::string YamlFloat(double value) {
  if (std::isnan(value)) return ".nan";
  if (std::isinf(value)) return value > 0 ? ".inf" : "-.inf";
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  std::string text = buffer;
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";
  return text;
}

std::string YamlString(std::string_view text) {
  if (IsPlainSafe(text)) return std::string(text);
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", c);
      out += escaped;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

void SpecBuilder::EraseSection(const std::string& prefix, const std::string& keep) {
  for (auto it = values_.begin(); it != values_.end();) {
    const bool under = it->first.starts_with(prefix + ".") && it->first != keep;
    it = under ? values_.erase(it) : std::next(it);
  }
}

}  // namespace accel::importers
