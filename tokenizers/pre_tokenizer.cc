#include "tokenizers/pre_tokenizer.h"

#include "absl/strings/str_cat.h"
#include "tokenizers/json_fields.h"
#include "tokenizers/regex.h"
#include "tokenizers/split_behavior.h"

namespace accel::tok {
namespace {

using Json = nlohmann::json;

// GPT-2's pattern, which ByteLevel applies when use_regex is true (tokenizers byte_level.rs).
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

// Patterns known never to join a newline to a following ASCII letter or digit: their matches
// that contain '\n' end in whitespace, and none looks behind. GPT-2's, Llama-3's, Qwen2's/Qwen3's.
bool KnownLineLocal(const std::string& pattern) {
  static const char* const kPatterns[] = {
      kGpt2Pattern,
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
      "[0-9]",
      "[0-9]+",
  };
  for (const char* known : kPatterns) {
    if (pattern == known) return true;
  }
  return false;
}

// Splits every piece at the matches of a pattern.
class Split : public PreTokenizer {
 public:
  Split(Regex regex, SplitBehavior behavior, bool invert, bool line_local)
      : regex_(std::move(regex)), behavior_(behavior), invert_(invert), line_local_(line_local) {}

  void Apply(Pieces& pieces) const override {
    std::vector<std::string_view> out;
    out.reserve(pieces.views.size() * 2);
    std::vector<Segment> segments;
    for (std::string_view piece : pieces.views) {
      segments.clear();
      size_t last = 0;
      regex_.ForEachMatch(piece, [&](size_t begin, size_t end) {
        if (begin > last) segments.push_back({last, begin, invert_});
        segments.push_back({begin, end, !invert_});
        last = end;
      });
      if (last < piece.size()) segments.push_back({last, piece.size(), invert_});
      for (const Segment& s : ApplySplitBehavior(segments, behavior_)) out.push_back(piece.substr(s.begin, s.end - s.begin));
    }
    pieces.views = std::move(out);
  }
  bool LineLocal() const override { return line_local_; }
  bool ByteLevel() const override { return false; }

 private:
  Regex regex_;
  SplitBehavior behavior_;
  bool invert_;
  bool line_local_;
};

// Adds the prefix space and splits with GPT-2's pattern; the byte mapping is the model's.
class ByteLevelStep : public PreTokenizer {
 public:
  ByteLevelStep(bool add_prefix_space, std::unique_ptr<Split> gpt2)
      : add_prefix_space_(add_prefix_space), gpt2_(std::move(gpt2)) {}

  void Apply(Pieces& pieces) const override {
    if (add_prefix_space_) {
      for (std::string_view& piece : pieces.views) {
        if (!piece.empty() && piece.front() != ' ') piece = pieces.owned.emplace_back(" " + std::string(piece));
      }
    }
    if (gpt2_ != nullptr) gpt2_->Apply(pieces);
  }
  bool LineLocal() const override { return !add_prefix_space_; }
  bool ByteLevel() const override { return true; }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Split> gpt2_;
};

class Sequence : public PreTokenizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void Apply(Pieces& pieces) const override {
    for (const auto& step : steps_) step->Apply(pieces);
  }
  bool LineLocal() const override {
    for (const auto& step : steps_) {
      if (!step->LineLocal()) return false;
    }
    return true;
  }
  bool ByteLevel() const override {
    for (const auto& step : steps_) {
      if (step->ByteLevel()) return true;
    }
    return false;
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakeSplit(const JsonDocument& doc, const FieldPath& field) {
  FieldPath pattern_field = Child(field, "pattern");
  const Json* pattern = doc.Find(pattern_field);
  if (pattern == nullptr || !pattern->is_object()) {
    return doc.Error(pattern_field, "must be an object {\"Regex\": ...} or {\"String\": ...}");
  }
  bool literal = pattern->contains("String");
  FieldPath text_field = Child(pattern_field, literal ? "String" : "Regex");
  absl::StatusOr<std::string> text = RequiredString(doc, text_field);
  if (!text.ok()) return text.status();
  absl::StatusOr<Regex> regex = Regex::Compile(*text, literal);
  if (!regex.ok()) return doc.Error(text_field, std::string(regex.status().message()));
  FieldPath behavior_field = Child(field, "behavior");
  absl::StatusOr<std::string> behavior_name = RequiredString(doc, behavior_field);
  if (!behavior_name.ok()) return behavior_name.status();
  std::optional<SplitBehavior> behavior = ParseSplitBehavior(*behavior_name);
  if (!behavior) {
    return doc.Error(behavior_field, absl::StrCat("unknown behavior '", *behavior_name,
                                                  "'; expected Removed, Isolated, MergedWithPrevious, "
                                                  "MergedWithNext or Contiguous"));
  }
  absl::StatusOr<bool> invert = OptionalBool(doc, Child(field, "invert"), false);
  if (!invert.ok()) return invert.status();
  bool line_local = !literal && !*invert && *behavior == SplitBehavior::kIsolated && KnownLineLocal(*text);
  return std::make_unique<Split>(std::move(*regex), *behavior, *invert, line_local);
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakeByteLevel(const JsonDocument& doc, const FieldPath& field) {
  absl::StatusOr<bool> prefix = OptionalBool(doc, Child(field, "add_prefix_space"), true);
  if (!prefix.ok()) return prefix.status();
  absl::StatusOr<bool> use_regex = OptionalBool(doc, Child(field, "use_regex"), true);
  if (!use_regex.ok()) return use_regex.status();
  std::unique_ptr<Split> gpt2;
  if (*use_regex) gpt2 = std::make_unique<Split>(*Regex::Compile(kGpt2Pattern), SplitBehavior::kIsolated, false, true);
  return std::make_unique<ByteLevelStep>(*prefix, std::move(gpt2));
}

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakeSequence(const JsonDocument& doc, const FieldPath& field) {
  FieldPath list = Child(field, "pretokenizers");
  const Json* steps = doc.Find(list);
  if (steps == nullptr || !steps->is_array()) return doc.Error(list, "must be an array of pre-tokenizers");
  std::vector<std::unique_ptr<PreTokenizer>> built;
  for (size_t i = 0; i < steps->size(); ++i) {
    absl::StatusOr<std::unique_ptr<PreTokenizer>> step = MakePreTokenizer(doc, Child(list, i));
    if (!step.ok()) return step.status();
    // The model maps bytes after the whole pipeline, so nothing may come after ByteLevel.
    if (i > 0 && built.back()->ByteLevel()) {
      return doc.Error(Child(list, i), "accel supports ByteLevel only as the last pre-tokenizer of a Sequence");
    }
    built.push_back(std::move(*step));
  }
  return std::make_unique<Sequence>(std::move(built));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const JsonDocument& doc, const FieldPath& field) {
  if (absl::Status depth = CheckDepth(doc, field); !depth.ok()) return depth;
  absl::StatusOr<std::string> type = TypeOf(doc, field);
  if (!type.ok()) return type.status();
  if (*type == "Split") return MakeSplit(doc, field);
  if (*type == "ByteLevel") return MakeByteLevel(doc, field);
  if (*type == "Sequence") return MakeSequence(doc, field);
  if (*type == "Digits") {
    absl::StatusOr<bool> individual = OptionalBool(doc, Child(field, "individual_digits"), false);
    if (!individual.ok()) return individual.status();
    return std::make_unique<Split>(*Regex::Compile(*individual ? "[0-9]" : "[0-9]+"), SplitBehavior::kIsolated, false, true);
  }
  return doc.Error(Child(field, "type"),
                   absl::StrCat("unsupported pre-tokenizer type '", *type,
                                "'; accel supports Split, ByteLevel, Digits and Sequence"));
}

}  // namespace accel::tok
