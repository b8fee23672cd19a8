// accel_spec_gen: writes the job JSON Schema, the Markdown reference of every job-file key and
// the C++ source that embeds the schema into the binary, all from the field registry
// (spec/field_registry.cc), the single source of the job spec.
//
//   accel_spec_gen [--schema OUT.json] [--reference OUT.md] [--embed TEMPLATE.cc.in OUT.cc]
//   accel_spec_gen --check DIR CHECKED_IN_SCHEMA CHECKED_IN_REFERENCE [--refresh-hint TEXT]
//
// The build runs it to produce the embedded schema (schemas/CMakeLists.txt); the target
// accel_spec_refresh runs it to rewrite the checked-in schemas/accel-job.schema.json and
// docs/job-spec-reference.md; the CTest test spec_generated_files_up_to_date runs it with
// --check, which writes fresh copies into DIR and fails when the checked-in files differ.
//
// This program links only accel_spec_fields (the registry), never accel_spec or accel_schemas:
// accel_schemas embeds what this program writes, and accel_spec links accel_schemas.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/field_registry.h"

namespace accel::spec {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kEmbedPlaceholder = "@ACCEL_JOB_SCHEMA_TEXT@";
constexpr std::string_view kEmbedDelimiter = ")accel_schema\"";
constexpr std::string_view kDefaultRefreshHint =
    "cmake --build build-core --target accel_spec_refresh";

// ---------------------------------------------------------------------------------------------
// JSON Schema

// Bounds are written as integers when they are whole numbers (`"minimum": 0`, not 0.0).
Json Bound(double value) {
  if (std::nearbyint(value) == value && std::fabs(value) < 9.0e18) {
    return Json(static_cast<int64_t>(value));
  }
  return Json(value);
}

void AddBounds(const FieldInfo& field, Json& node) {
  if (field.minimum) node[field.exclusive_minimum ? "exclusiveMinimum" : "minimum"] = Bound(*field.minimum);
  if (field.maximum) node[field.exclusive_maximum ? "exclusiveMaximum" : "maximum"] = Bound(*field.maximum);
}

// An integer that can take one value only (`version`).
bool IsConst(const FieldInfo& field) {
  return field.kind == FieldKind::kInteger && field.minimum && field.maximum &&
         *field.minimum == *field.maximum && !field.exclusive_minimum && !field.exclusive_maximum;
}

Json SectionSchema(const std::string& path, const std::string& description);

Json FieldSchema(const FieldInfo& field) {
  if (field.kind == FieldKind::kSection) return SectionSchema(field.path, field.description);
  Json node;
  node["description"] = field.description;
  Json base;  // the constraints on a value that is not `auto`
  switch (field.kind) {
    case FieldKind::kSection:
      break;
    case FieldKind::kInteger:
      base["type"] = "integer";
      if (IsConst(field)) {
        base["const"] = Bound(*field.minimum);
      } else {
        AddBounds(field, base);
      }
      break;
    case FieldKind::kNumber:
      base["type"] = "number";
      AddBounds(field, base);
      break;
    case FieldKind::kBoolean:
      base["type"] = "boolean";
      break;
    case FieldKind::kString:
      base["type"] = "string";
      if (field.non_empty) base["minLength"] = 1;
      if (field.max_bytes > 0) base["maxLength"] = field.max_bytes;
      if (!field.pattern.empty()) base["pattern"] = field.pattern;
      if (field.contained_path) base["not"] = Json{{"pattern", kParentComponentPattern}};
      break;
    case FieldKind::kEnum:
      base["type"] = "string";
      base["enum"] = field.enum_values;
      break;
    case FieldKind::kSize: {
      Json bytes;
      bytes["type"] = "integer";
      AddBounds(field, bytes);
      Json options = Json::array({bytes, Json{{"type", "string"}, {"pattern", kSizePattern}}});
      if (field.allows_auto) options.push_back(Json{{"const", "auto"}});
      node["anyOf"] = std::move(options);
      break;
    }
    case FieldKind::kNumberPair: {
      base["type"] = "array";
      Json item;
      item["type"] = "number";
      AddBounds(field, item);
      base["items"] = std::move(item);
      base["minItems"] = 2;
      base["maxItems"] = 2;
      break;
    }
  }
  if (field.kind != FieldKind::kSize) {
    if (field.allows_auto) {
      node["anyOf"] = Json::array({base, Json{{"const", "auto"}}});
    } else {
      for (auto& [key, value] : base.items()) node[key] = value;
    }
  }
  if (!field.default_json.empty()) node["default"] = Json::parse(field.default_json);
  return node;
}

// The section's properties, `required`, and the conditional requirements of its keys.
Json SectionSchema(const std::string& path, const std::string& description) {
  Json node;
  if (path.empty()) {
    const JobDocumentInfo& doc = JobDocument();
    node["$schema"] = doc.schema_uri;
    node["title"] = doc.title;
    node["description"] = doc.description;
  } else {
    node["description"] = description;
  }
  node["type"] = "object";
  std::vector<std::string> required;
  Json properties = Json::object();
  // Keys required unless a sibling is present, grouped by that sibling; keys required when a
  // sibling has a value, grouped by (sibling, value, unless).
  std::vector<std::pair<std::string, std::vector<std::string>>> unless_groups;
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> if_groups;
  for (const std::string& key : ChildKeys(path)) {
    const FieldInfo* field = FindField(JoinPath(path, key));
    if (field->required) required.push_back(key);
    properties[key] = FieldSchema(*field);
    if (!field->required_if_key.empty()) {
      std::vector<std::string> condition = {field->required_if_key, field->required_if_value,
                                            field->required_unless};
      auto it = if_groups.begin();
      while (it != if_groups.end() && it->first != condition) ++it;
      if (it == if_groups.end()) it = if_groups.insert(it, {condition, {}});
      it->second.push_back(key);
    } else if (!field->required_unless.empty()) {
      auto it = unless_groups.begin();
      while (it != unless_groups.end() && it->first != field->required_unless) ++it;
      if (it == unless_groups.end()) it = unless_groups.insert(it, {field->required_unless, {}});
      it->second.push_back(key);
    }
  }
  if (!required.empty()) node["required"] = required;
  node["properties"] = std::move(properties);
  node["additionalProperties"] = false;

  std::vector<Json> clauses;
  for (const auto& [sibling, keys] : unless_groups) {
    clauses.push_back(Json{{"anyOf", Json::array({Json{{"required", Json::array({sibling})}},
                                                  Json{{"required", keys}}})}});
  }
  for (const auto& [condition, keys] : if_groups) {
    Json test;
    test["properties"] = Json{{condition[0], Json{{"const", condition[1]}}}};
    test["required"] = Json::array({condition[0]});
    if (!condition[2].empty()) {
      test["not"] = Json{{"required", Json::array({condition[2]})}};
    }
    clauses.push_back(Json{{"if", test}, {"then", Json{{"required", keys}}}});
  }
  // One `anyOf` and one `if`/`then` fit into the section itself; more need an `allOf`.
  if (unless_groups.size() <= 1 && if_groups.size() <= 1) {
    for (const Json& clause : clauses) {
      for (auto& [key, value] : clause.items()) node[key] = value;
    }
  } else {
    node["allOf"] = clauses;
  }
  return node;
}

std::string GenerateSchema() { return SectionSchema("", "").dump(2) + "\n"; }

// ---------------------------------------------------------------------------------------------
// Markdown reference

// `<` starts HTML in Markdown ("runs/<name>/ckpt"); escape it outside code spans.
std::string Prose(std::string_view text) {
  std::string out;
  bool in_code = false;
  for (char c : text) {
    if (c == '`') in_code = !in_code;
    if (c == '<' && !in_code) out += '\\';
    out += c;
  }
  return out;
}

// A table cell: '|' would end it.
std::string Cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string Code(std::string_view text) { return "`" + std::string(text) + "`"; }

std::string TypeName(const FieldInfo& field) {
  switch (field.kind) {
    case FieldKind::kSection: return "section";
    case FieldKind::kInteger: return "integer";
    case FieldKind::kNumber: return "number";
    case FieldKind::kBoolean: return "boolean";
    case FieldKind::kString: return "string";
    case FieldKind::kEnum: return "enum";
    case FieldKind::kSize: return "size";
    case FieldKind::kNumberPair: return "list of 2 numbers";
  }
  return "?";
}

std::string Number(double value) {
  Json bound = Bound(value);
  return bound.dump();
}

// "1 <= x <= 65536", "x > 0", "0 <= x < 1"; "" without bounds.
std::string RangeText(const FieldInfo& field, const char* variable) {
  std::string out;
  if (field.minimum && field.maximum) {
    out = Number(*field.minimum) + (field.exclusive_minimum ? " < " : " <= ") + variable +
          (field.exclusive_maximum ? " < " : " <= ") + Number(*field.maximum);
  } else if (field.minimum) {
    out = std::string(variable) + (field.exclusive_minimum ? " > " : " >= ") + Number(*field.minimum);
  } else if (field.maximum) {
    out = std::string(variable) + (field.exclusive_maximum ? " < " : " <= ") + Number(*field.maximum);
  }
  return out;
}

// The default as written in YAML: strings unquoted.
std::string DefaultText(const FieldInfo& field) {
  if (field.default_json.empty()) return "";
  Json value = Json::parse(field.default_json);
  if (value.is_string()) return value.get<std::string>();
  return field.default_json;
}

// The outermost optional section around `field`, or "" when every enclosing section is required.
std::string OptionalAncestor(const FieldInfo& field) {
  std::string found;
  for (std::string parent = field.parent; !parent.empty();) {
    const FieldInfo* section = FindField(parent);
    if (section != nullptr && !section->required) found = parent;
    parent = section == nullptr ? "" : section->parent;
  }
  return found;
}

std::string RequiredText(const FieldInfo& field) {
  auto sibling = [&](const std::string& key) { return Code(JoinPath(field.parent, key)); };
  if (field.required) {
    std::string optional = OptionalAncestor(field);
    return optional.empty() ? "yes" : "yes, when " + Code(optional) + " is given";
  }
  if (!field.required_if_key.empty()) {
    std::string out = "when " + sibling(field.required_if_key) + " is " +
                      Code(field.required_if_value);
    if (!field.required_unless.empty()) out += ", unless " + sibling(field.required_unless) + " is given";
    return out;
  }
  if (!field.required_unless.empty()) return "unless " + sibling(field.required_unless) + " is given";
  return "no";
}

// The summary table's short form of the range or the allowed values.
std::string ValuesText(const FieldInfo& field) {
  if (IsConst(field)) return Code(Number(*field.minimum));
  if (!field.enum_values.empty()) {
    std::string out;
    for (const std::string& value : field.enum_values) out += (out.empty() ? "" : ", ") + Code(value);
    return out;
  }
  std::string range = RangeText(field, field.kind == FieldKind::kSize ? "bytes" : "x");
  if (range.empty()) return "";
  return (field.kind == FieldKind::kNumberPair ? "each " : "") + Code(range);
}

void FieldDetails(const FieldInfo& field, const std::string& heading, std::ostream& out) {
  out << heading << " " << Code(field.path) << "\n\n";
  out << Prose(field.description) << "\n\n";
  out << "- Type: " << TypeName(field);
  if (field.kind == FieldKind::kSize) {
    out << " (a number of bytes, or a string such as `8GiB` or `512MB`: units B, KB/kB, MB, GB, "
           "TB (powers of 1000) and KiB, MiB, GiB, TiB (powers of 1024))";
  }
  out << "\n";
  if (IsConst(field)) {
    out << "- Value: always " << Code(Number(*field.minimum)) << "\n";
  } else {
    std::string range = RangeText(field, field.kind == FieldKind::kSize ? "bytes" : "x");
    if (!range.empty()) {
      out << (field.kind == FieldKind::kNumberPair ? "- Range of each item: " : "- Range: ")
          << Code(range);
      if (field.maximum_is_limit) out << " (the maximum is a resource limit, spec/limits.h)";
      out << "\n";
    }
  }
  if (!field.enum_values.empty()) {
    out << "- Allowed values:";
    for (size_t i = 0; i < field.enum_values.size(); ++i) {
      out << (i == 0 ? " " : ", ") << Code(field.enum_values[i]);
    }
    out << "\n";
  }
  if (field.kind == FieldKind::kString) {
    std::vector<std::string> rules;
    if (field.non_empty) rules.push_back("non-empty");
    if (field.max_bytes > 0) rules.push_back("at most " + std::to_string(field.max_bytes) + " bytes");
    if (!field.pattern.empty()) rules.push_back("matches " + Code(field.pattern));
    if (field.contained_path) rules.push_back("no `..` path components");
    if (!rules.empty()) {
      out << "- Format:";
      for (size_t i = 0; i < rules.size(); ++i) out << (i == 0 ? " " : "; ") << rules[i];
      out << "\n";
    }
  }
  out << "- `auto` allowed: " << (field.allows_auto ? "yes" : "no") << "\n";
  out << "- Required: " << RequiredText(field) << "\n";
  std::string default_text = DefaultText(field);
  out << "- Default: " << (default_text.empty() ? "—" : Code(default_text)) << "\n\n";
}

// A section's heading and description, its own keys, then its subsections.
void SectionDetails(const std::string& path, int level, std::ostream& out) {
  const std::string heading(static_cast<size_t>(level), '#');
  if (path.empty()) {
    out << heading << " Top-level keys\n\n";
  } else {
    const FieldInfo* section = FindField(path);
    out << heading << " " << Code(path) << "\n\n" << Prose(section->description) << "\n\n";
    out << "Required: " << RequiredText(*section) << ".\n\n";
  }
  std::vector<std::string> subsections;
  for (const std::string& key : ChildKeys(path)) {
    const FieldInfo* field = FindField(JoinPath(path, key));
    if (field->kind == FieldKind::kSection) {
      subsections.push_back(field->path);
    } else {
      FieldDetails(*field, heading + "#", out);
    }
  }
  for (const std::string& sub : subsections) SectionDetails(sub, path.empty() ? level : level + 1, out);
}

std::string GenerateReference() {
  std::ostringstream out;
  const JobDocumentInfo& doc = JobDocument();
  out << "<!-- Generated by accel_spec_gen from spec/field_registry.cc; do not edit. Refresh with:\n"
         "     "
      << kDefaultRefreshHint << " -->\n";
  out << "# Job spec reference\n\n";
  out << Prose(doc.description) << "\n\n";
  out << "Every key a job file may contain. This page and the JSON Schema "
         "(`schemas/accel-job.schema.json`, draft-07, also embedded into `accel` and printed by "
         "`accel schema`) are generated from one source, the field registry in "
         "`spec/field_registry.cc`, which also drives the loader and `--set` overrides. Ranges "
         "marked as resource limits are accel's bounds from `spec/limits.h`. Cross-field rules "
         "(for example that the parallel degrees multiply to the world size) are checked by "
         "`accel validate` and `accel plan`, and are described with the keys they involve.\n\n";
  out << "## Adding a field\n\n"
         "1. Add the member to its struct in `spec/job_spec.h`; its initializer is the default.\n"
         "2. Add one entry to `BuildFields()` in `spec/field_registry.cc`: path, kind, range or "
         "enum values, the store function into `JobSpec`, `.Doc(...)` with the description and "
         "`.Default(...)` with the same default as JSON.\n"
         "3. Use it (planner, executor, ...), then refresh the generated files and commit them:\n\n"
         "   ```sh\n"
         "   " << kDefaultRefreshHint << "\n"
         "   ```\n\n"
         "   The test `spec_generated_files_up_to_date` fails while `schemas/accel-job.schema.json` "
         "or this page differs from what the registry generates.\n\n";
  out << "## Summary\n\n";
  out << "| Key | Type | Range or values | Default | `auto` | Required |\n";
  out << "|---|---|---|---|---|---|\n";
  for (const FieldInfo& field : JobFields()) {
    std::string default_text = DefaultText(field);
    out << "| " << Cell(Code(field.path)) << " | " << Cell(TypeName(field)) << " | "
        << Cell(ValuesText(field)) << " | "
        << (default_text.empty() ? "" : Cell(Code(default_text))) << " | "
        << (field.allows_auto ? "yes" : "") << " | " << Cell(RequiredText(field)) << " |\n";
  }
  out << "\n";
  SectionDetails("", 2, out);
  std::string text = out.str();
  while (text.size() >= 2 && text.compare(text.size() - 2, 2, "\n\n") == 0) text.pop_back();
  return text;
}

// ---------------------------------------------------------------------------------------------
// Files

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool WriteFile(const std::string& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    std::cerr << "accel_spec_gen: cannot write " << path << "\n";
    return false;
  }
  return true;
}

bool WriteEmbedded(const std::string& template_path, const std::string& out_path,
                   const std::string& schema) {
  std::optional<std::string> text = ReadFile(template_path);
  if (!text) {
    std::cerr << "accel_spec_gen: cannot read " << template_path << "\n";
    return false;
  }
  if (schema.find(kEmbedDelimiter) != std::string::npos) {
    std::cerr << "accel_spec_gen: the schema contains the raw-string delimiter used to embed it\n";
    return false;
  }
  size_t at = text->find(kEmbedPlaceholder);
  if (at == std::string::npos) {
    std::cerr << "accel_spec_gen: " << template_path << " has no " << kEmbedPlaceholder << "\n";
    return false;
  }
  text->replace(at, kEmbedPlaceholder.size(), schema);
  return WriteFile(out_path, *text);
}

// 1-based number of the first line where `a` and `b` differ.
size_t FirstDifferentLine(const std::string& a, const std::string& b) {
  size_t line = 1;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] != b[i]) return line;
    if (a[i] == '\n') ++line;
  }
  return line;
}

// Writes the generated files into `dir` and compares the checked-in copies with them.
bool Check(const std::string& dir, const std::string& schema_path,
           const std::string& reference_path, const std::string& refresh_hint) {
  const std::pair<std::string, std::string> files[] = {
      {schema_path, GenerateSchema()},
      {reference_path, GenerateReference()},
  };
  bool ok = true;
  for (const auto& [checked_in, generated] : files) {
    std::string fresh = (std::filesystem::path(dir) / std::filesystem::path(checked_in).filename())
                            .string();
    if (!WriteFile(fresh, generated)) return false;
    std::optional<std::string> current = ReadFile(checked_in);
    if (!current) {
      std::cerr << checked_in << " is missing; the field registry generates it.\n";
      ok = false;
    } else if (*current != generated) {
      std::cerr << checked_in
                << " is out of date: it differs from what spec/field_registry.cc generates "
                   "(first difference on line "
                << FirstDifferentLine(*current, generated) << "; compare with " << fresh << ").\n";
      ok = false;
    } else {
      std::cout << checked_in << " is up to date\n";
    }
  }
  if (!ok) {
    std::cerr << "\nThe job spec is declared once, in spec/field_registry.cc; the checked-in "
                 "schema and reference page are generated from it. Refresh them with\n\n    "
              << refresh_hint << "\n\nand commit the result.\n";
  }
  return ok;
}

int Usage() {
  std::cerr << "usage: accel_spec_gen [--schema OUT.json] [--reference OUT.md] "
               "[--embed TEMPLATE OUT.cc]\n"
               "       accel_spec_gen --check DIR SCHEMA.json REFERENCE.md [--refresh-hint TEXT]\n";
  return 2;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return Usage();
  std::string schema_out, reference_out, embed_template, embed_out;
  std::string check_dir, check_schema, check_reference;
  std::string refresh_hint(kDefaultRefreshHint);
  for (size_t i = 0; i < args.size(); ++i) {
    auto take = [&](std::string& into) {
      if (i + 1 >= args.size()) return false;
      into = args[++i];
      return true;
    };
    if (args[i] == "--schema") {
      if (!take(schema_out)) return Usage();
    } else if (args[i] == "--reference") {
      if (!take(reference_out)) return Usage();
    } else if (args[i] == "--embed") {
      if (!take(embed_template) || !take(embed_out)) return Usage();
    } else if (args[i] == "--check") {
      if (!take(check_dir) || !take(check_schema) || !take(check_reference)) return Usage();
    } else if (args[i] == "--refresh-hint") {
      if (!take(refresh_hint)) return Usage();
    } else {
      return Usage();
    }
  }
  const std::string schema = GenerateSchema();
  bool ok = true;
  if (!schema_out.empty()) ok = WriteFile(schema_out, schema) && ok;
  if (!reference_out.empty()) ok = WriteFile(reference_out, GenerateReference()) && ok;
  if (!embed_out.empty()) ok = WriteEmbedded(embed_template, embed_out, schema) && ok;
  if (!check_dir.empty()) ok = Check(check_dir, check_schema, check_reference, refresh_hint) && ok;
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace accel::spec

int main(int argc, char** argv) {
  try {
    return accel::spec::Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "accel_spec_gen: " << e.what() << "\n";
    return 1;
  }
}
