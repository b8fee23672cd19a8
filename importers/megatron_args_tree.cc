// ParseMegatronArgs: the arguments read out of a launch script, as a located mapping.
#include "common/diag_codes.h"
#include "importers/megatron_importer.h"
#include "importers/shell_args.h"

namespace accel::importers {
namespace {

constexpr const char* kMegatronTool = "Megatron-LM";

spec::YamlNode& NewScalar(spec::YamlDocument& doc, const ShellWord& word) {
  spec::YamlNode& node = doc.nodes.emplace_back();
  node.kind = spec::YamlNode::Kind::kScalar;
  node.location = word.at;
  node.value = word.text;
  node.quoted = word.quoted;
  node.scalar_type = word.quoted ? spec::ScalarType::kString : spec::ClassifyPlainScalar(word.text);
  // An empty unquoted word cannot occur; a plain word of YAML's null spellings ("null", "~") is
  // still a word on a command line.
  if (node.scalar_type == spec::ScalarType::kNull) node.scalar_type = spec::ScalarType::kString;
  return node;
}

// The value node of `arg`: `true` for a switch, the word, or a list of the words.
const spec::YamlNode* ValueNode(spec::YamlDocument& doc, const ShellArg& arg) {
  if (arg.values.empty()) {
    spec::YamlNode& node = doc.nodes.emplace_back();
    node.location = arg.flag.at;
    node.value = "true";
    node.scalar_type = spec::ScalarType::kBool;
    return &node;
  }
  if (arg.values.size() == 1) return &NewScalar(doc, arg.values[0]);
  spec::YamlNode& list = doc.nodes.emplace_back();
  list.kind = spec::YamlNode::Kind::kSequence;
  list.location = arg.values[0].at;
  for (const ShellWord& w : arg.values) list.items.push_back(&NewScalar(doc, w));
  return &list;
}

// The first value word that refers to something the script does not set, or nullptr.
const ShellWord* UnresolvedValue(const ShellArg& arg) {
  for (const ShellWord& w : arg.values) {
    if (!w.unresolved.empty()) return &w;
  }
  return nullptr;
}

void WarnUnreadable(const ShellArg& arg, const std::string& file, DiagnosticSink& sink) {
  if (!arg.flag.unresolved.empty()) {
    sink.Warning(codes::kImportUnmappedKey, file, arg.flag.at, "",
                 std::string(kMegatronTool) + " key '" + arg.flag.text +
                     "' cannot be read: the script does not set " + arg.flag.unresolved +
                     ", so the arguments it holds are unknown; not imported");
    return;
  }
  const ShellWord& value = *UnresolvedValue(arg);
  sink.Warning(codes::kImportUnmappedKey, file, value.at, "",
               std::string(kMegatronTool) + " key '" + arg.flag.text + "' = \"" + value.text +
                   "\" refers to " + value.unresolved +
                   ", which the script does not set; not imported");
}

}  // namespace

std::unique_ptr<spec::YamlDocument> ParseMegatronArgs(std::string_view text, const std::string& file,
                                                      DiagnosticSink& sink) {
  ShellArgs args = ReadShellArgs(text);
  if (args.args.empty()) {
    sink.Error(codes::kImportUnknownFormat, file, SourceLocation{1, 1}, "",
               "no Megatron-LM arguments found: expected a launch command running a training "
               "script (pretrain_gpt.py) or lines of --flag value");
    return nullptr;
  }
  auto doc = std::make_unique<spec::YamlDocument>();
  spec::YamlNode& root = doc->nodes.emplace_back();
  root.kind = spec::YamlNode::Kind::kMapping;
  root.location = SourceLocation{1, 1};
  root.value = args.script;  // see ParseMegatronArgs: "" for an arguments file
  for (const ShellArg& arg : args.args) {
    if (!arg.flag.unresolved.empty() || UnresolvedValue(arg) != nullptr) {
      WarnUnreadable(arg, file, sink);
      continue;
    }
    ShellWord flag = arg.flag;
    flag.quoted = false;
    spec::YamlNode& key = NewScalar(*doc, flag);
    root.entries.push_back(spec::YamlEntry{&key, ValueNode(*doc, arg)});
  }
  for (const ShellArg& arg : args.skipped) {
    if (!arg.flag.unresolved.empty()) continue;
    sink.Warning(codes::kImportUnmappedKey, file, arg.flag.at, "",
                 std::string(kMegatronTool) + " key '" + arg.flag.text +
                     "' is in an elif/else branch, which accel does not read (it reads the first "
                     "branch of an if); not imported");
  }
  doc->root = &root;
  return doc;
}

}  // namespace accel::importers
