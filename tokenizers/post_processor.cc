#include "tokenizers/post_processor.h"

#include "absl/strings/str_cat.h"
#include "tokenizers/json_fields.h"

namespace accel::tok {
namespace {

using Json = nlohmann::json;

absl::StatusOr<SpecialWrap> ReadTemplate(const JsonDocument& doc, const FieldPath& field) {
  FieldPath single_field = Child(field, "single");
  const Json* single = doc.Find(single_field);
  if (single == nullptr || !single->is_array()) return doc.Error(single_field, "must be an array of template items");
  SpecialWrap wrap;
  bool after_sequence = false;
  for (size_t i = 0; i < single->size(); ++i) {
    FieldPath item = Child(single_field, i);
    if (doc.Find(Child(item, "Sequence")) != nullptr) {
      after_sequence = true;
      continue;
    }
    FieldPath name_field = Child(Child(item, "SpecialToken"), "id");
    absl::StatusOr<std::string> name = RequiredString(doc, name_field);
    if (!name.ok()) return doc.Error(item, "must be {\"SpecialToken\": {\"id\": ...}} or {\"Sequence\": ...}");
    FieldPath ids_field = {};
    ids_field = Child(Child(Child(field, "special_tokens"), *name), "ids");
    const Json* ids = doc.Find(ids_field);
    if (ids == nullptr || !ids->is_array()) {
      return doc.Error(name_field, absl::StrCat("special token '", *name, "' has no ids in ",
                                                FieldName(Child(field, "special_tokens"))));
    }
    for (size_t k = 0; k < ids->size(); ++k) {
      absl::StatusOr<uint32_t> id = TokenId(doc, Child(ids_field, k));
      if (!id.ok()) return id.status();
      (after_sequence ? wrap.suffix : wrap.prefix).push_back(*id);
    }
  }
  return wrap;
}

// RobertaProcessing / BertProcessing: "cls": ["<s>", 0], "sep": ["</s>", 2].
absl::StatusOr<SpecialWrap> ReadClsSep(const JsonDocument& doc, const FieldPath& field) {
  SpecialWrap wrap;
  for (const char* name : {"cls", "sep"}) {
    absl::StatusOr<uint32_t> id = TokenId(doc, Child(Child(field, name), "[1]"));
    if (!id.ok()) return doc.Error(Child(field, name), "must be a pair [token, id]");
    (std::string_view(name) == "cls" ? wrap.prefix : wrap.suffix).push_back(*id);
  }
  return wrap;
}

}  // namespace

absl::StatusOr<SpecialWrap> ReadPostProcessor(const JsonDocument& doc, const FieldPath& field) {
  if (absl::Status depth = CheckDepth(doc, field); !depth.ok()) return depth;
  if (doc.Find(field) == nullptr) return SpecialWrap{};
  absl::StatusOr<std::string> type = TypeOf(doc, field);
  if (!type.ok()) return type.status();
  if (*type == "ByteLevel") return SpecialWrap{};
  if (*type == "TemplateProcessing") return ReadTemplate(doc, field);
  if (*type == "RobertaProcessing" || *type == "BertProcessing") return ReadClsSep(doc, field);
  if (*type == "Sequence") {
    FieldPath list = Child(field, "processors");
    const Json* steps = doc.Find(list);
    if (steps == nullptr || !steps->is_array()) return doc.Error(list, "must be an array of post-processors");
    SpecialWrap wrap;
    for (size_t i = 0; i < steps->size(); ++i) {
      absl::StatusOr<SpecialWrap> step = ReadPostProcessor(doc, Child(list, i));
      if (!step.ok()) return step.status();
      wrap.prefix.insert(wrap.prefix.begin(), step->prefix.begin(), step->prefix.end());
      wrap.suffix.insert(wrap.suffix.end(), step->suffix.begin(), step->suffix.end());
    }
    return wrap;
  }
  return doc.Error(Child(field, "type"),
                   absl::StrCat("unsupported post-processor type '", *type,
                                "'; accel supports TemplateProcessing, ByteLevel, RobertaProcessing, "
                                "BertProcessing and Sequence"));
}

}  // namespace accel::tok
