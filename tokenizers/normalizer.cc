#include "tokenizers/normalizer.h"

#include <unicode/bytestream.h>
#include <unicode/normalizer2.h>
#include <unicode/unistr.h>

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tokenizers/json_fields.h"

namespace accel::tok {
namespace {

using Json = nlohmann::json;

// A Unicode normal form through ICU. Text whose bytes are all below 0xCC (code points below
// U+0300, where the first combining marks are) is already in every normal form it could be
// asked for except K-forms of Latin-1 compatibility characters, so only NFC/NFD skip it.
class UnicodeForm : public Normalizer {
 public:
  UnicodeForm(const icu::Normalizer2* form, bool compatibility) : form_(form), compatibility_(compatibility) {}

  void Apply(std::string& text) const override {
    if (!compatibility_) {
      bool simple = true;
      for (char c : text) simple = simple && static_cast<unsigned char>(c) < 0xCC;
      if (simple) return;
    }
    std::string out;
    icu::StringByteSink<std::string> sink(&out);
    UErrorCode status = U_ZERO_ERROR;
    form_->normalizeUTF8(0, icu::StringPiece(text.data(), static_cast<int32_t>(text.size())), sink, nullptr, status);
    if (U_SUCCESS(status)) text = std::move(out);
  }
  bool LineLocal() const override { return true; }

 private:
  const icu::Normalizer2* form_;
  bool compatibility_;
};

class Lowercase : public Normalizer {
 public:
  void Apply(std::string& text) const override {
    std::string out;
    icu::UnicodeString::fromUTF8(text).toLower().toUTF8String(out);
    text = std::move(out);
  }
  bool LineLocal() const override { return true; }
};

class Prepend : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void Apply(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }
  bool LineLocal() const override { return false; }

 private:
  std::string prefix_;
};

class Replace : public Normalizer {
 public:
  Replace(std::string from, std::string to) : from_(std::move(from)), to_(std::move(to)) {}
  void Apply(std::string& text) const override { text = absl::StrReplaceAll(text, {{from_, to_}}); }
  bool LineLocal() const override { return from_.find('\n') == std::string::npos; }

 private:
  std::string from_, to_;
};

class Sequence : public Normalizer {
 public:
  explicit Sequence(std::vector<std::unique_ptr<Normalizer>> steps) : steps_(std::move(steps)) {}
  void Apply(std::string& text) const override {
    for (const auto& step : steps_) step->Apply(text);
  }
  bool LineLocal() const override {
    for (const auto& step : steps_) {
      if (!step->LineLocal()) return false;
    }
    return true;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

absl::StatusOr<std::unique_ptr<Normalizer>> MakeUnicodeForm(const JsonDocument& doc, const FieldPath& field,
                                                            const std::string& type) {
  UErrorCode status = U_ZERO_ERROR;
  const icu::Normalizer2* form = type == "NFC"    ? icu::Normalizer2::getNFCInstance(status)
                                 : type == "NFD"  ? icu::Normalizer2::getNFDInstance(status)
                                 : type == "NFKC" ? icu::Normalizer2::getNFKCInstance(status)
                                                  : icu::Normalizer2::getNFKDInstance(status);
  if (U_FAILURE(status) || form == nullptr) {
    return doc.Error(field, absl::StrCat("ICU has no ", type, " normalizer: ", u_errorName(status)));
  }
  return std::make_unique<UnicodeForm>(form, type.size() == 4);  // NFKC, NFKD
}

}  // namespace

absl::StatusOr<std::unique_ptr<Normalizer>> MakeNormalizer(const JsonDocument& doc, const FieldPath& field) {
  if (absl::Status depth = CheckDepth(doc, field); !depth.ok()) return depth;
  absl::StatusOr<std::string> type = TypeOf(doc, field);
  if (!type.ok()) return type.status();
  if (*type == "NFC" || *type == "NFD" || *type == "NFKC" || *type == "NFKD") return MakeUnicodeForm(doc, field, *type);
  if (*type == "Lowercase") return std::make_unique<Lowercase>();
  if (*type == "Prepend") {
    absl::StatusOr<std::string> prepend = RequiredString(doc, Child(field, "prepend"));
    if (!prepend.ok()) return prepend.status();
    return std::make_unique<Prepend>(*prepend);
  }
  if (*type == "Replace") {
    absl::StatusOr<std::string> from = RequiredString(doc, Child(Child(field, "pattern"), "String"));
    if (!from.ok()) return from.status();
    absl::StatusOr<std::string> to = RequiredString(doc, Child(field, "content"));
    if (!to.ok()) return to.status();
    if (from->empty()) return doc.Error(Child(Child(field, "pattern"), "String"), "the pattern is empty");
    return std::make_unique<Replace>(*from, *to);
  }
  if (*type == "Sequence") {
    FieldPath list = Child(field, "normalizers");
    const Json* steps = doc.Find(list);
    if (steps == nullptr || !steps->is_array()) return doc.Error(list, "must be an array of normalizers");
    std::vector<std::unique_ptr<Normalizer>> built;
    for (size_t i = 0; i < steps->size(); ++i) {
      absl::StatusOr<std::unique_ptr<Normalizer>> step = MakeNormalizer(doc, Child(list, i));
      if (!step.ok()) return step.status();
      built.push_back(std::move(*step));
    }
    return std::make_unique<Sequence>(std::move(built));
  }
  return doc.Error(Child(field, "type"),
                   absl::StrCat("unsupported normalizer type '", *type,
                                "'; accel supports NFC, NFD, NFKC, NFKD, Lowercase, Prepend, Replace and Sequence"));
}

}  // namespace accel::tok
