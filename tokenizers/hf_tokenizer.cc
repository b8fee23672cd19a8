#include "tokenizers/hf_tokenizer.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/utf8.h"

namespace accel::tok {

namespace {

std::atomic<uint64_t> next_instance{1};

}  // namespace

HfTokenizer::HfTokenizer(BpeModel model, AddedTokenSplitter added)
    : model_(std::move(model)), added_(std::move(added)), instance_(next_instance++) {}

absl::StatusOr<std::unique_ptr<HfTokenizer>> HfTokenizer::Parse(std::string file, std::string text) {
  absl::StatusOr<JsonDocument> doc = JsonDocument::Parse(std::move(file), std::move(text));
  if (!doc.ok()) return doc.status();
  if (!doc->root().is_object()) return doc->Error({}, "a tokenizer.json must hold a JSON object");
  std::unique_ptr<PreTokenizer> pre_tokenizer;
  if (doc->Find({"pre_tokenizer"}) != nullptr) {
    absl::StatusOr<std::unique_ptr<PreTokenizer>> made = MakePreTokenizer(*doc, {"pre_tokenizer"});
    if (!made.ok()) return made.status();
    pre_tokenizer = std::move(*made);
  }
  std::unique_ptr<Normalizer> normalizer;
  if (doc->Find({"normalizer"}) != nullptr) {
    absl::StatusOr<std::unique_ptr<Normalizer>> made = MakeNormalizer(*doc, {"normalizer"});
    if (!made.ok()) return made.status();
    normalizer = std::move(*made);
  }
  std::unique_ptr<Decoder> decoder;
  if (doc->Find({"decoder"}) != nullptr) {
    absl::StatusOr<std::unique_ptr<Decoder>> made = MakeDecoder(*doc, {"decoder"});
    if (!made.ok()) return made.status();
    decoder = std::move(*made);
  }
  if (doc->Find({"model"}) == nullptr) return doc->Error({"model"}, "is missing");
  bool byte_level = pre_tokenizer != nullptr && pre_tokenizer->ByteLevel();
  absl::StatusOr<BpeModel> model = BpeModel::FromJson(*doc, {"model"}, byte_level);
  if (!model.ok()) return model.status();
  absl::StatusOr<std::vector<AddedToken>> added = ReadAddedTokens(*doc);
  if (!added.ok()) return added.status();
  absl::StatusOr<SpecialWrap> wrap = ReadPostProcessor(*doc, {"post_processor"});
  if (!wrap.ok()) return wrap.status();

  uint32_t id_limit = model->id_limit();
  for (const AddedToken& token : *added) id_limit = std::max(id_limit, token.id + 1);
  for (uint32_t id : wrap->prefix) id_limit = std::max(id_limit, id + 1);
  for (uint32_t id : wrap->suffix) id_limit = std::max(id_limit, id + 1);
  std::unique_ptr<HfTokenizer> tokenizer(new HfTokenizer(std::move(*model), AddedTokenSplitter(std::move(*added))));
  tokenizer->normalizer_ = std::move(normalizer);
  tokenizer->pre_tokenizer_ = std::move(pre_tokenizer);
  tokenizer->decoder_ = std::move(decoder);
  tokenizer->wrap_ = std::move(*wrap);
  tokenizer->id_limit_ = id_limit;
  return tokenizer;
}

void HfTokenizer::EncodeSection(std::string_view text, WordCache& cache, std::vector<uint32_t>& out) const {
  std::string normalized;
  if (normalizer_ != nullptr) {
    normalized = std::string(text);
    normalizer_->Apply(normalized);
    text = normalized;
  }
  Pieces pieces;
  pieces.views.push_back(text);
  if (pre_tokenizer_ != nullptr) pre_tokenizer_->Apply(pieces);
  for (std::string_view piece : pieces.views) model_.Encode(piece, cache, out);
}

void HfTokenizer::EncodeInto(std::string_view text, std::vector<uint32_t>& out) const {
  // PCRE2 matches without re-checking UTF-8, so the text must be valid.
  std::string repaired;
  if (!IsValidUtf8(text)) {
    repaired = ReplaceInvalidUtf8(text);
    text = repaired;
  }
  // One word cache per thread, kept across calls (a corpus is encoded in many chunks); it belongs
  // to one tokenizer at a time.
  thread_local WordCache cache;
  thread_local uint64_t cache_owner = 0;
  if (cache_owner != instance_) {
    cache.Clear();
    cache_owner = instance_;
  }
  std::vector<Section> sections;
  added_.Split(text, sections);
  for (const Section& section : sections) {
    if (section.token) {
      out.push_back(*section.token);
    } else {
      EncodeSection(section.text, cache, out);
    }
  }
}

std::string HfTokenizer::DecodeIds(const std::vector<uint32_t>& ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (uint32_t id : ids) {
    if (const AddedToken* added = added_.FindId(id)) {
      if (!(skip_special_tokens && added->special)) tokens.push_back(added->content);
    } else if (const std::string* token = model_.TokenOf(id)) {
      tokens.push_back(*token);
    }
  }
  if (decoder_ == nullptr) return absl::StrJoin(tokens, " ");
  decoder_->DecodeChain(tokens);
  return absl::StrJoin(tokens, "");
}

bool HfTokenizer::SplitsAtLineStarts() const {
  // Without a pre-tokenizer a whole section is one BPE word, which a cut would change.
  return (normalizer_ == nullptr || normalizer_->LineLocal()) && pre_tokenizer_ != nullptr &&
         pre_tokenizer_->LineLocal() && added_.LineLocal();
}

std::string HfTokenizer::Describe() const {
  return absl::StrCat("tokenizer.json (BPE", pre_tokenizer_ != nullptr && pre_tokenizer_->ByteLevel() ? ", byte-level" : "",
                      ", ", id_limit_, " ids)");
}

}  // namespace accel::tok
