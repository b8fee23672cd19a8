#include "tokenizers/bpe_model.h"

#include <queue>

#include "common/utf8.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tokenizers/byte_level.h"
#include "tokenizers/json_fields.h"

namespace accel::tok {
namespace {

using Json = nlohmann::json;

// A merge candidate in the queue: lowest rank first, then leftmost (tokenizers word.rs).
struct Candidate {
  uint32_t rank;
  int32_t pos;
  uint32_t id;
  bool operator>(const Candidate& other) const {
    return rank != other.rank ? rank > other.rank : pos > other.pos;
  }
};

// Reads one merge as its two tokens, as written in the file.
absl::StatusOr<std::pair<std::string, std::string>> MergeParts(const JsonDocument& doc, const FieldPath& field,
                                                               const Json& entry) {
  if (entry.is_string()) {
    const std::string& text = entry.get_ref<const std::string&>();
    size_t space = text.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == text.size() ||
        text.find(' ', space + 1) != std::string::npos) {
      return doc.Error(field, absl::StrCat("merge \"", text, "\" must be two tokens separated by one space"));
    }
    return std::make_pair(text.substr(0, space), text.substr(space + 1));
  }
  if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {
    return std::make_pair(entry[0].get<std::string>(), entry[1].get<std::string>());
  }
  return doc.Error(field, "must be a string \"A B\" or a pair [\"A\", \"B\"]");
}

// continuing_subword_prefix and end_of_word_suffix: null or "" only.
absl::Status CheckNoAffix(const JsonDocument& doc, const FieldPath& field) {
  const Json* value = doc.Find(field);
  if (value == nullptr || (value->is_string() && value->get_ref<const std::string&>().empty())) return absl::OkStatus();
  return doc.Error(field, "accel supports BPE models without word prefixes or suffixes (null or \"\")");
}

}  // namespace

std::optional<std::pair<const uint32_t*, size_t>> WordCache::Find(std::string_view word) const {
  auto it = index_.find(absl::string_view(word.data(), word.size()));
  if (it == index_.end()) return std::nullopt;
  return std::make_pair(ids_.data() + it->second.first, static_cast<size_t>(it->second.second));
}

void WordCache::Clear() {
  index_.clear();
  ids_.clear();
  word_bytes_ = 0;
}

void WordCache::Insert(std::string_view word, const uint32_t* ids, size_t count) {
  if (word.size() > kMaxWordBytes) return;
  if (index_.size() >= kMaxWords || word_bytes_ + ids_.size() * sizeof(uint32_t) >= kMaxBytes) Clear();
  word_bytes_ += word.size();
  index_.emplace(std::string(word), std::make_pair(static_cast<uint32_t>(ids_.size()), static_cast<uint32_t>(count)));
  ids_.insert(ids_.end(), ids, ids + count);
}

absl::StatusOr<BpeModel> BpeModel::FromJson(const JsonDocument& doc, const FieldPath& field, bool byte_level) {
  absl::StatusOr<std::string> type = TypeOf(doc, field);
  if (!type.ok()) return type.status();
  if (*type != "BPE") {
    return doc.Error(Child(field, "type"),
                     absl::StrCat("unsupported model type '", *type,
                                  "'; accel reads BPE tokenizer.json files (and SentencePiece tokenizer.model files)"));
  }
  for (const char* affix : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (absl::Status s = CheckNoAffix(doc, Child(field, affix)); !s.ok()) return s;
  }
  BpeModel model;
  model.byte_level_ = byte_level;
  for (auto [flag, name] : {std::pair{&model.ignore_merges_, "ignore_merges"},
                            std::pair{&model.byte_fallback_, "byte_fallback"}, std::pair{&model.fuse_unk_, "fuse_unk"}}) {
    absl::StatusOr<bool> value = OptionalBool(doc, Child(field, name), false);
    if (!value.ok()) return value.status();
    *flag = *value;
  }

  FieldPath vocab_field = Child(field, "vocab");
  const Json* vocab = doc.Find(vocab_field);
  if (vocab == nullptr) return doc.Error(vocab_field, "is missing");
  if (!vocab->is_object()) return doc.Error(vocab_field, "must be an object mapping tokens to ids");
  model.vocab_.reserve(vocab->size());
  for (auto it = vocab->begin(); it != vocab->end(); ++it) {
    if (!it->is_number_integer() || it->get<int64_t>() < 0 || it->get<int64_t>() >= (int64_t{1} << 31)) {
      return doc.Error(Child(vocab_field, it.key()), "must be a token id (an integer from 0)");
    }
    uint32_t id = static_cast<uint32_t>(it->get<int64_t>());
    model.id_limit_ = std::max(model.id_limit_, id + 1);
    if (model.written_.size() <= id) {
      model.written_.resize(id + 1);
      model.has_entry_.resize(id + 1);
    }
    model.written_[id] = it.key();
    model.has_entry_[id] = true;
    if (!byte_level) {
      model.vocab_.emplace(it.key(), id);
    } else if (std::optional<std::string> raw = ByteLevelDecode(it.key())) {
      model.vocab_.emplace(std::move(*raw), id);
    }
  }
  for (int b = 0; b < 256; ++b) {
    model.byte_ids_[b] = model.FindRaw(std::string(1, static_cast<char>(b)));
    model.fallback_ids_[b] = model.FindToken(absl::StrFormat("<0x%02X>", b));
  }

  FieldPath merges_field = Child(field, "merges");
  const Json* merges = doc.Find(merges_field);
  if (merges == nullptr) return doc.Error(merges_field, "is missing");
  if (!merges->is_array()) return doc.Error(merges_field, "must be an array of merges");
  model.merges_.reserve(merges->size());
  for (size_t rank = 0; rank < merges->size(); ++rank) {
    FieldPath entry_field = Child(merges_field, rank);
    absl::StatusOr<std::pair<std::string, std::string>> parts = MergeParts(doc, entry_field, (*merges)[rank]);
    if (!parts.ok()) return parts.status();
    std::optional<uint32_t> left = model.FindToken(parts->first);
    std::optional<uint32_t> right = model.FindToken(parts->second);
    std::optional<uint32_t> merged = model.FindToken(parts->first + parts->second);
    for (auto [id, token] : {std::pair{left, parts->first}, std::pair{right, parts->second},
                             std::pair{merged, parts->first + parts->second}}) {
      if (!id) return doc.Error(entry_field, absl::StrCat("token '", token, "' is not in ", FieldName(vocab_field)));
    }
    // The first (best-ranked) merge of a pair wins, as in tokenizers.
    model.merges_.emplace(PairKey(*left, *right), Merge{static_cast<uint32_t>(rank), *merged});
  }

  FieldPath unk_field = Child(field, "unk_token");
  if (const Json* unk = doc.Find(unk_field)) {
    if (!unk->is_string()) return doc.Error(unk_field, "must be a string or null");
    model.unk_ = model.FindToken(unk->get<std::string>());
  }
  return model;
}

const std::string* BpeModel::TokenOf(uint32_t id) const {
  return id < has_entry_.size() && has_entry_[id] ? &written_[id] : nullptr;
}

std::optional<uint32_t> BpeModel::FindRaw(std::string_view raw) const {
  auto it = vocab_.find(absl::string_view(raw.data(), raw.size()));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

std::optional<uint32_t> BpeModel::FindToken(std::string_view token) const {
  if (!byte_level_) return FindRaw(token);
  std::optional<std::string> raw = ByteLevelDecode(token);
  if (!raw) return std::nullopt;
  return FindRaw(*raw);
}

const BpeModel::Merge* BpeModel::FindMerge(uint32_t left, uint32_t right) const {
  auto it = merges_.find(PairKey(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

void BpeModel::InitialSymbols(std::string_view word, std::vector<uint32_t>& symbols) const {
  bool previous_unk = false;
  auto push_unk = [&] {
    if (!unk_) return;
    if (!(fuse_unk_ && previous_unk)) symbols.push_back(*unk_);
    previous_unk = true;
  };
  if (byte_level_) {
    for (char c : word) {
      if (std::optional<uint32_t> id = byte_ids_[static_cast<unsigned char>(c)]) {
        symbols.push_back(*id);
        previous_unk = false;
      } else {
        push_unk();
      }
    }
    return;
  }
  for (size_t i = 0; i < word.size();) {
    size_t len = std::min(Utf8LengthOfLead(static_cast<unsigned char>(word[i])), word.size() - i);
    std::string_view ch = word.substr(i, len);
    i += len;
    if (std::optional<uint32_t> id = FindRaw(ch)) {
      symbols.push_back(*id);
      previous_unk = false;
      continue;
    }
    bool all_bytes = byte_fallback_;
    for (char c : ch) all_bytes = all_bytes && fallback_ids_[static_cast<unsigned char>(c)].has_value();
    if (all_bytes) {
      for (char c : ch) symbols.push_back(*fallback_ids_[static_cast<unsigned char>(c)]);
      previous_unk = false;
    } else {
      push_unk();
    }
  }
}

void BpeModel::MergeSymbols(std::vector<uint32_t>& symbols) const {
  const int32_t n = static_cast<int32_t>(symbols.size());
  if (n < 2) return;
  std::vector<int32_t> prev(n), next(n);
  for (int32_t i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  std::vector<bool> alive(n, true);
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<Candidate>> queue;
  for (int32_t i = 0; i + 1 < n; ++i) {
    if (const Merge* m = FindMerge(symbols[i], symbols[i + 1])) queue.push({m->rank, i, m->id});
  }
  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    int32_t pos = top.pos;
    if (!alive[pos] || next[pos] < 0) continue;
    int32_t right = next[pos];
    const Merge* m = FindMerge(symbols[pos], symbols[right]);
    if (m == nullptr || m->id != top.id || m->rank != top.rank) continue;
    symbols[pos] = m->id;
    alive[right] = false;
    next[pos] = next[right];
    if (next[pos] >= 0) prev[next[pos]] = pos;
    if (prev[pos] >= 0) {
      if (const Merge* before = FindMerge(symbols[prev[pos]], symbols[pos])) queue.push({before->rank, prev[pos], before->id});
    }
    if (next[pos] >= 0) {
      if (const Merge* after = FindMerge(symbols[pos], symbols[next[pos]])) queue.push({after->rank, pos, after->id});
    }
  }
  int32_t kept = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (alive[i]) symbols[kept++] = symbols[i];
  }
  symbols.resize(kept);
}

void BpeModel::Encode(std::string_view word, WordCache& cache, std::vector<uint32_t>& out) const {
  if (word.empty()) return;
  if (auto cached = cache.Find(word)) {
    out.insert(out.end(), cached->first, cached->first + cached->second);
    return;
  }
  if (ignore_merges_) {
    if (std::optional<uint32_t> id = FindRaw(word)) {
      out.push_back(*id);
      cache.Insert(word, &*id, 1);
      return;
    }
  }
  std::vector<uint32_t> symbols;
  symbols.reserve(word.size());
  InitialSymbols(word, symbols);
  MergeSymbols(symbols);
  out.insert(out.end(), symbols.begin(), symbols.end());
  cache.Insert(word, symbols.data(), symbols.size());
}

}  // namespace accel::tok
