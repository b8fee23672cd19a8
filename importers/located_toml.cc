#include "importers/located_toml.h"

#include <algorithm>
#include <sstream>
#include <toml++/toml.h>

#include "common/diag_codes.h"
#include "importers/spec_builder.h"

namespace accel::importers {
namespace {

SourceLocation Location(const toml::source_region& region) {
  return {static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
}

class Converter {
 public:
  explicit Converter(spec::YamlDocument& document) : document_(document) {}

  const spec::YamlNode* Convert(const toml::node& node) {
    spec::YamlNode& out = document_.nodes.emplace_back();
    out.location = Location(node.source());
    if (const toml::table* table = node.as_table()) {
      out.kind = spec::YamlNode::Kind::kMapping;
      // toml::table iterates in key order; configs read best in document order.
      std::vector<std::pair<const toml::key*, const toml::node*>> entries;
      for (auto&& [key, value] : *table) entries.emplace_back(&key, &value);
      std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
        const auto& x = a.first->source().begin;
        const auto& y = b.first->source().begin;
        return x.line != y.line ? x.line < y.line : x.column < y.column;
      });
      for (const auto& [key, value] : entries) {
        spec::YamlNode& key_node = document_.nodes.emplace_back();
        key_node.location = Location(key->source());
        key_node.value = std::string(key->str());
        key_node.quoted = true;
        key_node.scalar_type = spec::ScalarType::kString;
        out.entries.push_back({&key_node, Convert(*value)});
      }
    } else if (const toml::array* array = node.as_array()) {
      out.kind = spec::YamlNode::Kind::kSequence;
      for (const toml::node& item : *array) out.items.push_back(Convert(item));
    } else {
      Scalar(node, out);
    }
    return &out;
  }

 private:
  static void Scalar(const toml::node& node, spec::YamlNode& out) {
    out.kind = spec::YamlNode::Kind::kScalar;
    if (auto v = node.value<std::string>(); v && node.is_string()) {
      out.value = *v;
      out.quoted = true;
      out.scalar_type = spec::ScalarType::kString;
    } else if (node.is_integer()) {
      out.value = std::to_string(node.as_integer()->get());
      out.scalar_type = spec::ScalarType::kInt;
    } else if (node.is_floating_point()) {
      out.value = YamlFloat(node.as_floating_point()->get());
      out.scalar_type = spec::ScalarType::kFloat;
    } else if (node.is_boolean()) {
      out.value = node.as_boolean()->get() ? "true" : "false";
      out.scalar_type = spec::ScalarType::kBool;
    } else {
      std::ostringstream text;
      if (node.is_date()) text << node.as_date()->get();
      else if (node.is_time()) text << node.as_time()->get();
      else if (node.is_date_time()) text << node.as_date_time()->get();
      out.value = text.str();
      out.quoted = true;
      out.scalar_type = spec::ScalarType::kString;
    }
  }

  spec::YamlDocument& document_;
};

}  // namespace

std::unique_ptr<spec::YamlDocument> ParseLocatedToml(std::string_view text,
                                                     const std::string& file,
                                                     DiagnosticSink& sink) {
  toml::table table;
  try {
    table = toml::parse(text, std::string_view(file));
  } catch (const toml::parse_error& e) {
    SourceLocation at = Location(e.source());
    if (!at.known()) at = {1, 1};
    sink.Error(codes::kImportSyntax, file, at, "",
               "not valid TOML: " + std::string(e.description()));
    return nullptr;
  }
  auto document = std::make_unique<spec::YamlDocument>();
  Converter converter(*document);
  document->root = converter.Convert(table);
  return document;
}

}  // namespace accel::importers
