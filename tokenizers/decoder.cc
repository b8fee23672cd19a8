#include "tokenizers/decoder.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "common/utf8.h"
#include "tokenizers/byte_level.h"
#include "tokenizers/json_fields.h"
#include "tokenizers/tokenizer.h"

namespace accel::tok {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

// True when `text` is exactly one UTF-8 character.
bool OneCharacter(std::string_view text) {
  size_t leads = 0;
  for (char c : text) leads += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return leads == 1 && IsValidUtf8(text);
}

// Each token's characters mapped back to the bytes they stand for (a token with a character
// outside the alphabet, such as an added token with a space, stays as it is), all joined into one
// token and made valid UTF-8 (String::from_utf8_lossy).
class ByteLevelDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& token : tokens) {
      std::optional<std::string> raw = ByteLevelDecode(token);
      bytes += raw ? *raw : token;
    }
    tokens.assign(1, DecodeUtf8Lossy(bytes));
  }
};

// Replaces the String pattern in every token.
class ReplaceDecoder : public Decoder {
 public:
  ReplaceDecoder(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) token = absl::StrReplaceAll(token, {{from_, to_}});
  }

 private:
  std::string from_, to_;
};

// The byte of a "<0xXX>" token (six characters, two hex digits), if it is one.
std::optional<char> FallbackByte(const std::string& token) {
  if (token.size() != 6 || !token.starts_with("<0x") || token.back() != '>') return std::nullopt;
  int value = 0;
  for (char c : token.substr(3, 2)) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (digit < 0) return std::nullopt;
    value = value * 16 + digit;
  }
  return static_cast<char>(value);
}

// Runs of <0xXX> tokens become the text of their bytes, or one U+FFFD per byte when the run is not
// valid UTF-8 (decoders/byte_fallback.rs).
class ByteFallbackDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string run;
    size_t run_tokens = 0;
    auto flush = [&] {
      if (run_tokens == 0) return;
      if (IsValidUtf8(run)) {
        out.push_back(run);
      } else {
        for (size_t i = 0; i < run_tokens; ++i) out.emplace_back(kReplacementCharacter);
      }
      run.clear();
      run_tokens = 0;
    };
    for (std::string& token : tokens) {
      if (std::optional<char> byte = FallbackByte(token)) {
        run.push_back(*byte);
        ++run_tokens;
      } else {
        flush();
        out.push_back(std::move(token));
      }
    }
    flush();
    tokens = std::move(out);
  }
};

// All tokens joined into one.
class FuseDecoder : public Decoder {
 public:
  void DecodeChain(std::vector<std::string>& tokens) const override {
    std::string joined;
    for (const std::string& token : tokens) joined += token;
    tokens.assign(1, std::move(joined));
  }
};

// Removes up to `start` leading and `stop` trailing copies of one character from every token.
class StripDecoder : public Decoder {
 public:
  StripDecoder(std::string content, size_t start, size_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) {
      std::string_view rest = token;
      for (size_t i = 0; i < start_ && rest.starts_with(content_); ++i) rest.remove_prefix(content_.size());
      for (size_t i = 0; i < stop_ && rest.ends_with(content_); ++i) rest.remove_suffix(content_.size());
      token = std::string(rest);
    }
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

// The replacement character ("▁") becomes a space, except in the first token when a prefix space
// was prepended (prepend_scheme always or first), where it is dropped (decoders/metaspace.rs).
class MetaspaceDecoder : public Decoder {
 public:
  MetaspaceDecoder(std::string replacement, bool prepended)
      : replacement_(std::move(replacement)), prepended_(prepended) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      tokens[i] = absl::StrReplaceAll(tokens[i], {{replacement_, i == 0 && prepended_ ? "" : " "}});
    }
  }

 private:
  std::string replacement_;
  bool prepended_;
};

class SequenceDecoder : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> steps) : steps_(std::move(steps)) {}
  void DecodeChain(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->DecodeChain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

// A count of Strip: an integer from 0.
absl::StatusOr<size_t> StripCount(const JsonDocument& doc, const FieldPath& field) {
  const Json* value = doc.Find(field);
  if (value == nullptr) return doc.Error(field, "is missing");
  if (!value->is_number_unsigned()) return doc.Error(field, "must be an integer from 0");
  return value->get<size_t>();
}

absl::StatusOr<std::unique_ptr<Decoder>> MakeStrip(const JsonDocument& doc, const FieldPath& field) {
  absl::StatusOr<std::string> content = RequiredString(doc, Child(field, "content"));
  if (!content.ok()) return content.status();
  if (!OneCharacter(*content)) {
    return doc.Error(Child(field, "content"), "must be one character");
  }
  absl::StatusOr<size_t> start = StripCount(doc, Child(field, "start"));
  if (!start.ok()) return start.status();
  absl::StatusOr<size_t> stop = StripCount(doc, Child(field, "stop"));
  if (!stop.ok()) return stop.status();
  return std::make_unique<StripDecoder>(*content, *start, *stop);
}

absl::StatusOr<std::unique_ptr<Decoder>> MakeMetaspace(const JsonDocument& doc, const FieldPath& field) {
  std::string replacement = "\xE2\x96\x81";  // U+2581, "▁"
  if (doc.Find(Child(field, "replacement")) != nullptr) {
    absl::StatusOr<std::string> read = RequiredString(doc, Child(field, "replacement"));
    if (!read.ok()) return read.status();
    if (!OneCharacter(*read)) return doc.Error(Child(field, "replacement"), "must be one character");
    replacement = *read;
  }
  // prepend_scheme (tokenizers >= 0.15) or the older add_prefix_space; both default to prepending.
  bool prepended = true;
  if (doc.Find(Child(field, "prepend_scheme")) != nullptr) {
    absl::StatusOr<std::string> scheme = RequiredString(doc, Child(field, "prepend_scheme"));
    if (!scheme.ok()) return scheme.status();
    if (*scheme != "always" && *scheme != "first" && *scheme != "never") {
      return doc.Error(Child(field, "prepend_scheme"), "must be always, first or never");
    }
    prepended = *scheme != "never";
  } else {
    absl::StatusOr<bool> add = OptionalBool(doc, Child(field, "add_prefix_space"), true);
    if (!add.ok()) return add.status();
    prepended = *add;
  }
  return std::make_unique<MetaspaceDecoder>(replacement, prepended);
}

absl::StatusOr<std::unique_ptr<Decoder>> MakeReplace(const JsonDocument& doc, const FieldPath& field) {
  FieldPath pattern = Child(Child(field, "pattern"), "String");
  absl::StatusOr<std::string> from = RequiredString(doc, pattern);
  if (!from.ok()) return from.status();
  if (from->empty()) return doc.Error(pattern, "the pattern is empty");
  absl::StatusOr<std::string> to = RequiredString(doc, Child(field, "content"));
  if (!to.ok()) return to.status();
  return std::make_unique<ReplaceDecoder>(*from, *to);
}

absl::StatusOr<std::unique_ptr<Decoder>> MakeSequence(const JsonDocument& doc, const FieldPath& field) {
  FieldPath list = Child(field, "decoders");
  const Json* steps = doc.Find(list);
  if (steps == nullptr || !steps->is_array()) return doc.Error(list, "must be an array of decoders");
  std::vector<std::unique_ptr<Decoder>> built;
  for (size_t i = 0; i < steps->size(); ++i) {
    absl::StatusOr<std::unique_ptr<Decoder>> step = MakeDecoder(doc, Child(list, i));
    if (!step.ok()) return step.status();
    built.push_back(std::move(*step));
  }
  return std::make_unique<SequenceDecoder>(std::move(built));
}

}  // namespace

absl::StatusOr<std::unique_ptr<Decoder>> MakeDecoder(const JsonDocument& doc, const FieldPath& field) {
  if (absl::Status depth = CheckDepth(doc, field); !depth.ok()) return depth;
  absl::StatusOr<std::string> type = TypeOf(doc, field);
  if (!type.ok()) return type.status();
  if (*type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (*type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (*type == "Fuse") return std::make_unique<FuseDecoder>();
  if (*type == "Strip") return MakeStrip(doc, field);
  if (*type == "Replace") return MakeReplace(doc, field);
  if (*type == "Metaspace") return MakeMetaspace(doc, field);
  if (*type == "Sequence") return MakeSequence(doc, field);
  return doc.Error(Child(field, "type"),
                   absl::StrCat("unsupported decoder type '", *type,
                                "'; accel supports ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip and "
                                "Sequence"));
}

}  // namespace accel::tok
