#include "tokenizers/added_tokens.h"

#include <algorithm>

#include "tokenizers/json_fields.h"

namespace accel::tok {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

bool IsWordByte(char c) {
  unsigned char b = static_cast<unsigned char>(c);
  return b >= 0x80 || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '_';
}

}  // namespace

absl::StatusOr<std::vector<AddedToken>> ReadAddedTokens(const JsonDocument& doc) {
  FieldPath field = {"added_tokens"};
  std::vector<AddedToken> tokens;
  const nlohmann::json* list = doc.Find(field);
  if (list == nullptr) return tokens;
  if (!list->is_array()) return doc.Error(field, "must be an array of tokens");
  for (size_t i = 0; i < list->size(); ++i) {
    FieldPath entry = Child(field, i);
    AddedToken token;
    absl::StatusOr<std::string> content = RequiredString(doc, Child(entry, "content"));
    if (!content.ok()) return content.status();
    if (content->empty()) return doc.Error(Child(entry, "content"), "must not be empty");
    token.content = *content;
    absl::StatusOr<uint32_t> id = TokenId(doc, Child(entry, "id"));
    if (!id.ok()) return id.status();
    token.id = *id;
    for (auto [flag, name] : {std::pair{&token.special, "special"}, std::pair{&token.lstrip, "lstrip"},
                              std::pair{&token.rstrip, "rstrip"}, std::pair{&token.single_word, "single_word"}}) {
      absl::StatusOr<bool> value = OptionalBool(doc, Child(entry, name), false);
      if (!value.ok()) return value.status();
      *flag = *value;
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

AddedTokenSplitter::AddedTokenSplitter(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  for (uint32_t i = 0; i < tokens_.size(); ++i) {
    by_first_byte_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
    by_id_.emplace(tokens_[i].id, i);
  }
  for (auto& candidates : by_first_byte_) {
    std::stable_sort(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
      return tokens_[a].content.size() > tokens_[b].content.size();
    });
  }
}

const AddedToken* AddedTokenSplitter::MatchAt(std::string_view text, size_t pos) const {
  for (uint32_t index : by_first_byte_[static_cast<unsigned char>(text[pos])]) {
    const AddedToken& token = tokens_[index];
    if (text.compare(pos, token.content.size(), token.content) != 0) continue;
    if (token.single_word) {
      size_t end = pos + token.content.size();
      if ((pos > 0 && IsWordByte(text[pos - 1])) || (end < text.size() && IsWordByte(text[end]))) continue;
    }
    return &token;
  }
  return nullptr;
}

void AddedTokenSplitter::Split(std::string_view text, std::vector<Section>& out) const {
  if (tokens_.empty()) {
    if (!text.empty()) out.push_back({text, std::nullopt});
    return;
  }
  size_t plain_start = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    const AddedToken* token = MatchAt(text, pos);
    if (token == nullptr) {
      ++pos;
      continue;
    }
    size_t plain_end = pos;
    if (token->lstrip) {
      while (plain_end > plain_start && IsSpace(text[plain_end - 1])) --plain_end;
    }
    if (plain_end > plain_start) out.push_back({text.substr(plain_start, plain_end - plain_start), std::nullopt});
    out.push_back({text.substr(pos, token->content.size()), token->id});
    pos += token->content.size();
    if (token->rstrip) {
      while (pos < text.size() && IsSpace(text[pos])) ++pos;
    }
    plain_start = pos;
  }
  if (plain_start < text.size()) out.push_back({text.substr(plain_start), std::nullopt});
}

bool AddedTokenSplitter::LineLocal() const {
  for (const AddedToken& token : tokens_) {
    if (token.lstrip || token.content.find('\n') != std::string::npos) return false;
  }
  return true;
}

std::optional<uint32_t> AddedTokenSplitter::Find(std::string_view content) const {
  for (const AddedToken& token : tokens_) {
    if (token.content == content) return token.id;
  }
  return std::nullopt;
}

const AddedToken* AddedTokenSplitter::FindId(uint32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

}  // namespace accel::tok
