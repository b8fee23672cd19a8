#include "spec/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <sstream>

#include "common/diag_codes.h"

namespace accel::spec {
namespace {

SourceLocation FromMark(const YAML::Mark& mark) {
  if (mark.line < 0 || mark.column < 0) return {};
  return {mark.line + 1, mark.column + 1};
}

bool IsDigits(std::string_view s, bool (*pred)(char)) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), pred);
}

bool IsDec(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDec(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsOct(char c) { return c >= '0' && c <= '7'; }

// Thrown by the event handler to stop yaml-cpp once a limit is hit; never leaves this file.
struct StopParsing {};

// Builds the located tree from parser events and enforces the limits as it goes, so a
// billion-laughs document is rejected after reading it once, never after expanding it.
class TreeBuilder : public YAML::EventHandler {
 public:
  TreeBuilder(std::string_view text, const std::string& file, DiagnosticSink& sink,
              const YamlLimits& limits, YamlDocument& document)
      : text_(text), file_(file), sink_(sink), limits_(limits), document_(document) {}

  int documents() const { return documents_; }
  bool failed() const { return failed_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    ++documents_;
    if (documents_ == 2) {
      sink_.Error(codes::kMultipleDocuments, file_, FromMark(mark), "",
                  "file contains more than one YAML document; put each job in its own file");
      failed_ = true;
      throw StopParsing{};
    }
  }
  void OnDocumentEnd() override {}

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    YamlNode& node = NewNode(YamlNode::Kind::kScalar, mark, anchor);
    node.scalar_type = ScalarType::kNull;
    // yaml-cpp puts an empty value's mark on the next token; an explicit `~`/`null` starts at
    // the mark. Only the explicit form keeps its own location (see Attach).
    implicit_null_ = !IsExplicitNull(mark);
    Attach(&node);
    implicit_null_ = false;
  }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    YamlNode& node = NewNode(YamlNode::Kind::kScalar, mark, 0);
    if (it == anchors_.end() || it->second.open) {
      std::string name = it == anchors_.end() ? "" : it->second.name;
      sink_.Error(codes::kYamlSyntax, file_, FromMark(mark), "",
                  "alias '*" + name + "' refers to a node that contains it");
      failed_ = true;
      throw StopParsing{};
    }
    node.target = it->second.node;
    node.expanded_size = it->second.node->expanded_size;
    Count(node.expanded_size - 1, mark);
    Attach(&node);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    YamlNode& node = NewNode(YamlNode::Kind::kScalar, mark, anchor);
    node.value = value;
    // yaml-cpp tags plain scalars "?" and quoted/block scalars "!".
    node.quoted = tag != "?";
    node.scalar_type = node.quoted ? ScalarType::kString : ClassifyPlainScalar(value);
    Attach(&node);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(NewNode(YamlNode::Kind::kSequence, mark, anchor), mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }

  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(NewNode(YamlNode::Kind::kMapping, mark, anchor), mark, anchor);
  }
  void OnMapEnd() override { Close(); }

  void OnAnchor(const YAML::Mark&, const std::string& anchor_name) override {
    pending_anchor_name_ = anchor_name;
  }

 private:
  struct Frame {
    YamlNode* node;
    const YamlNode* pending_key;
    YAML::anchor_t anchor;
  };
  struct Anchor {
    const YamlNode* node;
    std::string name;
    bool open;
  };

  bool IsExplicitNull(const YAML::Mark& mark) const {
    if (mark.pos < 0 || static_cast<size_t>(mark.pos) >= text_.size()) return false;
    std::string_view rest = text_.substr(static_cast<size_t>(mark.pos));
    for (std::string_view word : {"~", "null", "Null", "NULL"}) {
      if (rest.substr(0, word.size()) == word) return true;
    }
    return false;
  }

  YamlNode& NewNode(YamlNode::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor) {
    Count(1, mark);
    YamlNode& node = document_.nodes.emplace_back();
    node.kind = kind;
    node.location = FromMark(mark);
    if (anchor != 0) {
      bool open = kind != YamlNode::Kind::kScalar;
      anchors_[anchor] = Anchor{&node, pending_anchor_name_, open};
    }
    pending_anchor_name_.clear();
    return node;
  }

  void Count(int64_t added, const YAML::Mark& mark) {
    total_nodes_ += added;
    if (total_nodes_ > limits_.max_nodes) {
      sink_.Error(codes::kTooManyNodes, file_, FromMark(mark), "",
                  "document has more than " + std::to_string(limits_.max_nodes) +
                      " nodes once aliases are expanded (an alias bomb?)");
      failed_ = true;
      throw StopParsing{};
    }
  }

  void Open(YamlNode& node, const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (static_cast<int>(stack_.size()) + 1 > limits_.max_depth) {
      sink_.Error(codes::kTooDeep, file_, FromMark(mark), "",
                  "nesting is deeper than " + std::to_string(limits_.max_depth) + " levels");
      failed_ = true;
      throw StopParsing{};
    }
    stack_.push_back({&node, nullptr, anchor});
  }

  void Close() {
    YamlNode* node = stack_.back().node;
    YAML::anchor_t anchor = stack_.back().anchor;
    stack_.pop_back();
    int64_t size = 1;
    for (const YamlEntry& e : node->entries) size += e.key->expanded_size + e.value->expanded_size;
    for (const YamlNode* item : node->items) size += item->expanded_size;
    node->expanded_size = std::min(size, limits_.max_nodes + 1);
    if (anchor != 0) anchors_[anchor].open = false;
    Attach(node);
  }

  void Attach(YamlNode* node) {
    if (stack_.empty()) {
      if (document_.root == nullptr) document_.root = node;
      return;
    }
    Frame& top = stack_.back();
    if (top.node->kind == YamlNode::Kind::kSequence) {
      top.node->items.push_back(node);
      return;
    }
    if (top.pending_key == nullptr) {
      top.pending_key = node;
      return;
    }
    // `key:` with nothing after it: point at the key, not at whatever token comes next.
    if (implicit_null_) node->location = top.pending_key->location;
    top.node->entries.push_back({top.pending_key, node});
    top.pending_key = nullptr;
  }

  std::string_view text_;
  const std::string& file_;
  DiagnosticSink& sink_;
  const YamlLimits& limits_;
  YamlDocument& document_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, Anchor> anchors_;
  std::string pending_anchor_name_;
  int64_t total_nodes_ = 0;
  int documents_ = 0;
  bool failed_ = false;
  bool implicit_null_ = false;
};

// yaml-cpp's messages are terse ("end of sequence flow not found"); keep them, but say what
// kind of error it is.
std::string SyntaxMessage(const std::string& msg) {
  std::string out = "invalid YAML: " + msg;
  while (!out.empty() && (out.back() == '.' || out.back() == ' ')) out.pop_back();
  return out;
}

}  // namespace

std::unique_ptr<YamlDocument> ParseYaml(std::string_view text, const std::string& file,
                                        DiagnosticSink& sink, const YamlLimits& limits) {
  auto document = std::make_unique<YamlDocument>();
  TreeBuilder builder(text, file, sink, limits, *document);
  std::istringstream stream{std::string(text)};
  try {
    YAML::Parser parser(stream);
    while (parser.HandleNextDocument(builder)) {
    }
  } catch (const StopParsing&) {
    return nullptr;
  } catch (const YAML::Exception& e) {
    sink.Error(codes::kYamlSyntax, file, FromMark(e.mark), "", SyntaxMessage(e.msg));
    return nullptr;
  }
  if (builder.failed()) return nullptr;
  if (document->root == nullptr || document->root->is_null()) {
    sink.Error(codes::kEmptyDocument, file, {}, "",
               "file has no content (it is empty or holds only comments)");
    return nullptr;
  }
  return document;
}

ScalarType ClassifyPlainScalar(std::string_view s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return ScalarType::kNull;
  if (s == "true" || s == "True" || s == "TRUE" || s == "false" || s == "False" || s == "FALSE") {
    return ScalarType::kBool;
  }
  std::string_view body = s;
  if (body.front() == '+' || body.front() == '-') body.remove_prefix(1);
  if (IsDigits(body, IsDec)) return ScalarType::kInt;
  if (s.substr(0, 2) == "0x" && IsDigits(s.substr(2), IsHex)) return ScalarType::kInt;
  if (s.substr(0, 2) == "0o" && IsDigits(s.substr(2), IsOct)) return ScalarType::kInt;
  for (std::string_view special : {".inf", ".Inf", ".INF"}) {
    if (body == special) return ScalarType::kFloat;
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return ScalarType::kFloat;
  // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
  size_t i = 0;
  size_t int_digits = 0, frac_digits = 0;
  while (i < body.size() && IsDec(body[i])) ++i, ++int_digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && IsDec(body[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return ScalarType::kString;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < body.size() && IsDec(body[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return ScalarType::kString;
  }
  return i == body.size() ? ScalarType::kFloat : ScalarType::kString;
}

bool ParseYamlInt(std::string_view text, int64_t* out) {
  std::string s(text);
  int base = 10;
  size_t start = 0;
  if (s.size() > 2 && s[0] == '0' && s[1] == 'x') base = 16, start = 2;
  if (s.size() > 2 && s[0] == '0' && s[1] == 'o') base = 8, start = 2;
  errno = 0;
  char* end = nullptr;
  long long value = std::strtoll(s.c_str() + start, &end, base);
  if (errno == ERANGE || end == s.c_str() + start || *end != '\0') return false;
  *out = value;
  return true;
}

bool ParseYamlFloat(std::string_view text, double* out) {
  std::string s(text);
  std::string body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.erase(0, 1);
  }
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    *out = negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
    return true;
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (ClassifyPlainScalar(text) == ScalarType::kInt) {
    int64_t integer = 0;
    if (ParseYamlInt(text, &integer)) {
      *out = static_cast<double>(integer);
      return true;
    }
  }
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0') return false;
  *out = value;
  return true;
}

std::string DescribeYamlType(const YamlNode& node) {
  const YamlNode& n = node.content();
  switch (n.kind) {
    case YamlNode::Kind::kMapping: return "mapping";
    case YamlNode::Kind::kSequence: return "list";
    case YamlNode::Kind::kScalar: break;
  }
  switch (n.scalar_type) {
    case ScalarType::kNull: return "null";
    case ScalarType::kBool: return "boolean";
    case ScalarType::kInt: return "integer";
    case ScalarType::kFloat: return "float";
    case ScalarType::kString: return "string";
  }
  return "string";
}

}  // namespace accel::spec
